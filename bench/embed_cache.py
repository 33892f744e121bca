"""An embedder wrapper that keeps bench-corpus vectors in bench/.cache, keyed by model and text hash."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memory.config import EmbeddingConfig
from memory.embedding import Embedder, Progress
from memory.embedding.onnx_minilm import VARIANTS, graph_path

__all__ = ["CACHE_DIR", "CachedEmbedder"]

CACHE_DIR = Path(__file__).resolve().parent / ".cache"


class CachedEmbedder:
    """Same interface as Embedder; document vectors already computed for this model come from disk."""

    def __init__(self, embedder: Embedder, path: Path | None = None) -> None:
        self._embedder = embedder
        self.identity = embedder.identity
        path = path or CACHE_DIR / "embeddings.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        # A service's request threads share one wrapper (bench.recall_equivalence serves REST in-process).
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        # The torch backend's vectors were cached under the model name alone; another backend's are its own, and
        # an onnx backend's are those of one built graph (its file name changes with the recipe).
        backend, model = embedder.identity.backend, embedder.identity.model
        self._model = model if backend == "sentence-transformers" else f"{backend}/{model}"
        if backend in VARIANTS:
            self._model += "/" + graph_path(EmbeddingConfig(backend=backend, model=model)).stem
        self.computed = 0

    def __getattr__(self, name: str) -> object:
        """Anything else (calibration, ...) is the wrapped embedder's."""
        return getattr(self._embedder, name)

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self._embedder.dimension

    def encode_query(self, text: str) -> np.ndarray:
        """One query vector (queries are cached too: reruns are then instant)."""
        return self.encode_queries([text])[0]

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query vectors, through the disk cache."""
        return self._cached(texts, "q", self._embedder.encode_queries)

    def encode_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Document vectors, through the disk cache (progress is reported once, when the call is done)."""
        vectors = self._cached(texts, "d", self._embedder.encode_documents)
        if progress is not None:
            progress(len(set(texts)), len(set(texts)))
        return vectors

    def _cached(self, texts: Sequence[str], role: str, encode) -> np.ndarray:  # type: ignore[no-untyped-def]
        with self._lock:
            return self._cached_locked(texts, role, encode)

    def _cached_locked(self, texts: Sequence[str], role: str, encode) -> np.ndarray:  # type: ignore[no-untyped-def]
        keys = [hashlib.sha256(f"{self._model}\0{role}\0{t}".encode()).hexdigest() for t in texts]
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            rows = self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})", part
            ).fetchall()
            found.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
        missing = [i for i, k in enumerate(keys) if k not in found]
        for start in range(0, len(missing), 256):
            batch = missing[start:start + 256]
            vectors = encode([texts[i] for i in batch])
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                [(keys[i], v.astype(np.float32).tobytes()) for i, v in zip(batch, vectors, strict=True)],
            )
            self._db.commit()
            found.update((keys[i], v) for i, v in zip(batch, vectors, strict=True))
            self.computed += len(batch)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([found[k] for k in keys])
