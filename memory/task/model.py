"""What the task tier hands out: frozen records of items, additions, pages and compaction summaries."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["KINDS", "AddedItem", "Page", "SummaryVersion", "TaskInfo", "TaskItem"]

# The kinds an item may have; `result` is special: it is the one kind a parent task sees of its sub-tasks.
KINDS: tuple[str, ...] = ("tool_result", "note", "plan", "todo", "result", "observation", "error", "summary")

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class TaskItem:
    """One stored item with its full text; `expires_at` is the earlier of its own and its task's expiry."""

    namespace: str
    task_id: str
    key: str
    kind: str
    text: str
    tokens: int
    created_at: str
    expires_at: str
    ephemeral: bool = False
    offloaded: bool = False
    parent_task_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True)
class TaskInfo:
    """A live task as listed: its parent, when it began and expires, and its live items' count and tokens."""

    namespace: str
    task_id: str
    parent_task_id: str | None
    created_at: str
    expires_at: str
    items: int
    tokens: int
    offloaded: int


@dataclass(frozen=True)
class AddedItem:
    """The answer to an add: the key to read the item by, whether recall shows only its head, its size."""

    key: str
    task_id: str
    offloaded: bool
    tokens: int
    expires_at: str


@dataclass(frozen=True)
class Page:
    """One token-sized page of an item's text; the pages of one size concatenate back to the full text."""

    key: str
    text: str
    page: int
    pages: int
    tokens: int
    total_tokens: int


@dataclass(frozen=True)
class SummaryVersion:
    """One version of a task's compaction summary: messages[first..last] (both included) as `text`.

    `digest` is the caller's hash of the covered messages, `covered_tokens` their size; `sections` maps a section
    name to its items, `dropped` lists what was left out (`{"text", "reason"}`), `references` the task items that
    hold whole texts, `summariser` is "extractive" or "model:<name>".
    """

    namespace: str
    task_id: str
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
