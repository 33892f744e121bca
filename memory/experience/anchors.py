"""A conversation turn that anchors something in recent time ("I got back from Lisbon yesterday", "last week", "three
days ago", "我昨天…", "上周") is where a person says what happened: it favours those turns, whatever the question.

In a conversation most turns ask, thank, plan or explain; the few that a later question needs are the ones that
report an event, and people report an event with its time. Both benchmarks of conversations here show it (docs/
experiments.md): the turns that hold a question's evidence carry such an anchor far more often than the others. A
bare "just" says little (most turns that use it report nothing) and is not an anchor. Neither retriever sees any of
this, and a long turn that only talks about the topic outranks the short one that says what was done.
`anchor_boost` scales the fused score of those turns (see memory.experience.boosts); documents are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memory.experience.boosts import boosted
from memory.experience.catalog import ChunkRow
from memory.experience.fuse import Fused

__all__ = ["AnchorBoost", "anchored"]

# Recent time said relative to the moment of speaking, in English (matched on the lowercased text: a case-folding
# pattern is slower, and every candidate turn of every query is read) and in Chinese.
_ENGLISH = re.compile(
    r"\b(?:recently|yesterday|today|tonight|last (?:week|weekend|month|year|night|time)"
    r"|this (?:morning|week|weekend|month|year)|(?:days?|weeks?|months?|years?) ago)\b"
)
_CHINESE = re.compile(
    r"最近|昨天|前天|今天|今早|上周|上星期|上个月|去年|这周|本周|[几多两一二三四五六七八九十\d]+(?:天|周|个星期|个月|年)前"
)


def anchored(text: str) -> bool:
    """Whether the text anchors something in recent time: "recently", "yesterday", "last week", "three days ago",
    "最近", "昨天", "上周", "三天前"."""
    return _ENGLISH.search(text.lower()) is not None or _CHINESE.search(text) is not None


class AnchorBoost:
    """Conversation turns anchored in time (see anchored) scaled by 1 + `weight` (`[retrieval] anchor_boost`).

    One ranking applies its boosts to the same rows more than once (its window, then its result): each turn is
    read once per ranking, and nothing is kept past it.
    """

    def __init__(self, weight: float) -> None:
        self.span = (1.0, 1.0 + weight) if weight > 0 else (1.0, 1.0)
        self._seen: dict[str, bool] = {}

    def favour(self, fused: list[Fused], rows: Mapping[str, ChunkRow]) -> list[Fused]:
        """`fused` with the anchored turns raised, best first (see boosts.boosted)."""
        return boosted(fused, rows, self._anchored_turn, self.span[1])

    def _anchored_turn(self, row: ChunkRow) -> bool:
        if row.kind != "memory":
            return False
        found = self._seen.get(row.id)
        if found is None:
            found = self._seen[row.id] = anchored(row.text)
        return found
