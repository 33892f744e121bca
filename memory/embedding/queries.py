"""Query vectors of recent queries, kept per namespace: an agent's turn embeds its question for recall and again
to pick its tools, and agents ask the same question more than once."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from memory.caches import BoundedCache, Caches

__all__ = ["QueryVectors"]


class _Encodes(Protocol):
    def encode_query(self, text: str) -> np.ndarray: ...


class QueryVectors:
    """`encode_query`, with the vectors of each namespace's recent queries kept in a Memory's caches: a hit never
    tells one tenant what another asked, and a delete forgets them with the namespace (memory.caches)."""

    def __init__(self, embedder: _Encodes, caches: Caches | None = None, entries: int = 1024) -> None:
        self._embedder = embedder
        self._kept: BoundedCache[str, np.ndarray] = (caches or Caches()).new(
            entries, weight=64 * entries * 1024, weigh=lambda query, vector: len(query) + vector.nbytes)

    def __call__(self, namespace: str, query: str) -> np.ndarray:
        """The unit-length vector of `query` as asked in `namespace`."""
        return self._kept.get_or_compute(namespace, query, lambda: self._embedder.encode_query(query))
