"""Speaker as a field: a query that names who said something favours the turns that person said.

The speaker's name is in every turn they said ("Caroline: ..."), so to BM25 it is a term of half a two-person
conversation, worth nothing (IDF clamped near 0), and to the dense side it is a shared prefix. Yet a question
naming a person is mostly answered by that person's own turns: in LoCoMo, of the evidence turns of questions
naming one speaker, 96.5% were said by that speaker, against about half of all turns. `speaker_boost` scales the
fused score of those turns before reranking (see README, "Recall").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from memory.experience.catalog import ChunkRow
from memory.experience.fuse import Fused, boosted
from memory.text.analyze import has_cjk

__all__ = ["favour_named", "names"]


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


def favour_named(
    fused: list[Fused], rows: Mapping[str, ChunkRow], named: Callable[[str], bool], boost: float
) -> list[Fused]:
    """`fused` with the conversation turns of the speakers a query names (`named`, see names) scaled by 1 + boost,
    best first.

    Only candidates whose row is in `rows` are looked at. Unchanged (the same list) when the boost is 0 or the
    query names none of the candidates' speakers.
    """
    if boost <= 0 or not fused:
        return fused
    favoured = set()
    for f in fused:
        row = rows.get(f.chunk_id)
        if row is not None and row.kind == "memory" and row.speaker and named(row.speaker):
            favoured.add(f.chunk_id)
    return boosted(fused, favoured, boost)
