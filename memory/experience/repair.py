"""Repair after a crash: make Chroma match SQLite (the record of truth) for one namespace or all of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.experience import catalog
from memory.experience.dense import VectorIndex
from memory.experience.model import indexed_text
from memory.experience.store import Encoder
from memory.store import Store

__all__ = ["RepairReport", "repair"]


@dataclass(frozen=True)
class RepairReport:
    """What repair changed: stray vectors removed and chunks re-embedded, over the namespaces checked."""

    namespaces: int
    removed_vectors: int
    embedded_chunks: int


def repair(store: Store, vectors: VectorIndex, embedder: Encoder, namespace: str | None = None) -> RepairReport:
    """Drop vectors whose chunk ids SQLite does not know; re-embed SQLite chunks that have no vector."""
    db = store.db
    names = [namespace] if namespace is not None else sorted(
        set(catalog.namespaces(db)) | set(_collection_namespaces(store))
    )
    removed = embedded = 0
    for name in names:
        # Under the write lock no write is between its vector step and its SQLite step, so nothing is torn.
        with store.write_lock:
            known = {r[0] for r in db.execute("SELECT id FROM chunks WHERE namespace = ?", [name]).fetchall()}
            present = vectors.ids(name)
            if not known:
                removed += len(present)
                vectors.drop(name)
                continue
            strays = present - known
            vectors.delete(name, sorted(strays))
            removed += len(strays)
        embedded += _reembed(store, vectors, embedder, name, sorted(known - present))
    return RepairReport(len(names), removed, embedded)


def _reembed(store: Store, vectors: VectorIndex, embedder: Encoder, namespace: str, ids: Sequence[str]) -> int:
    """Embed chunks that have no vector, a batch at a time, outside the write lock."""
    db = store.db
    added = 0
    for start in range(0, len(ids), 256):
        part = list(ids[start:start + 256])
        marks = ",".join("?" * len(part))
        rows = db.execute(
            "SELECT c.id, c.text, c.heading, d.speaker FROM chunks c JOIN documents d "
            f"ON d.namespace = c.namespace AND d.doc_id = c.doc_id WHERE c.id IN ({marks})",
            part,
        ).fetchall()
        if not rows:
            continue
        encoded = embedder.encode_documents([indexed_text(t, h, s) for _, t, h, s in rows])
        with store.write_lock:
            # Chunks replaced while we were embedding are skipped: their new version brought its own vectors.
            still = {r[0] for r in db.execute(f"SELECT id FROM chunks WHERE id IN ({marks})", part).fetchall()}
            keep = [i for i, r in enumerate(rows) if r[0] in still]
            vectors.add(namespace, [rows[i][0] for i in keep], encoded[keep])
        added += len(keep)
    return added


def _collection_namespaces(store: Store) -> list[str]:
    """Namespaces that have an experience collection in Chroma (named exp-…, the namespace in its metadata)."""
    out = []
    for collection in store.chroma.list_collections():
        name = str(getattr(collection, "name", collection))
        if name.startswith("exp-"):
            metadata = store.chroma.get_collection(name, embedding_function=None).metadata or {}
            if "namespace" in metadata:
                out.append(str(metadata["namespace"]))
    return out
