"""What every tier hands to recall: one candidate for the context block, in a type below the tiers and recall."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal

from memory.clock import parse_iso
from memory.errors import ValidationError

__all__ = ["Snippet", "Tier"]

Tier = Literal["fact", "task", "experience"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Snippet:
    """A candidate for the context block, produced by one tier.

    `score` is in 0..1 and comparable across tiers (pinned facts score 1.0); `why` holds each retriever's
    rank and score; `tokens` is the cl100k count of `text`; `body_tokens`, when the tier stored it, is
    `bullet.body_cost(text)`, what the whole text adds to its bullet in the block.
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
