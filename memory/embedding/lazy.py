"""An embedder that loads its model on first use: commands that never embed (stats, facts, pin) start at once."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from memory.config import Calibration
from memory.embedding.base import Embedder, EmbedderIdentity, Progress, Role
from memory.once import Once

__all__ = ["LazyEmbedder"]


class LazyEmbedder(Embedder):
    """Knows its identity and calibration up front; the model itself loads on the first encode."""

    def __init__(self, identity: EmbedderIdentity, calibration: Calibration, load: Callable[[], Embedder]) -> None:
        super().__init__(identity, calibration)
        self._model = Once(lambda: self._checked(load()))

    @property
    def loaded(self) -> bool:
        """Whether the model has been loaded yet."""
        return self._model.made

    def model(self) -> Embedder:
        """The loaded embedder (loading it now if need be)."""
        return self._model.get()

    def _checked(self, loaded: Embedder) -> Embedder:
        if loaded.identity != self.identity:
            raise RuntimeError(  # a factory bug: the store was opened under another identity
                f"the model loaded as {loaded.identity}, not the expected {self.identity}")
        return loaded

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for search queries."""
        return self.model().encode_queries(texts)

    def encode_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Vectors for stored passages."""
        return self.model().encode_documents(texts, progress)

    def _encode(self, texts: list[str], role: Role) -> np.ndarray:  # pragma: no cover - the public calls delegate
        return self.model()._encode(texts, role)
