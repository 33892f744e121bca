"""The dense side: one Chroma collection per namespace holding our own unit vectors, keyed by chunk id."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from memory.errors import StoreError
from memory.experience.model import RetrieverHit
from memory.store import Store

__all__ = ["VectorIndex", "collection_ids"]

_BATCH = 2000  # below Chroma's max batch size (5461 here), and small enough to keep memory flat


def collection_ids(collection: Any) -> set[str]:
    """Every id in a Chroma collection, read in pages."""
    out: set[str] = set()
    offset = 0
    while True:
        got = collection.get(include=[], limit=_BATCH, offset=offset)
        out.update(got["ids"])
        if len(got["ids"]) < _BATCH:
            return out
        offset += _BATCH


def _noise(chunk_id: str, dimension: int) -> np.ndarray:
    """A unit vector drawn from the id's hash: carries nothing of the text, spreads tombstones over the graph."""
    seed = int.from_bytes(hashlib.sha256(chunk_id.encode()).digest()[:8], "little")
    v = np.random.default_rng(seed).standard_normal(dimension).astype(np.float32)
    return v / np.linalg.norm(v)


class VectorIndex:
    """Add, delete, fetch and search chunk vectors of one namespace at a time."""

    def __init__(self, store: Store) -> None:
        self._store = store
        # Looking a collection up is slow in Chroma and every search would pay it: handles are kept until the
        # namespace is dropped.
        self._handles: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _collection(self, namespace: str, create: bool) -> Any | None:
        handle = self._handles.get(namespace)
        if handle is None:
            handle = self._store.collection(namespace, create=create)
            if handle is not None:
                with self._lock:
                    self._handles[namespace] = handle
        return handle

    def drop(self, namespace: str) -> None:
        """Delete the namespace's whole collection."""
        with self._lock:
            self._handles.pop(namespace, None)
        self._store.drop_collection(namespace)

    def add(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Store vectors under chunk ids (an id already present is overwritten)."""
        if not ids:
            return
        collection = self._collection(namespace, create=True)
        if collection is None:  # create=True always answers a collection; this keeps the type honest
            raise StoreError(f"Chroma gave no collection for namespace {namespace!r}; check the Chroma store")
        try:
            for start in range(0, len(ids), _BATCH):
                collection.upsert(ids=list(ids[start:start + _BATCH]), embeddings=vectors[start:start + _BATCH])
        except Exception as exc:  # chromadb raises assorted errors for disk and validation problems
            raise StoreError(f"cannot write {len(ids)} vectors of namespace {namespace!r} to Chroma: {exc}") from exc

    def replace(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Give existing ids other vectors: delete, then add (Chroma's upsert of an existing id re-links it in
        the HNSW graph, several times slower; delete + add costs what an add does). A kill in between
        leaves the ids without vectors, which repair gives back."""
        self.delete(namespace, ids)
        self.add(namespace, ids, vectors)

    def delete(self, namespace: str, ids: Iterable[str], *, scrub: bool = False) -> None:
        """Remove vectors by chunk id; ids that are not there are ignored.

        With `scrub`, each vector is first overwritten with noise: Chroma's HNSW index keeps a deleted vector's
        numbers in its data file (only the id goes), and an embedding can be read back towards its text.
        """
        ids = list(ids)
        collection = self._collection(namespace, create=False)
        if collection is None or not ids:
            return
        for start in range(0, len(ids), _BATCH):
            part = ids[start:start + _BATCH]
            present = sorted(collection.get(ids=part, include=[])["ids"]) if scrub else []
            if present:  # an upsert of an absent id would add it
                collection.upsert(ids=present, embeddings=np.stack([_noise(i, self._store.identity.dimension)
                                                                    for i in present]))
            collection.delete(ids=part)

    def fetch(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of those ids that have one."""
        collection = self._collection(namespace, create=False)
        if collection is None or not ids:
            return {}
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), _BATCH):
            got = collection.get(ids=list(ids[start:start + _BATCH]), include=["embeddings"])
            found.update(zip(got["ids"], np.asarray(got["embeddings"], dtype=np.float32), strict=True))
        return found

    def ids(self, namespace: str) -> set[str]:
        """Every chunk id that has a vector in the namespace."""
        collection = self._collection(namespace, create=False)
        return set() if collection is None else collection_ids(collection)

    def search(
        self, namespace: str, vector: np.ndarray, k: int, within: Sequence[str] | None = None
    ) -> list[RetrieverHit]:
        """The k nearest chunks by cosine similarity (score = cosine), optionally only among `within` ids."""
        collection = self._collection(namespace, create=False)
        if collection is None or k <= 0 or (within is not None and not within):
            return []
        result = collection.query(
            query_embeddings=vector[None, :],
            n_results=k,
            ids=list(within) if within is not None else None,
            include=["distances"],
        )
        pairs = zip(result["ids"][0], result["distances"][0], strict=True)
        # Chroma's cosine distance is 1 - cosine; ties are broken by id for a deterministic order.
        ranked = sorted(((1.0 - float(d), i) for i, d in pairs), key=lambda p: (-p[0], p[1]))
        return [RetrieverHit(chunk_id, rank, score) for rank, (score, chunk_id) in enumerate(ranked, 1)]
