"""Recent query vectors are kept per namespace: a hit never serves another tenant's query, a delete forgets."""

from __future__ import annotations

import numpy as np
import pytest

from memory.caches import Caches
from memory.embedding import Embedder
from memory.embedding.queries import QueryVectors


class _Counting:
    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.asked: list[str] = []

    def encode_query(self, text: str) -> np.ndarray:
        self.asked.append(text)
        return self.embedder.encode_query(text)


@pytest.mark.parametrize("query", ["when did the tidal plant open?", "潮汐电站什么时候投入运行？"], ids=["en", "zh"])
def test_a_query_is_embedded_once_per_namespace_and_forgotten_with_it(embedder: Embedder, query: str) -> None:
    counting, caches = _Counting(embedder), Caches()
    queries = QueryVectors(counting, caches)
    first = queries("alice", query)
    assert np.array_equal(queries("alice", query), first) and counting.asked == [query]
    assert np.array_equal(queries("bob", query), first) and counting.asked == [query, query]  # bob's own
    assert np.allclose(first, embedder.encode_query(query))
    caches.forget("alice")
    assert caches.namespaces() == {"bob"}
    queries("alice", query)
    assert counting.asked == [query] * 3
