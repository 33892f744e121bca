"""The answers of the stores' calls (facts, memories, documents, ingest jobs, tasks, deletions) as frozen dataclasses.

Field names are the REST answer's own (docs/api.md); `raw` holds the JSON object each was built from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memory_client._decode import raw_field

__all__ = [
    "Deleted", "DeletedDocument", "Document", "DocumentList", "DocumentResult", "Fact", "FactChange", "FactList",
    "Ignored", "Job", "JobList", "MemoriesStored", "NamespaceDeleted", "Outcome", "Summary", "SummaryBrief",
    "SummaryList", "TaskItem", "TaskItemAdded", "TaskItemList", "TaskPage", "ThisTurn",
]


@dataclass(frozen=True)
class Fact:
    """One version of a fact; a later version of the same key supersedes it."""

    id: str
    key: str
    value: str
    kind: str
    text: str
    pinned: bool
    version: int
    updated_at: str
    scope: str = "global"
    created_at: str | None = None
    superseded_at: str | None = None
    superseded_by: str | None = None
    source: str | None = None
    rule: str | None = None
    confidence: float = 1.0
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class Ignored:
    """A sentence or clause that stored nothing, and why."""

    text: str
    reason: str
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class Outcome:
    """What one sentence of the message became: stored, superseded, request or ignored."""

    text: str
    outcome: str
    reason: str | None = None
    facts: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class ThisTurn:
    """A constraint said for this request only: apply it to this answer."""

    key: str
    value: str
    kind: str
    text: str
    confidence: float
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class FactChange:
    """POST /v1/facts and /v1/facts/pin: what was stored, superseded and ignored, and every sentence's outcome."""

    stored: tuple[Fact, ...]
    superseded: tuple[Fact, ...]
    ignored: tuple[Ignored, ...]
    outcomes: tuple[Outcome, ...] = ()
    this_turn: tuple[ThisTurn, ...] = ()
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class FactList:
    """GET /v1/facts (current facts, pinned first) or a fact's history (every version, oldest first)."""

    facts: tuple[Fact, ...]
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class Deleted:
    """How many rows a delete removed (a fact's versions, a namespace's facts, a task's items)."""

    deleted: int
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class MemoriesStored:
    """POST /v1/memories: how many turns were stored, their ids, and how many facts the user's turns yielded."""

    stored: int
    ids: tuple[str, ...]
    facts: int = 0
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class DocumentResult:
    """What an ingest did: the document's id, its chunks and `created`, `updated` or `unchanged`."""

    doc_id: str
    chunks: int
    status: str
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class Document:
    """A stored document or memory (`kind` says which)."""

    doc_id: str
    kind: str
    title: str | None
    source: str | None
    version: int
    chunks: int
    tokens: int
    project: str | None
    tags: tuple[str, ...]
    metadata: Mapping[str, Any]
    created_at: str
    updated_at: str
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class DocumentList:
    """GET /v1/documents: the namespace's documents and memories, newest first (one page with `limit`), and how
    many there are in all (None from a service that predates paging)."""

    documents: tuple[Document, ...]
    total: int | None = None
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class DeletedDocument:
    """DELETE /v1/documents/{doc_id}: the id of the document removed everywhere."""

    deleted: str
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class Job:
    """An ingest job (a document too large to store within its request): its state, stage and progress."""

    job_id: str
    namespace: str
    state: str
    stage: str
    done: int
    total: int
    chars: int
    created_at: str
    updated_at: str
    doc_id: str | None = None
    chunks: int | None = None
    status: str | None = None
    error: str | None = None
    detail: str | None = None
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class JobList:
    """GET /v1/jobs: the namespace's ingest jobs, newest first."""

    jobs: tuple[Job, ...]
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class TaskItemAdded:
    """POST /v1/tasks/{task_id}/items: the new item's key; `offloaded` when recall will show only its head."""

    key: str
    offloaded: bool
    tokens: int
    expires_at: str | None = None
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class TaskItem:
    """A live item of a task."""

    key: str
    task_id: str
    kind: str
    text: str
    tokens: int
    created_at: str
    expires_at: str
    ephemeral: bool
    offloaded: bool
    parent_task_id: str | None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class TaskItemList:
    """GET /v1/tasks/{task_id}/items: the task's live items, oldest first."""

    items: tuple[TaskItem, ...]
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class TaskPage:
    """An item's full text, or one page of it (`page` of `pages`)."""

    key: str
    text: str
    page: int
    pages: int
    tokens: int
    total_tokens: int
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class SummaryBrief:
    """One version of a task's compaction summary without its text; `dropped` counts what it left out."""

    version: int
    created_at: str
    first: int
    last: int
    tokens: int
    covered_tokens: int
    dropped: int
    summariser: str
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class SummaryList:
    """GET /v1/tasks/{task_id}/summaries: every version, oldest first."""

    summaries: tuple[SummaryBrief, ...]
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class Summary:
    """One whole version of a task's compaction summary: messages[first] to messages[last] as `text`."""

    version: int
    created_at: str
    first: int
    last: int
    digest: str
    text: str
    tokens: int
    covered_tokens: int
    sections: Mapping[str, tuple[str, ...]]
    dropped: tuple[Mapping[str, str], ...]
    references: tuple[str, ...]
    summariser: str
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class NamespaceDeleted:
    """DELETE /v1/namespaces/{namespace}: what was forgotten (0 everywhere for a namespace that held nothing)."""

    facts: int
    task_items: int
    documents: int
    raw: Mapping[str, Any] = raw_field()
