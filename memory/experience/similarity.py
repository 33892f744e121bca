"""Pairs of term sets with Jaccard similarity at or above a threshold, found without comparing every pair."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import chain

__all__ = ["jaccard", "similar_pairs"]

_PAIRWISE = 8  # up to this many sets, every pair is compared


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0 when either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def similar_pairs(sets: Sequence[frozenset[str]], threshold: float) -> list[tuple[int, int]]:
    """Index pairs (i < j) whose Jaccard similarity is at least `threshold` (0 < threshold <= 1), in order.

    Prefix filtering: with every set's terms in one global order, two sets can only reach the threshold if
    the first |s| - ceil(threshold * |s|) + 1 terms of each share a term; only such pairs are compared. The
    order puts rare terms first, so prefixes rarely collide. A handful of sets (a document's few similar
    chunks) is compared pair by pair: that is cheaper than building the order.
    """
    if len(sets) <= _PAIRWISE:
        return [(i, j) for i in range(len(sets)) for j in range(i + 1, len(sets))
                if jaccard(sets[i], sets[j]) >= threshold]
    frequency = Counter(chain.from_iterable(sets))
    shared = frozenset(term for term, count in frequency.items() if count > 1)
    postings: dict[str, list[int]] = defaultdict(list)
    candidates: set[tuple[int, int]] = set()
    for j, terms in enumerate(sets):
        if not terms:
            continue
        size = len(terms) - math.ceil(threshold * len(terms)) + 1
        # Terms no other set holds come first in the order and can match nothing: only the shared terms that
        # still fall inside the prefix are worth indexing (none, for most sets: they are skipped unsorted).
        common = terms & shared
        size -= len(terms) - len(common)
        if size <= 0:
            continue
        # Rarest first, ties by the term: a stable sort by frequency of the alphabetically sorted terms
        # (faster than a heap with a Python key function).
        for term in sorted(sorted(common), key=frequency.__getitem__)[:size]:
            for i in postings[term]:
                # Jaccard >= t also needs the smaller set to hold at least t of the larger one's terms.
                if threshold * max(len(terms), len(sets[i])) <= min(len(terms), len(sets[i])):
                    candidates.add((i, j))
            postings[term].append(j)
    return sorted((i, j) for i, j in candidates if jaccard(sets[i], sets[j]) >= threshold)
