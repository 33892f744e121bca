"""The answers of the per-turn calls (recall, context, search) and of /healthz, as frozen dataclasses.

Field names are the REST answer's own (docs/api.md); `raw` holds the JSON object each was built from, which also
carries any field a newer service added.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memory_client._decode import raw_field

__all__ = [
    "Context", "ContextAction", "ContextBudget", "ContextReport", "ContextTokens", "Health", "Omitted", "Rank",
    "Recall", "RecallItem", "Search", "SearchHit", "SummaryInUse",
]



@dataclass(frozen=True)
class Health:
    """GET /healthz: `status` always; the rest only for a key that may see it (or with no keys configured)."""

    status: str
    backend: str | None = None
    model: str | None = None
    dimension: int | None = None
    tokenizer: str | None = None
    store: str | None = None
    chroma: str | None = None
    counts: Mapping[str, int] = field(default_factory=dict)
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class RecallItem:
    """One snippet of a recall: a fact, a task item or an experience chunk, with how it got its score (`why`)."""

    tier: str
    id: str
    text: str
    score: float
    tokens: int
    pinned: bool
    source: str | None
    updated_at: str | None
    freshness: str | None
    trimmed: bool = False
    low_confidence: bool = False
    doc_id: str | None = None
    key: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    why: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class Omitted:
    """Recall candidates left out, by reason, and the ids of pinned facts the budget could not hold."""

    below_threshold: int
    over_budget: int
    duplicate: int
    pinned_over_budget: tuple[str, ...] = ()
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class Recall:
    """POST /v1/recall: the items in descending score and `rendered`, the block whose cl100k count is used_tokens."""

    items: tuple[RecallItem, ...]
    used_tokens: int
    budget: int
    rendered: str
    omitted: Omitted
    warnings: tuple[str, ...] = ()
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class ContextBudget:
    """The window and what it leaves: available = floor((window - output_reserve) * (1 - margin))."""

    window: int
    output_reserve: int
    margin: float
    available: int
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class ContextTokens:
    """Tokens of what is sent, by category; they add up to `total`, which is at most the budget's `available`."""

    system: int
    tools: int
    constraints: int
    retrieval: int
    history: int
    tool_results: int
    current: int
    total: int
    summary: int = 0
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class ContextAction:
    """One change made to the turn (pruned, offloaded, processed, compacted, truncated, ...)."""

    kind: str
    index: int | None
    tokens_before: int
    tokens_after: int
    key: str | None
    tool: str | None
    detail: str | None
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class SummaryInUse:
    """The compaction summary sent with this turn (read it whole with `read_summary`)."""

    version: int
    first: int
    last: int
    tokens: int
    covered_tokens: int
    created: bool
    summariser: str
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class ContextReport:
    """Where every token of the turn went, what was changed, and the hash of the cache-stable prefix."""

    budget: ContextBudget
    tokens: ContextTokens
    grants: Mapping[str, int]
    actions: tuple[ContextAction, ...]
    prefix_hash: str
    task_id: str
    retrieved: int
    warnings: tuple[str, ...] = ()
    tools_left_out: tuple[str, ...] = ()
    summary: SummaryInUse | None = None
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class Context:
    """POST /v1/context: the OpenAI chat messages and tool schemas to send this turn, in order, and the report."""

    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...]
    report: ContextReport
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class Rank:
    """Where one retriever placed a search result: its 1-based rank and its own score."""

    rank: int
    score: float
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class SearchHit:
    """One search result: the chunk, its fused score and each retriever's rank (None where it missed it)."""

    id: str
    doc_id: str | None
    text: str
    score: float
    dense: Rank | None
    lexical: Rank | None
    raw: Mapping[str, Any] = raw_field()


@dataclass(frozen=True)
class Search:
    """POST /v1/search: the analysed query, the fusion weights it got, and the results best first."""

    query: str
    terms: tuple[str, ...]
    cjk_share: float
    temporal: bool
    dense_weight: float
    lexical_weight: float
    results: tuple[SearchHit, ...]
    raw: Mapping[str, Any] = raw_field()
