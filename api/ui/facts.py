"""/ui/fragments/facts: facts in force, a fact's versions, pin / unpin / delete, and a message's extraction
previewed (nothing stored) and then saved."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from api.deps import AccessDep, MemoryDep, NamespaceQuery
from api.ui.render import FormField, guard, optional, render
from memory.facts import FactChange
from memory.service import Memory

router = APIRouter(prefix="/ui/fragments/facts", include_in_schema=False, dependencies=[Depends(guard)])

_SOURCE = "web inspector"  # what a fact saved here names as its source


def _facts(request: Request, memory: Memory, namespace: str, *, notice: str = "",
           change: FactChange | None = None, saved: str = "") -> HTMLResponse:
    return render(request, "facts.html", namespace=namespace, facts=memory.facts.list_facts(namespace), notice=notice,
                  change=change, saved=saved)


@router.get("")
def facts(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> HTMLResponse:
    """Facts in force, pinned first, and the box that previews what the rules read in a message."""
    return _facts(request, memory, access.namespace(namespace))


@router.get("/history")
def history(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
            fact_id: str) -> HTMLResponse:
    """Every version of the fact's key, oldest first."""
    checked = access.namespace(namespace)
    return render(request, "fact_history.html", namespace=checked, versions=memory.facts.history(checked, fact_id),
                  fact_id=fact_id)


def _set_pinned(request: Request, memory: Memory, namespace: str, fact_id: str, pinned: bool) -> HTMLResponse:
    record = memory.facts.set_pinned(namespace, fact_id, pinned=pinned)
    done = "Pinned" if pinned else "Unpinned"
    return _facts(request, memory, namespace, notice=f"{done} {record.key} (now version {record.version}).")


@router.post("/pin")
def pin(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
        fact_id: str) -> HTMLResponse:
    """Pin the fact (a new version), then the facts again."""
    return _set_pinned(request, memory, access.namespace(namespace), fact_id, True)


@router.post("/unpin")
def unpin(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
          fact_id: str) -> HTMLResponse:
    """Unpin the fact (a new version), then the facts again."""
    return _set_pinned(request, memory, access.namespace(namespace), fact_id, False)


@router.post("/delete")
def delete(request: Request, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
           fact_id: str) -> HTMLResponse:
    """Hard-delete the fact and every version of its key, then the facts again."""
    checked = access.namespace(namespace)
    removed = memory.facts.delete(checked, fact_id)
    return _facts(request, memory, checked, notice=f"Deleted {fact_id} and its key's {removed} version(s).")


@router.post("/preview")
def preview(request: Request, memory: MemoryDep, access: AccessDep, namespace: FormField,
            text: FormField, scope: FormField = "global", task_id: FormField = "") -> HTMLResponse:
    """What saving the message would do, sentence by sentence; nothing is stored."""
    checked = access.namespace(namespace)
    change = memory.facts.preview(checked, text, scope=optional(scope) or "global", task_id=optional(task_id),
                                  source=_SOURCE)
    return render(request, "fact_outcomes.html", namespace=checked, change=change, text=text, scope=scope,
                  task_id=task_id, preview=True)


@router.post("/observe")
def observe(request: Request, memory: MemoryDep, access: AccessDep, namespace: FormField,
            text: FormField, scope: FormField = "global", task_id: FormField = "") -> HTMLResponse:
    """Store what the rules read in the message (as POST /v1/facts does), then the facts with the outcomes."""
    checked = access.namespace(namespace)
    change = memory.facts.observe(checked, text, scope=optional(scope) or "global", task_id=optional(task_id),
                                  source=_SOURCE)
    return _facts(request, memory, checked, change=change, saved=text)
