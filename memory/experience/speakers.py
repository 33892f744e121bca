"""Speaker as a field: a query that names who said something favours the turns that person said.

The speaker's name is in every turn they said ("Caroline: ..."), so to BM25 it is a term of half a two-person
conversation, worth nothing (IDF clamped near 0), and to the dense side it is a shared prefix. Yet a question
naming a person is mostly answered by that person's own turns (bench/recall_quality.py measures it on LoCoMo).
`speaker_boost` scales the fused score of those turns before reranking (see memory.experience.boosts).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from memory.experience.boosts import boosted
from memory.experience.catalog import ChunkRow
from memory.experience.fuse import Fused
from memory.text.analyze import has_cjk

__all__ = ["SpeakerBoost", "names"]


def names(query: str) -> Callable[[str], bool]:
    """A test of whether `query` names a speaker: the whole name, case-insensitively, not inside another word.

    Chinese is written without spaces, so a name in Chinese counts wherever it appears ("小王做了什么").
    """
    folded = query.casefold()
    seen: dict[str, bool] = {}

    def named(speaker: str) -> bool:
        found = seen.get(speaker)
        if found is None:
            name = " ".join(speaker.casefold().split())
            if not name:
                found = False
            elif has_cjk(name):
                found = name in folded
            else:
                found = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", folded) is not None
            seen[speaker] = found
        return found

    return named


class SpeakerBoost:
    """The turns of the speakers a query names (see names) scaled by 1 + `weight` (`[retrieval] speaker_boost`)."""

    def __init__(self, query: str, weight: float) -> None:
        self._named = names(query)
        # Whose turns a candidate holds is known only from its row: any candidate may be raised.
        self.span = (1.0, 1.0 + weight) if weight > 0 else (1.0, 1.0)

    def favour(self, fused: list[Fused], rows: Mapping[str, ChunkRow]) -> list[Fused]:
        """`fused` with the named speakers' turns raised, best first (see boosts.boosted)."""
        return boosted(fused, rows, self._said_by_named, self.span[1])

    def _said_by_named(self, row: ChunkRow) -> bool:
        return row.kind == "memory" and row.speaker is not None and self._named(row.speaker)
