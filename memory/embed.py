"""The embedder most modules import: kept here so `from memory.embed import ...` stays the one entry point.

The backends live in memory.embedding (a base class, a factory, one module per backend).
"""

from __future__ import annotations

from memory.embedding import Embedder, EmbedderIdentity, load_embedder

__all__ = ["Embedder", "EmbedderIdentity", "load_embedder"]
