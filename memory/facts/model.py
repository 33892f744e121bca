"""The frozen results of fact extraction: facts kept, clauses rejected, and what became of every clause."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Clause", "ExtractedFact", "Extraction", "Ignored"]


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
    """A clause that yielded no fact, with a human-readable reason."""

    text: str
    reason: str


@dataclass(frozen=True)
class Clause:
    """One sentence of a message (or one clause, where the sentence was cut) and its facts, or why it has none."""

    text: str
    facts: tuple[ExtractedFact, ...]
    reason: str | None = None


@dataclass(frozen=True)
class Extraction:
    """Everything extracted from one message: its facts, the clauses without one, and every clause in order."""

    facts: tuple[ExtractedFact, ...]
    ignored: tuple[Ignored, ...]
    clauses: tuple[Clause, ...] = ()
