"""Request and response bodies of /v1/facts."""

from __future__ import annotations

from pydantic import BaseModel, Field

from api.schemas.base import Namespace, RequestModel, Scope, TaskId
from memory.facts import ExtractedFact, FactChange, FactRecord, Outcome, OutcomeKind

__all__ = [
    "FactChangePublic", "FactListPublic", "FactObserve", "FactPin", "FactPublic", "IgnoredPublic", "OutcomePublic",
    "ThisTurnPublic",
]


class FactObserve(RequestModel):
    """A user message to scan for facts."""

    namespace: Namespace
    text: str = Field(min_length=1)
    scope: Scope = "global"
    source: str | None = Field(default=None, max_length=500)
    task_id: TaskId | None = Field(
        default=None, description="keeps the message's request-only constraints for this task (scope "
        "session:<task_id>); without it they are only returned in this_turn")


class FactPin(RequestModel):
    """A constraint to pin: free text, or an explicit key and value."""

    namespace: Namespace
    text: str | None = None
    key: str | None = Field(default=None, max_length=200)
    value: str | None = None
    scope: Scope = "global"
    source: str | None = Field(default=None, max_length=500)


class FactPublic(BaseModel):
    """One version of a fact."""

    id: str
    key: str
    value: str
    kind: str
    text: str
    pinned: bool
    version: int
    scope: str
    created_at: str
    updated_at: str
    superseded_at: str | None
    superseded_by: str | None
    source: str | None
    rule: str | None
    confidence: float = Field(description="1.0 for a rule's fact; the detector's score for a model-found one")

    @classmethod
    def of(cls, record: FactRecord) -> FactPublic:
        """From a library record."""
        fields = {name: getattr(record, name) for name in cls.model_fields}
        return cls(**fields)


class IgnoredPublic(BaseModel):
    """A sentence or clause that stored nothing, and why."""

    text: str
    reason: str


class OutcomePublic(BaseModel):
    """What one sentence (or clause) of the message became."""

    text: str
    outcome: OutcomeKind = Field(description="stored, superseded (a new version of a known key), request (a "
                                 "constraint for this request only, in this_turn) or ignored")
    reason: str | None = Field(default=None, description="why nothing was stored (ignored only)")
    facts: list[str] = Field(default=[], description="ids of the facts it stands for now")
    supersedes: list[str] = Field(default=[], description="ids of the older versions it replaced")

    @classmethod
    def of(cls, outcome: Outcome) -> OutcomePublic:
        """From a library outcome."""
        return cls(text=outcome.text, outcome=outcome.outcome, reason=outcome.reason, facts=list(outcome.facts),
                   supersedes=list(outcome.supersedes))


class ThisTurnPublic(BaseModel):
    """A constraint said for this request only: the caller applies it to this answer."""

    key: str
    value: str
    kind: str
    text: str
    confidence: float

    @classmethod
    def of(cls, fact: ExtractedFact) -> ThisTurnPublic:
        """From an extracted fact."""
        return cls(key=fact.key, value=fact.value, kind=fact.kind, text=fact.text, confidence=fact.confidence)


class FactChangePublic(BaseModel):
    """What a write stored, superseded and ignored, and the outcome of every sentence in message order."""

    stored: list[FactPublic]
    superseded: list[FactPublic]
    ignored: list[IgnoredPublic]
    outcomes: list[OutcomePublic]
    this_turn: list[ThisTurnPublic] = Field(
        default=[], description="constraints for this request only (stored for the task when task_id was given)")

    @classmethod
    def of(cls, change: FactChange) -> FactChangePublic:
        """From a library change."""
        return cls(
            stored=[FactPublic.of(r) for r in change.stored],
            superseded=[FactPublic.of(r) for r in change.superseded],
            ignored=[IgnoredPublic(text=t, reason=r) for t, r in change.ignored],
            outcomes=[OutcomePublic.of(o) for o in change.outcomes],
            this_turn=[ThisTurnPublic.of(f) for f in change.this_turn],
        )


class FactListPublic(BaseModel):
    """Facts (current ones, or one key's history)."""

    facts: list[FactPublic]
