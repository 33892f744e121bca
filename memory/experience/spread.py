"""A question that asks across events ("how many …", "in total", "which came first", "一共", "先后") spreads its
results over conversations.

Such a question is answered from several conversations, one event in each: the bikes serviced in March, the
money raised at each charity event, the two trips to put in order. Yet the conversation that matches best holds
many turns that restate its topic (the user's, the assistant's replies, their neighbours), and at a small budget
they take every place before the second and third conversations are reached. For such a question a result from a
conversation already represented by a better result scores `spread` less (`[retrieval] spread`); the first of each
conversation keeps its score, and a single-topic question is left as it was. A conversation here is turns whose
times lie within `neighbour_window_s` of each other, the window of the neighbour turns (memory.experience.neighbours);
a turn stored without a timestamp has the time it was stored, so turns stored within that window of each other
count as one conversation. The spread orders, it does not judge relevance: given recall's threshold (`floor`, the
request's `min_score`), a turn at or above it before the spread stays at it, so a question across events never
ends with budget left because its second turns were pushed out of the threshold.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from memory.clock import parse_iso
from memory.config import RetrievalConfig
from memory.experience.rows import Rows
from memory.snippet import Snippet

__all__ = ["applies", "asks_across", "spread"]

# Counts and totals, sets, and order or distance between events ("which … first", "who … first"), in English and
# Chinese: what a question says when its answer is gathered from several events.
_ACROSS = re.compile(
    r"\b(?:how many|how much|in total|total|altogether|combined|all the|each of|both|between|in what order|"
    r"order of|earliest to latest)\b|\b(?:which|who)\b.*\bfirst\b"
    r"|多少|一共|总共|几个|几次|之间|哪个先|先后|顺序|分别",
    re.IGNORECASE,
)
# A state that changed, or a measure over several events: "most recently", "previously", "initially", "before I
# …", "how long had I … when I …", an average, a percentage. The answer sits where the state was said and where it
# changed, or in each event measured. ("以前" after a span of time is "ago", one event.)
_CHANGED = re.compile(
    r"\b(?:most recent(?:ly)?|previously|initially|average|percentage)\b"
    r"|\bbefore I\b|\bhow (?:long|old) (?:had|was|were|have|has|did)\b.*\bwhen\b"
    r"|最近一次|(?<![天周月年])以前|最初|平均|百分之|百分比",
    re.IGNORECASE,
)
# One event's distance or one stretch of time, although it says "how many" / "多少": "how many days ago did I …",
# "how much time do I …"; unless a total is asked ("how much time in total", "一共花了多少时间").
_ONE = re.compile(
    r"\bhow many (?:days|weeks|months|years) ago\b|\bhow much time\b"
    r"|(?:多少|几)(?:天|周|个星期|个月|年)(?:以前|之前|前)|多少时间",
    re.IGNORECASE,
)
_TOTAL = re.compile(r"\b(?:in total|total|altogether|combined)\b|一共|总共", re.IGNORECASE)


def asks_across(query: str) -> bool:
    """Whether the query asks about several events: counts and totals, sets ("both", "分别"), their order, a state
    that changed ("most recently", "previously", "最近一次") or a measure over them ("average", "平均"); not one
    event's distance ("how many days ago", "几天前")."""
    if _ONE.search(query) is not None and _TOTAL.search(query) is None:
        return False
    return _ACROSS.search(query) is not None or _CHANGED.search(query) is not None


def applies(ids: Sequence[str], rows: Rows, query: str, config: RetrievalConfig) -> bool:
    """Whether spread changes results ranked in this order: it is on, the query asks across events and some of the
    results are conversation turns."""
    return config.spread > 0 and asks_across(query) and any(rows[c].kind == "memory" for c in ids)


def spread(snippets: Sequence[Snippet], rows: Rows, query: str, config: RetrievalConfig,
           floor: float | None = None) -> list[Snippet]:
    """`snippets` (best first) with, for a question that asks across events, every conversation turn that has a
    better turn within `neighbour_window_s` of it scored × (1 − `spread`), but not below `floor` if it was at or
    above it; best first again (score, then id).

    Documents are left as they are; so is everything when the query asks about one thing or `spread` is 0.
    """
    factor = 1.0 - config.spread
    if factor >= 1.0 or not asks_across(query):
        return list(snippets)
    window = config.neighbour_window_s
    better: list[float] = []
    out = []
    for snippet in snippets:
        row = rows.get(snippet.id)
        if row is None or row.kind != "memory":
            out.append(snippet)
            continue
        moment = parse_iso(row.updated_at, "updated_at").timestamp()
        if any(abs(moment - other) <= window for other in better):
            lowered = snippet.score * factor
            if floor is not None and snippet.score >= floor:
                lowered = max(lowered, floor)
            snippet = dataclasses.replace(snippet, score=lowered,
                                          why={**snippet.why, "spread": round(factor, 6)})
        better.append(moment)
        out.append(snippet)
    return sorted(out, key=lambda s: (-s.score, s.id))
