"""What context assembly takes and answers: the request, every action taken, and the report of every token."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from memory.context.budget import Budget

__all__ = ["ACTION_KINDS", "Action", "ActionKind", "ContextReport", "ContextRequest", "ContextResult", "SummaryInUse"]

ActionKind = Literal["pruned", "offloaded", "processed", "dropped_ephemeral", "tools_selected", "compacted",
                     "truncated"]
ACTION_KINDS: tuple[ActionKind, ...] = ("pruned", "offloaded", "processed", "dropped_ephemeral", "tools_selected",
                                        "compacted", "truncated")


@dataclass(frozen=True)
class ContextRequest:
    """One agent turn to fit: its messages (OpenAI chat format), tools and window; None means the configured
    default ([context] in config.toml)."""

    namespace: str
    messages: Sequence[Any]
    window: int
    task_id: str | None = None
    output_reserve: int | None = None
    safety_margin: float | None = None
    allocation: str | Mapping[str, float] | None = None
    system: str | None = None
    tools: Sequence[Any] | None = None
    query: str | None = None
    recall: bool = True
    filters: Mapping[str, Any] | None = None
    min_score: float | None = None
    ephemeral_tools: Sequence[str] | None = None
    processors: Mapping[str, str] | None = None
    parent_task_id: str | None = None
    read_tool: bool | None = None


@dataclass(frozen=True)
class SummaryInUse:
    """The history summary this turn sends: its stored version (GET /v1/tasks/{task_id}/summaries/{version}),
    the messages it covers, its tokens and theirs, and whether this turn wrote it."""

    version: int
    first: int
    last: int
    tokens: int
    covered_tokens: int
    created: bool
    summariser: str = "extractive"


@dataclass(frozen=True)
class Action:
    """One change made to the turn. `index` is the message's place in the request (None for the tool set);
    `key` the task item holding the whole original; `detail` the processor, or the tools left out."""

    kind: ActionKind
    index: int | None
    tokens_before: int
    tokens_after: int
    key: str | None = None
    tool: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class ContextReport:
    """Where every token went: the budget, tokens per category (they add up to `tokens["total"]`), the grants
    of the shared categories, every action, the hash of the cache-stable prefix, and warnings. `as_given` is true
    when the whole turn fitted under the watermark and went as the agent gave it (nothing cut)."""

    budget: Budget
    tokens: Mapping[str, int]
    grants: Mapping[str, int]
    actions: tuple[Action, ...]
    prefix_hash: str
    task_id: str
    retrieved: int = 0
    warnings: tuple[str, ...] = ()
    tools_left_out: tuple[str, ...] = field(default=())
    summary: SummaryInUse | None = None
    as_given: bool = False


@dataclass(frozen=True)
class ContextResult:
    """The messages and tools to send, in order, and the report."""

    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...]
    report: ContextReport
