"""Boosts: what a query names (a speaker, a date) raising the fused score of the candidates that match it.

A boost runs after fusion, on candidates whose rows have been read, and before rerank. Ranking reads a candidate's
row only when the candidate can still reach the result (see memory.experience.rank), and it can know that before
reading the row only if it knows how far a boost can move a score: each boost declares its `span`, the least and
the most it can scale a fused score by. A new boost declares its own and the cut-off stays exact.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from memory.experience.catalog import ChunkRow
from memory.experience.fuse import Fused

__all__ = ["Boost", "Boosts", "boosted"]


class Boost(Protocol):
    """One boost: the factors it may apply, and the fused candidates with it applied."""

    @property
    def span(self) -> tuple[float, float]:
        """The least and the most this boost can scale a fused score by (1.0, 1.0 when it does nothing)."""
        ...

    def favour(self, fused: list[Fused], rows: Mapping[str, ChunkRow]) -> list[Fused]:
        """`fused` (candidates with rows) with the boost applied, best first; the same list when nothing changed."""
        ...


class Boosts:
    """Several boosts applied in turn; their spans multiply."""

    def __init__(self, *boosts: Boost) -> None:
        self._boosts = boosts
        least, most = 1.0, 1.0
        for boost in boosts:
            low, high = boost.span
            least, most = least * low, most * high
        self.span = (least, most)

    def favour(self, fused: list[Fused], rows: Mapping[str, ChunkRow]) -> list[Fused]:
        """`fused` with every boost applied in turn, best first."""
        for boost in self._boosts:
            fused = boost.favour(fused, rows)
        return fused


def boosted(
    fused: list[Fused], rows: Mapping[str, ChunkRow], matches: Callable[[ChunkRow], bool], factor: float
) -> list[Fused]:
    """`fused` with the scores of the candidates whose row `matches` scaled by `factor`, best first.

    Only candidates with a row in `rows` are looked at; the same list comes back when the factor is 1 or no
    candidate matches.
    """
    if factor == 1.0 or not fused:
        return fused
    favoured = {f.chunk_id for f in fused if (row := rows.get(f.chunk_id)) is not None and matches(row)}
    if not favoured:
        return fused
    out = [f._replace(score=f.score * factor) if f.chunk_id in favoured else f for f in fused]
    return sorted(out, key=lambda f: (-f.score, f.chunk_id))
