"""The similarity of a query to tool descriptions, with each namespace's description vectors remembered apart.

An agent sends the same tools every turn, so their vectors are worth keeping; but what one tenant sent must not
change how fast another is answered (a hit is a timing anyone can measure), a deleted namespace leaves nothing
behind, and no tenant can grow the process without bound. So the vectors are keyed by the namespace and a digest
of the text (no text is kept), and all of them together stay within `max_bytes`, the least recently used going
first (memory.caches).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memory.caches import BoundedCache, Caches
from memory.embedding import Embedder
from memory.embedding.queries import QueryVectors

__all__ = ["ToolVectors"]


class ToolVectors:
    """Cosine similarity of a query to texts, the texts' vectors remembered per namespace (least recent out)."""

    def __init__(self, embedder: Embedder, caches: Caches | None = None, max_bytes: int = 16 * 2**20,
                 queries: QueryVectors | None = None) -> None:
        self._embedder = embedder
        self._queries = queries or QueryVectors(embedder, caches)
        self._vectors: BoundedCache[bytes, np.ndarray] = (caches or Caches()).new(
            max_bytes // 1024, weight=max_bytes, weigh=lambda digest, vector: vector.nbytes)

    def __call__(self, namespace: str, query: str, texts: Sequence[str]) -> list[float]:
        keys = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest() for t in texts]
        known = {k: v for k in keys if (v := self._vectors.get(namespace, k)) is not None}
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in known}
        if missing:
            vectors = np.asarray(self._embedder.encode_documents(list(missing.values())), dtype=np.float32)
            for key, vector in zip(missing, vectors, strict=True):
                known[key] = vector
                self._vectors.put(namespace, key, vector)
        asked = np.asarray(self._queries(namespace, query), dtype=np.float32)
        out = []
        for key in keys:
            vector = known[key]
            norm = float(np.linalg.norm(asked) * np.linalg.norm(vector))
            out.append(float(asked @ vector) / norm if norm else 0.0)
        return out
