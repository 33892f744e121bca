"""/v1/tasks: scratch items, reading offloaded items back, compaction summaries, ending a task, promoting items."""

from __future__ import annotations

from fastapi import APIRouter, Path, Query

from api.deps import AccessDep, MemoryDep, NamespaceQuery, TaskIdPath
from api.schemas.experience import DocumentResultPublic
from api.schemas.tasks import (
    PromoteRequest,
    TaskItemAdded,
    TaskItemCreate,
    TaskItemList,
    TaskItemPublic,
    TaskPage,
    TaskSummaryBrief,
    TaskSummaryList,
    TaskSummaryPublic,
)

router = APIRouter(prefix="/v1/tasks", tags=["tasks"])


@router.post("/{task_id}/items", response_model=TaskItemAdded)
def add_item(task_id: TaskIdPath, body: TaskItemCreate, memory: MemoryDep, access: AccessDep) -> TaskItemAdded:
    """Add an item; one above tasks.offload_tokens is kept whole and recalled as a head plus its key."""
    namespace = access.namespace(body.namespace)
    added = memory.tasks.add(namespace, task_id, body.kind, body.text, ephemeral=body.ephemeral, ttl_s=body.ttl_s,
                             parent_task_id=body.parent_task_id, metadata=body.metadata)
    return TaskItemAdded.of(added)


@router.get("/{task_id}/items", response_model=TaskItemList)
def list_items(task_id: TaskIdPath, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> TaskItemList:
    """The task's live items, oldest first (one-shot items are not used up by listing)."""
    items = memory.tasks.list_items(access.namespace(namespace), task_id)
    return TaskItemList(items=[TaskItemPublic.of(i) for i in items])


@router.get("/{task_id}/items/{key:path}", response_model=TaskPage)
def read_item(task_id: TaskIdPath, key: str, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
              page: int | None = Query(default=None, ge=1),
              page_tokens: int | None = Query(default=None, ge=1, le=1_000_000)) -> TaskPage:
    """An item's full text, or with `page` one page of `page_tokens` tokens."""
    return TaskPage.of(memory.tasks.read(access.namespace(namespace), task_id, key, page=page,
                                         page_tokens=page_tokens))


@router.get("/{task_id}/summaries", response_model=TaskSummaryList)
def list_summaries(task_id: TaskIdPath, memory: MemoryDep, access: AccessDep,
                   namespace: NamespaceQuery) -> TaskSummaryList:
    """Every version of the task's compaction summary, oldest first, without their text."""
    versions = memory.tasks.summaries(access.namespace(namespace), task_id)
    return TaskSummaryList(summaries=[TaskSummaryBrief.of(v) for v in versions])


@router.get("/{task_id}/summaries/{version}", response_model=TaskSummaryPublic)
def read_summary(task_id: TaskIdPath, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
                 version: int = Path(ge=1)) -> TaskSummaryPublic:
    """One whole version of the task's compaction summary: its text, sections, what it dropped and referenced."""
    return TaskSummaryPublic.of(memory.tasks.summary(access.namespace(namespace), task_id, version))


@router.delete("/{task_id}")
def end_task(task_id: TaskIdPath, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> dict[str, int]:
    """End the task: remove it, its sub-tasks and all their items."""
    return {"deleted": memory.tasks.end_task(access.namespace(namespace), task_id)}


@router.post("/{task_id}/promote", response_model=list[DocumentResultPublic])
def promote_items(task_id: TaskIdPath, body: PromoteRequest, memory: MemoryDep,
                  access: AccessDep) -> list[DocumentResultPublic]:
    """Copy chosen items into experience memory (nothing is promoted by default)."""
    namespace = access.namespace(body.namespace)
    results = memory.promote(namespace, task_id, body.keys, project=body.project, tags=tuple(body.tags))
    return [DocumentResultPublic(doc_id=r.doc_id, chunks=r.chunks, status=r.status) for r in results]
