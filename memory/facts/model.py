"""The frozen results of fact extraction: facts kept and clauses rejected."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ExtractedFact", "Extraction", "Ignored"]


@dataclass(frozen=True)
class ExtractedFact:
    """One constraint or preference: a normalised key, its value, kind, source clause and rule id."""

    key: str
    value: str
    kind: str
    text: str
    rule: str


@dataclass(frozen=True)
class Ignored:
    """A clause that looked like a constraint but was rejected, with a human-readable reason."""

    text: str
    reason: str


@dataclass(frozen=True)
class Extraction:
    """Everything extracted from one message."""

    facts: tuple[ExtractedFact, ...]
    ignored: tuple[Ignored, ...]
