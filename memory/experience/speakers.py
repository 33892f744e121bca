"""Speaker as a field: a query that names who said something favours the turns that person said, and a query in
the first person ("what did I buy", "我上次说了什么") favours the turns of the user (`user_speakers`).

The speaker's name is in every turn they said ("Caroline: ..."), so to BM25 it is a term of half a two-person
conversation, worth nothing (IDF clamped near 0), and to the dense side it is a shared prefix. Yet a question
naming a person is mostly answered by that person's own turns (bench/recall_quality.py measures it on LoCoMo).
`speaker_boost` scales the fused score of those turns before reranking (see memory.experience.boosts).

The first person is the same field, said another way: the agent asks with the user's words, so "I" is the user.
In an agent's memory the assistant's replies restate what the user told it, at length and with every word of the
topic, while the fact itself ("I have 600 followers now") sits in the user's short turn; and one matching session
of replies fills a budget before the other sessions the question needs are reached. `first_person_boost` raises
the user's own turns for such a query; the replies still come as their neighbours. A conversation between named
people ("Caroline: ...") has no `user_speakers` turns and is left as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from memory.experience.boosts import boosted
from memory.experience.catalog import ChunkRow
from memory.experience.fuse import Fused
from memory.text.analyze import has_cjk

__all__ = ["FirstPersonBoost", "SpeakerBoost", "in_first_person", "names"]

# "I", "me", "my", "mine", "myself" as words; in Chinese 我 wherever it is (written without spaces).
_FIRST_PERSON = re.compile(r"(?<!\w)(?:i|me|my|mine|myself)(?!\w)|我")


def in_first_person(query: str) -> bool:
    """Whether the query speaks of the one asking: "I" / "me" / "my" / "mine" / "myself" as words, or 我."""
    return _FIRST_PERSON.search(query.casefold()) is not None


def names(query: str) -> Callable[[str], bool]:
    """A test of whether `query` names a speaker: the whole name, case-insensitively, not inside another word.

    Chinese is written without spaces, so a name in Chinese counts wherever it appears ("小王做了什么").
    """
    folded = query.casefold()
    seen: dict[str, bool] = {}

    def named(speaker: str) -> bool:
        found = seen.get(speaker)
        if found is None:
            name = _folded(speaker)
            if not name:
                found = False
            elif has_cjk(name):
                found = name in folded
            else:
                found = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", folded) is not None
            seen[speaker] = found
        return found

    return named


class _TurnsOf:
    """The turns of the speakers `said_by` accepts scaled by `factor`; the two boosts below differ in whom they accept.

    Whose turns a candidate holds is known only from its row: any candidate may be raised, so the span is the factor.
    """

    def __init__(self, said_by: Callable[[str], bool], factor: float) -> None:
        self._said_by = said_by
        self.span = (1.0, factor)

    def favour(self, fused: list[Fused], rows: Mapping[str, ChunkRow]) -> list[Fused]:
        """`fused` with those speakers' turns raised, best first (see boosts.boosted)."""
        return boosted(fused, rows, self._said, self.span[1])

    def _said(self, row: ChunkRow) -> bool:
        return row.kind == "memory" and row.speaker is not None and self._said_by(row.speaker)


class SpeakerBoost(_TurnsOf):
    """The turns of the speakers a query names (see names) scaled by 1 + `weight` (`[retrieval] speaker_boost`)."""

    def __init__(self, query: str, weight: float) -> None:
        super().__init__(names(query), 1.0 + weight)


class FirstPersonBoost(_TurnsOf):
    """For a query in the first person (see in_first_person), the turns of `user_speakers` (compared as names are:
    case and spacing folded) scaled by 1 + `weight` (`[retrieval] first_person_boost`)."""

    def __init__(self, query: str, weight: float, user_speakers: Iterable[str]) -> None:
        users = frozenset(folded for s in user_speakers if (folded := _folded(s)))
        on = weight > 0 and bool(users) and in_first_person(query)
        super().__init__(lambda speaker: _folded(speaker) in users, 1.0 + weight if on else 1.0)


def _folded(speaker: str) -> str:
    return " ".join(speaker.casefold().split())
