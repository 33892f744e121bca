"""Repair after a crash: make Chroma match SQLite (the record of truth) for one namespace or all of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.experience import catalog
from memory.experience.dense import VectorIndex
from memory.experience.model import indexed_text
from memory.experience.store import Encoder
from memory.recall.render import body_cost
from memory.store import Store
from memory.tokens import TokenCounter

__all__ = ["RepairReport", "repair"]


@dataclass(frozen=True)
class RepairReport:
    """What repair changed: stray vectors removed, chunks re-embedded, and bullet costs stored for chunks written
    before the store kept them (schema 2), over the namespaces checked."""

    namespaces: int
    removed_vectors: int
    embedded_chunks: int
    counted_lines: int = 0


def repair(
    store: Store, vectors: VectorIndex, embedder: Encoder, counter: TokenCounter, namespace: str | None = None
) -> RepairReport:
    """Drop vectors whose chunk ids SQLite does not know; re-embed SQLite chunks that have no vector; store the
    bullet cost of chunks that lack one."""
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
    return RepairReport(len(names), removed, embedded, _count_lines(store, counter, namespace))


def _count_lines(store: Store, counter: TokenCounter, namespace: str | None) -> int:
    """Fill line_tokens where it is NULL (chunks written before schema 2), a batch per write lock.

    Recall counts such chunks itself, so this only moves a one-off cost (about 0.1 ms a chunk) off its path.
    """
    db = store.db
    where = "c.line_tokens IS NULL" + (" AND c.namespace = ?" if namespace is not None else "")
    params = [namespace] if namespace is not None else []
    counted = 0
    while True:
        rows = db.execute(
            "SELECT c.rowid, c.text, c.heading, d.speaker FROM chunks c JOIN documents d "
            f"ON d.namespace = c.namespace AND d.doc_id = c.doc_id WHERE {where} LIMIT 1000",
            params,
        ).fetchall()
        if not rows:
            return counted
        costs = [(body_cost(indexed_text(t, h, s), counter), rowid) for rowid, t, h, s in rows]
        with store.transaction() as tx:
            # A rowid reused by a newer chunk already carries its own count.
            tx.conn.executemany("UPDATE chunks SET line_tokens = ? WHERE rowid = ? AND line_tokens IS NULL", costs)
        counted += len(costs)


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
