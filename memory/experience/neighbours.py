"""The turns around the best conversation turns join the results, at a share of their score.

An answer often sits in the reply to the turn that matched (or the question before it), or one turn further on.
A turn just before or after one of the neighbour_seeds best turns scores neighbour_weight × that turn's score,
and the turns next to those neighbour_weight × theirs, for neighbour_hops rings in all (so the second ring comes
at neighbour_weight² of the seed). A turn keeps its own score when that is higher. "Just before and after" is by
time for a turn stored with a timestamp and by order within its own conversation for one stored without
(catalog.neighbour_turns), so turns of unrelated requests never pad each other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from memory.config import RetrievalConfig
from memory.experience import results
from memory.experience.catalog import ChunkRow
from memory.experience.rows import Rows
from memory.snippet import Snippet

__all__ = ["Around", "apply", "switched_on", "with_neighbours"]

# The chunk ids of the memories just before and after each of these turns (catalog.neighbour_turns, bound).
Around = Callable[[Sequence[ChunkRow]], dict[str, list[str]]]


def switched_on(config: RetrievalConfig) -> bool:
    """Whether the neighbour rings are on: neighbour_weight, neighbour_seeds and neighbour_hops all above 0."""
    return config.neighbour_weight > 0 and config.neighbour_seeds > 0 and config.neighbour_hops > 0


def apply(ids: Sequence[str], rows: Rows, config: RetrievalConfig) -> bool:
    """Whether with_neighbours changes results ranked in this order: some of its seeds are conversation turns."""
    return switched_on(config) and any(rows[c].kind == "memory" for c in ids[: config.neighbour_seeds])


def with_neighbours(
    snippets: list[Snippet], rows: Rows, k: int, config: RetrievalConfig, around: Around
) -> list[Snippet]:
    """`snippets` (best first) with the turns around the best turns added, the k best by score, then id.

    The neighbours' rows are read through `rows`, so a filter on the search applies to them too.
    """
    weight, count, hops = config.neighbour_weight, config.neighbour_seeds, config.neighbour_hops
    if not switched_on(config) or not snippets:
        return snippets
    ring = [s for s in snippets[:count] if rows[s.id].kind == "memory"]
    by_id = {s.id: s for s in snippets}
    for _ in range(hops):
        if not ring:
            break
        found = around([rows[s.id] for s in ring])
        rows.read(sorted({n for ids in found.values() for n in ids}))
        raised: dict[str, Snippet] = {}
        for seed in ring:  # best first
            for neighbour in found.get(seed.id, ()):
                row = rows.get(neighbour)
                score = weight * seed.score
                if row is None or (neighbour in by_id and by_id[neighbour].score >= score):
                    continue
                why = by_id[neighbour].why if neighbour in by_id else {}  # its own ranks, if it had any
                by_id[neighbour] = raised[neighbour] = results.snippet(
                    row, math.atanh(min(score, 0.999999)), {**why, "neighbour_of": seed.id}
                )
        ring = sorted(raised.values(), key=lambda s: (-s.score, s.id))
    merged = sorted(by_id.values(), key=lambda s: (-s.score, s.id))
    return merged[:k]
