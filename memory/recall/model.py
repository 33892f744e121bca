"""What the tiers hand to recall, and what recall answers: frozen dataclasses shared across the library."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal

from memory.clock import parse_iso
from memory.errors import ValidationError

__all__ = ["Tier", "Snippet", "RecallItem", "Omitted", "RecallResult"]

Tier = Literal["fact", "task", "experience"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Snippet:
    """A candidate for the context block, produced by one tier.

    `score` is in 0..1 and comparable across tiers (pinned facts score 1.0); `why` holds each retriever's
    rank and score; `tokens` is the cl100k count of `text`; `body_tokens`, when the tier stored it, is
    `render.body_cost(text)`, what the whole text adds to its bullet in the block.
    """

    tier: Tier
    id: str
    text: str
    score: float
    tokens: int
    source: str | None = None
    updated_at: str | None = None
    pinned: bool = False
    doc_id: str | None = None
    key: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    why: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    body_tokens: int | None = None

    @cached_property
    def updated(self) -> datetime | None:
        """`updated_at` as a UTC datetime; None when absent or malformed (parsed once: packing asks often)."""
        if not self.updated_at:
            return None
        try:
            return parse_iso(self.updated_at, "updated_at")
        except ValidationError:
            # A tier's malformed timestamp costs the snippet its date, not the whole recall.
            return None


@dataclass(frozen=True)
class RecallItem:
    """A snippet as returned by recall: possibly trimmed, with its freshness tag.

    `text` is what the block shows (ending in " […]" when trimmed); `tokens` is what its bullet line costs in
    the rendered block, so the items' tokens, the section headers and any restated constraints make up
    `used_tokens` exactly.
    """

    snippet: Snippet
    text: str
    tokens: int
    freshness: str | None
    trimmed: bool = False
    low_confidence: bool = False


@dataclass(frozen=True)
class Omitted:
    """Counts of candidates left out, by reason (`empty`: blank text); `pinned_over_budget` names pinned ones."""

    below_threshold: int = 0
    over_budget: int = 0
    duplicate: int = 0
    pinned_over_budget: tuple[str, ...] = ()
    empty: int = 0


@dataclass(frozen=True)
class RecallResult:
    """The answer to one recall: items by descending score and the rendered block that fits the budget."""

    items: tuple[RecallItem, ...]
    rendered: str
    used_tokens: int
    budget: int
    omitted: Omitted
    warnings: tuple[str, ...] = ()
