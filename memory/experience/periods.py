"""Dates a query names ("on 8 May 2023", "in July 2023", "2023-05-08", "2023年5月8日"), as the periods it asks about.

A question that names a day, a month or a year asks about what was said then, yet neither retriever reads the
time of a memory; in conversations most of the evidence of such a question was said in the period it names
(bench/recall_quality.py measures it on LoCoMo). `date_boost` scales the fused score of the memories updated
within a named period (see memory.experience.boosts). Only whole dates with a year count: "May" alone or
"the 8th" would have to guess the year.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date

from memory.experience.boosts import boosted
from memory.experience.catalog import ChunkRow
from memory.experience.fuse import Fused

__all__ = ["DateBoost", "periods"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")], 1)
    for name in names
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(\d{4})"
# Each pattern and where its (day, month, year) groups are; the more precise ones are tried first.
_PATTERNS: list[tuple[re.Pattern[str], tuple[int | None, int, int]]] = [
    (re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE), (1, 2, 3)),
    (re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE), (2, 1, 3)),
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), (3, 2, 1)),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), (3, 2, 1)),
    (re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE), (None, 1, 2)),
    (re.compile(r"\b(\d{4})-(\d{1,2})\b"), (None, 2, 1)),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月"), (None, 2, 1)),
]
_YEAR_ONLY = [re.compile(r"\b(1[5-9]\d\d|20\d\d)\b"), re.compile(r"(\d{4})\s*年")]


def periods(query: str) -> frozenset[str]:
    """The periods the query names, as ISO prefixes: "2023-05-08" (a day), "2023-05" (a month), "2023" (a year).

    A year inside a day or month already found is not a period of its own; impossible dates are ignored.
    """
    found: set[str] = set()
    taken: list[tuple[int, int]] = []
    for pattern, (day_at, month_at, year_at) in _PATTERNS:
        for match in pattern.finditer(query):
            if any(start < match.end() and match.start() < end for start, end in taken):
                continue
            month_text = match.group(month_at)
            month = _MONTHS.get(month_text.casefold(), 0) if not month_text.isdigit() else int(month_text)
            day = int(match.group(day_at)) if day_at else 1
            try:
                when = date(int(match.group(year_at)), month, day)
            except ValueError:
                continue
            found.add(when.isoformat() if day_at else when.isoformat()[:7])
            taken.append(match.span())
    for pattern in _YEAR_ONLY:
        for match in pattern.finditer(query):
            if not any(start < match.end() and match.start() < end for start, end in taken):
                found.add(match.group(1))
                taken.append(match.span())
    return frozenset(found)


class DateBoost:
    """The memories updated within the periods a query names (see periods) scaled by 1 + `weight`
    (`[retrieval] date_boost`)."""

    def __init__(self, query: str, weight: float) -> None:
        self._periods = periods(query)
        self.span = (1.0, 1.0 + weight) if weight > 0 and self._periods else (1.0, 1.0)

    def favour(self, fused: list[Fused], rows: Mapping[str, ChunkRow]) -> list[Fused]:
        """`fused` with the memories from the named periods raised, best first (see boosts.boosted)."""
        return boosted(fused, rows, self._from_named, self.span[1])

    def _from_named(self, row: ChunkRow) -> bool:
        return any(row.updated_at.startswith(p) for p in self._periods)
