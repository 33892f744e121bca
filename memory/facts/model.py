"""The frozen results of fact extraction: facts kept, clauses rejected, and what became of every clause."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from memory.facts.sentences import has_cjk

__all__ = ["Clause", "ExtractedFact", "Extraction", "Ignored", "Lifetime"]

# How long a constraint holds: from now on (profile statements and preferences always), or for the request it
# was said in ("write a 300-word summary without commas"), which must not shape every later answer.
Lifetime = Literal["standing", "request"]


@dataclass(frozen=True)
class ExtractedFact:
    """One constraint or preference: a normalised key, its value, kind, source clause, rule id and lifetime.

    `confidence` is 1.0 for a rule's fact and the detector's score for one the model-assisted path found.
    """

    key: str
    value: str
    kind: str
    text: str
    rule: str
    lifetime: Lifetime = "standing"
    confidence: float = 1.0

    def naming_its_subject(self) -> ExtractedFact:
        """The fact shown as what it is about and its value ("Actually, make that 1000 yuan." -> "budget: 1000 CNY";
        "put us all in economy" -> "cabin: economy"): a clause shown on its own, pinned into a context or cut from
        a longer request, often leaves its subject unsaid. A fact whose value names its subject ("tabs in YAML")
        keeps the user's words."""
        subject, value = self.key.split(":", 1)[-1], self.value
        if not subject or subject.casefold() in value.casefold() or value.casefold() in subject.casefold():
            return self
        return replace(self, text=f"{subject}{'：' if has_cjk(subject + value) else ': '}{value}")


@dataclass(frozen=True)
class Ignored:
    """A clause that yielded no fact, with a human-readable reason."""

    text: str
    reason: str


@dataclass(frozen=True)
class Clause:
    """One sentence of a message (or one clause, where the sentence was cut) and its facts, or why it has none.

    `lifetime` is how long an instruction said in it holds (its sentence's reading), fact or not: the
    model-assisted path (memory.facts.assisted) gives it to the facts it finds in the clause.
    """

    text: str
    facts: tuple[ExtractedFact, ...]
    reason: str | None = None
    lifetime: Lifetime = "standing"


@dataclass(frozen=True)
class Extraction:
    """Everything extracted from one message: its facts, the clauses without one, and every clause in order."""

    facts: tuple[ExtractedFact, ...]
    ignored: tuple[Ignored, ...]
    clauses: tuple[Clause, ...] = ()
