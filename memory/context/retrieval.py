"""Retrieval for a turn: recall (without facts, which have their block) into the room the plan gives it, as one
system message; nothing when nothing passes recall's relevance threshold (its low-confidence best match included)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from memory.context.messages import Message

__all__ = ["Recall", "Recalled", "retrieve"]


class Recalled(Protocol):
    """What this package reads of a recall result (memory.recall.model.RecallResult; recall sits beside it)."""

    @property
    def rendered(self) -> str: ...

    @property
    def items(self) -> Sequence[Any]: ...


# (namespace, query, budget, task_id, filters, min_score) -> recall without the fact tier (the facade's Recaller)
Recall = Callable[[str, str, int, str | None, Mapping[str, Any] | None, float | None], Recalled]


def retrieve(recall: Recall, namespace: str, query: str, task_id: str, filters: Mapping[str, Any] | None,
             min_score: float | None, room: int, overhead: int, most: int) -> tuple[list[Message], int]:
    """[the recall block] within `room` tokens (`overhead`: what a system message costs around its text; `most`:
    the largest recall budget), and how many items it holds."""
    allowance = min(room - overhead, most)
    if allowance <= 0 or not query.strip():
        return [], 0
    result = recall(namespace, query, allowance, task_id, filters, min_score)
    # Recall's best match when nothing passed its threshold is flagged low-confidence: in a turn it is noise.
    if not result.rendered.strip() or all(getattr(item, "low_confidence", False) for item in result.items):
        return [], 0
    return [Message(-1, "system", result.rendered.rstrip("\n"))], len(result.items)
