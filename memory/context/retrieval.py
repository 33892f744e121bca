"""Retrieval for a turn: recall (without facts, which have their block) into the room the plan gives it, as one
system message; nothing when nothing passes recall's relevance threshold (its low-confidence best match included).

Retrieval only reads, so a turn runs it before the store's writer lock (memory.context.assemble) and leaves the
one-shot task items it shows in place (`consume=False`): the turn's transaction takes them (TaskMemory.consume_all),
and chooses again under the lock when another turn took one first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from memory.context.messages import Message

__all__ = ["NOTHING", "Recall", "Recalled", "Retrieved", "retrieve"]


class Recalled(Protocol):
    """What this package reads of a recall result (memory.recall.model.RecallResult; recall sits beside it)."""

    @property
    def rendered(self) -> str: ...

    @property
    def items(self) -> Sequence[Any]: ...

    @property
    def one_shot(self) -> tuple[str, ...]: ...


class Recall(Protocol):
    """Recall without the fact tier (the facade's Recaller); with `consume` False the one-shot items it shows stay."""

    def __call__(self, namespace: str, query: str, budget: int, task_id: str | None,
                 filters: Mapping[str, Any] | None, min_score: float | None, *, consume: bool) -> Recalled: ...


@dataclass(frozen=True)
class Retrieved:
    """The recall block as messages (none or one), how many items it holds, and the keys of the one-shot task items
    among them."""

    messages: tuple[Message, ...] = ()
    count: int = 0
    one_shot: tuple[str, ...] = ()


NOTHING = Retrieved()


def retrieve(recall: Recall, namespace: str, query: str, task_id: str, filters: Mapping[str, Any] | None,
             min_score: float | None, room: int, overhead: int, most: int, *, consume: bool) -> Retrieved:
    """The recall block within `room` tokens (`overhead`: what a system message costs around its text; `most`: the
    largest recall budget); with `consume` the one-shot items it shows are consumed, else only named."""
    allowance = min(room - overhead, most)
    if allowance <= 0 or not query.strip():
        return NOTHING
    result = recall(namespace, query, allowance, task_id, filters, min_score, consume=consume)
    # Recall's best match when nothing passed its threshold is flagged low-confidence: in a turn it is noise.
    if not result.rendered.strip() or all(getattr(item, "low_confidence", False) for item in result.items):
        return NOTHING
    return Retrieved((Message(-1, "system", result.rendered.rstrip("\n")),), len(result.items), result.one_shot)
