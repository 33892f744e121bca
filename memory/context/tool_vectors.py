"""The similarity of a query to tool descriptions, with each namespace's description vectors remembered apart.

An agent sends the same tools every turn, so their vectors are worth keeping; but what one tenant sent must not
change how fast another is answered (a hit is a timing anyone can measure), a deleted namespace leaves nothing
behind, and no tenant can grow the process without bound. So the vectors are keyed by the namespace and a digest
of the text (no text is kept), and all of them together stay within `max_bytes`, the least recently used going
first.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from memory.embedding import Embedder

__all__ = ["ToolVectors"]


class ToolVectors:
    """Cosine similarity of a query to texts, the texts' vectors remembered per namespace (least recent out)."""

    def __init__(self, embedder: Embedder, max_bytes: int = 16 * 2**20) -> None:
        self._embedder = embedder
        self._max_bytes = max_bytes
        self._vectors: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __call__(self, namespace: str, query: str, texts: Sequence[str]) -> list[float]:
        keys = [(namespace, hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest()) for t in texts]
        with self._lock:
            known = {k: self._vectors[k] for k in keys if k in self._vectors}
            for key in known:
                self._vectors.move_to_end(key)
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in known}
        if missing:
            vectors = np.asarray(self._embedder.encode_documents(list(missing.values())), dtype=np.float32)
            fresh = dict(zip(missing, vectors, strict=True))
            known.update(fresh)
            self._remember(fresh)
        asked = np.asarray(self._embedder.encode_query(query), dtype=np.float32)
        out = []
        for key in keys:
            vector = known[key]
            norm = float(np.linalg.norm(asked) * np.linalg.norm(vector))
            out.append(float(asked @ vector) / norm if norm else 0.0)
        return out

    def forget(self, namespace: str) -> None:
        """Drop the vectors of `namespace` (it was deleted)."""
        with self._lock:
            for key in [k for k in self._vectors if k[0] == namespace]:
                self._bytes -= self._vectors.pop(key).nbytes

    def _remember(self, fresh: dict[tuple[str, bytes], np.ndarray]) -> None:
        with self._lock:
            for key, vector in fresh.items():
                if key not in self._vectors:
                    self._vectors[key] = vector
                    self._bytes += vector.nbytes
            while self._bytes > self._max_bytes and self._vectors:
                self._bytes -= self._vectors.popitem(last=False)[1].nbytes
