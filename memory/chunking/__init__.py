"""Semantic chunking of a document's text: structure first, then sentences, cut where the topic shifts."""

from memory.chunking.chunker import Chunk, ChunkKind, DocumentEncoder, chunk_text, chunk_texts, chunk_turn

__all__ = ["Chunk", "ChunkKind", "DocumentEncoder", "chunk_text", "chunk_texts", "chunk_turn"]
