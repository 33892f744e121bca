"""/ui/fragments/tasks: a namespace's live tasks, one task's items by kind with their expiry, an item read page by
page, and the task's compaction summaries."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from api.deps import AccessDep, MemoryDep, NamespaceQuery
from api.ui.render import guard, render
from api.ui.views import by_kind

router = APIRouter(prefix="/ui/fragments/tasks", include_in_schema=False, dependencies=[Depends(guard)])


@router.get("")
def tasks(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
          task_id: str = "") -> HTMLResponse:
    """The live tasks, newest first, with their items' count, tokens and expiry (and one task opened)."""
    checked = access.namespace(namespace)
    return render(request, "tasks.html", namespace=checked, tasks=memory.tasks.list_tasks(checked), task_id=task_id)


@router.get("/items")
def items(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
          task_id: str) -> HTMLResponse:
    """One task's live items grouped by kind, and its compaction summaries."""
    checked = access.namespace(namespace)
    listed = memory.tasks.list_items(checked, task_id)
    return render(request, "task_items.html", namespace=checked, task_id=task_id, groups=by_kind(listed),
                  summaries=memory.tasks.summaries(checked, task_id))


@router.get("/read")
def read(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery, task_id: str, key: str,
         page: Annotated[int, Query(ge=1)] = 1,
         page_tokens: Annotated[int | None, Query(ge=1, le=1_000_000)] = None) -> HTMLResponse:
    """One page of an item's full text (tasks.offload_tokens a page unless told), with the way to the next."""
    checked = access.namespace(namespace)
    shown = memory.tasks.read(checked, task_id, key, page=page, page_tokens=page_tokens)
    return render(request, "task_page.html", namespace=checked, task_id=task_id, shown=shown,
                  page_tokens=page_tokens)
