"""Request and response bodies of /v1/tasks."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from api.schemas.base import Kind, Namespace, RequestModel, TaskId
from memory.task import MAX_TTL_S, AddedItem, Page, SummaryVersion, TaskItem

__all__ = [
    "PromoteRequest", "TaskItemAdded", "TaskItemCreate", "TaskItemList", "TaskItemPublic", "TaskPage",
    "TaskSummaryBrief", "TaskSummaryList", "TaskSummaryPublic",
]


class TaskItemCreate(RequestModel):
    """A scratch item for a task."""

    namespace: Namespace
    kind: Kind
    text: str = Field(min_length=1)
    ephemeral: bool = False
    # strict: a JSON true, "5" or 5.0 is not a number of seconds (lax mode read true as 1 s)
    ttl_s: int | None = Field(default=None, gt=0, le=MAX_TTL_S, strict=True)
    parent_task_id: TaskId | None = None
    metadata: dict[str, Any] = {}


class TaskItemAdded(BaseModel):
    """The new item's key; `offloaded` when recall will show only its head."""

    key: str
    offloaded: bool
    tokens: int
    expires_at: str

    @classmethod
    def of(cls, added: AddedItem) -> TaskItemAdded:
        """From a library result."""
        return cls(key=added.key, offloaded=added.offloaded, tokens=added.tokens, expires_at=added.expires_at)


class TaskItemPublic(BaseModel):
    """A stored item."""

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
    metadata: dict[str, Any]

    @classmethod
    def of(cls, item: TaskItem) -> TaskItemPublic:
        """From a library record."""
        return cls(key=item.key, task_id=item.task_id, kind=item.kind, text=item.text, tokens=item.tokens,
                   created_at=item.created_at, expires_at=item.expires_at, ephemeral=item.ephemeral,
                   offloaded=item.offloaded, parent_task_id=item.parent_task_id, metadata=dict(item.metadata))


class TaskItemList(BaseModel):
    """A task's live items, oldest first."""

    items: list[TaskItemPublic]


class TaskPage(BaseModel):
    """An item's full text, or one token-sized page of it."""

    key: str
    text: str
    page: int
    pages: int
    tokens: int
    total_tokens: int

    @classmethod
    def of(cls, page: Page) -> TaskPage:
        """From a library page."""
        return cls(key=page.key, text=page.text, page=page.page, pages=page.pages, tokens=page.tokens,
                   total_tokens=page.total_tokens)


class PromoteRequest(RequestModel):
    """Items to copy into experience memory."""

    namespace: Namespace
    keys: list[str] = Field(min_length=1)
    project: str | None = None
    tags: list[str] = []


class TaskSummaryBrief(BaseModel):
    """One version of a task's compaction summary, without its text: `dropped` counts what it left out."""

    version: int
    created_at: str
    first: int
    last: int
    tokens: int
    covered_tokens: int
    dropped: int
    summariser: str

    @classmethod
    def of(cls, summary: SummaryVersion) -> TaskSummaryBrief:
        """From a library record."""
        return cls(version=summary.version, created_at=summary.created_at, first=summary.first, last=summary.last,
                   tokens=summary.tokens, covered_tokens=summary.covered_tokens, dropped=len(summary.dropped),
                   summariser=summary.summariser)


class TaskSummaryList(BaseModel):
    """Every version of a task's compaction summary, oldest first."""

    summaries: list[TaskSummaryBrief]


class TaskSummaryPublic(BaseModel):
    """One whole version of a task's compaction summary: messages[first] to messages[last] as `text`."""

    version: int
    created_at: str
    first: int
    last: int
    digest: str
    text: str
    tokens: int
    covered_tokens: int
    sections: dict[str, list[str]]
    dropped: list[dict[str, str]]
    references: list[str]
    summariser: str

    @classmethod
    def of(cls, summary: SummaryVersion) -> TaskSummaryPublic:
        """From a library record."""
        return cls(version=summary.version, created_at=summary.created_at, first=summary.first, last=summary.last,
                   digest=summary.digest, text=summary.text, tokens=summary.tokens,
                   covered_tokens=summary.covered_tokens,
                   sections={name: list(entries) for name, entries in summary.sections.items()},
                   dropped=[dict(entry) for entry in summary.dropped], references=list(summary.references),
                   summariser=summary.summariser)
