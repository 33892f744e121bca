"""An embedder that loads its model on first use: commands that never embed (stats, facts, pin) start at once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from memory.config import Calibration
from memory.embedding.base import Embedder, EmbedderIdentity, Progress, Role

__all__ = ["LazyEmbedder"]


class LazyEmbedder(Embedder):
    """Knows its identity and calibration up front; the model itself loads on the first encode."""

    def __init__(self, identity: EmbedderIdentity, calibration: Calibration, load: Callable[[], Embedder]) -> None:
        super().__init__(identity, calibration)
        self._load = load
        self._loaded: Embedder | None = None
        self._loading = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded yet."""
        return self._loaded is not None

    def model(self) -> Embedder:
        """The loaded embedder (loading it now if need be)."""
        with self._loading:
            if self._loaded is None:
                self._loaded = self._load()
                if self._loaded.identity != self.identity:
                    raise RuntimeError(  # a factory bug: the store was opened under another identity
                        f"the model loaded as {self._loaded.identity}, not the expected {self.identity}")
            return self._loaded

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for search queries."""
        return self.model().encode_queries(texts)

    def encode_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Vectors for stored passages."""
        return self.model().encode_documents(texts, progress)

    def _encode(self, texts: list[str], role: Role) -> np.ndarray:  # pragma: no cover - the public calls delegate
        return self.model()._encode(texts, role)
