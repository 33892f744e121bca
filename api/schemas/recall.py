"""Request and response bodies of /v1/recall."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from api.schemas.base import Namespace, RequestModel, TaskId
from memory.recall import RecallResult

__all__ = ["RecallFilters", "RecallItemPublic", "RecallPublic", "RecallRequest"]


class RecallFilters(RequestModel):
    """Restrictions on experience search; `project` also brings in facts scoped `project:<name>`."""

    project: str | None = None
    tags: Annotated[list[str], Field(max_length=256)] | str = []
    source: str | None = None
    kind: Literal["document", "memory"] | None = None
    updated_from: str | None = Field(default=None, description="ISO 8601; chunks updated at or after it")
    updated_to: str | None = Field(default=None, description="ISO 8601; chunks updated at or before it")


class RecallRequest(RequestModel):
    """One agent turn: the question, the tokens it can spare, and optional task, filters and threshold."""

    unstored = frozenset({"query"})
    namespace: Namespace
    query: str
    budget: int | None = Field(default=None, strict=True,
                               description="tokens (cl100k); the configured default when omitted")
    task_id: TaskId | None = None
    filters: RecallFilters | None = None
    min_score: float | None = Field(default=None, ge=0.0, le=1.0)


class RecallItemPublic(BaseModel):
    """One snippet of the answer."""

    tier: str
    id: str
    text: str
    score: float
    tokens: int
    pinned: bool
    source: str | None
    updated_at: str | None
    freshness: str | None
    trimmed: bool
    low_confidence: bool
    doc_id: str | None = None
    key: str | None = None
    metadata: dict[str, Any] = {}
    why: dict[str, Any] = {}


class RecallPublic(BaseModel):
    """The prompt-ready block and its items; `used_tokens` is the exact cl100k count of `rendered`."""

    items: list[RecallItemPublic]
    used_tokens: int
    budget: int
    rendered: str
    omitted: dict[str, Any]
    warnings: list[str]

    @classmethod
    def of(cls, result: RecallResult) -> RecallPublic:
        """From a library result."""
        items = []
        for item in result.items:
            s = item.snippet
            extra: dict[str, Any] = {}
            if s.tier == "experience":
                extra["doc_id"] = s.doc_id
            if s.tier == "task":
                extra["key"] = s.key
            items.append(RecallItemPublic(
                tier=s.tier, id=s.id, text=item.text, score=round(s.score, 6), tokens=item.tokens, pinned=s.pinned,
                source=s.source, updated_at=s.updated_at, freshness=item.freshness, trimmed=item.trimmed,
                low_confidence=item.low_confidence, metadata=dict(s.metadata), why=_plain(s.why), **extra,
            ))
        o = result.omitted
        omitted = {"below_threshold": o.below_threshold, "over_budget": o.over_budget, "duplicate": o.duplicate,
                   "pinned_over_budget": list(o.pinned_over_budget)}
        return cls(items=items, used_tokens=result.used_tokens, budget=result.budget, rendered=result.rendered,
                   omitted=omitted, warnings=list(result.warnings))


def _plain(value: Any) -> Any:
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
