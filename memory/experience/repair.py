"""Repair after a crash: make Chroma match SQLite (the record of truth) for one namespace or all of them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from memory.bullet import body_cost
from memory.experience import catalog, turn_vectors
from memory.experience.dense import VectorIndex
from memory.experience.model import indexed_text
from memory.experience.turn_vectors import TurnContext
from memory.experience.writer import Encoder
from memory.store import Store, collection_name
from memory.tokens import TokenCounter

__all__ = ["RepairReport", "repair"]


@dataclass(frozen=True)
class RepairReport:
    """What repair changed: stray vectors removed, chunks given back a vector (`embedded_chunks`; a conversation
    turn's kept own embedding is used when there is one), bullet costs stored for chunks written before the store
    kept them (schema 2), turns' own embeddings taken from Chroma for turns written before the store kept them
    (schema 4), and turn vectors re-mixed with their current neighbours, over the namespaces checked."""

    namespaces: int
    removed_vectors: int
    embedded_chunks: int
    counted_lines: int = 0
    kept_turns: int = 0
    mixed_turns: int = 0


def repair(
    store: Store, vectors: VectorIndex, embedder: Encoder, counter: TokenCounter, namespace: str | None = None,
    turn_context: TurnContext | None = None,
) -> RepairReport:
    """Drop vectors whose chunk ids SQLite does not know; re-embed SQLite chunks that have no vector; store the
    bullet cost of chunks that lack one; keep turns' own embeddings and re-mix their vectors (`turn_context`;
    None leaves turn vectors as they are)."""
    db = store.db
    names = [namespace] if namespace is not None else sorted(
        set(catalog.namespaces(db)) | set(_collection_namespaces(store))
    )
    removed = embedded = kept = mixed = 0
    if namespace is None:
        removed += _drop_orphan_collections(store)
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
        if turn_context is not None:
            kept += _keep_own(store, vectors, name)
            mixed += turn_vectors.sync_all(store, name, store.generation, turn_context,
                                      partial(vectors.replace, name))
    return RepairReport(len(names), removed, embedded, _count_lines(store, counter, namespace), kept, mixed)


def _keep_own(store: Store, vectors: VectorIndex, namespace: str) -> int:
    """Keep the own embedding of turns stored before schema 4, taken from Chroma (their vectors were unmixed)."""
    db = store.db
    ids = [r[0] for r in db.execute(
        "SELECT c.id FROM chunks c JOIN documents d ON d.namespace = c.namespace AND d.doc_id = c.doc_id "
        "LEFT JOIN turn_vectors t ON t.id = c.id AND t.generation = ? "
        "WHERE c.namespace = ? AND d.kind = 'memory' AND t.id IS NULL",
        [store.generation, namespace],
    ).fetchall()]
    kept = 0
    for start in range(0, len(ids), 1000):
        found = vectors.fetch(namespace, ids[start:start + 1000])
        if not found:
            continue
        with store.transaction() as tx:
            # Only chunks that are still there: a row of a chunk deleted meanwhile would never be removed.
            still = {r[0] for r in tx.execute(
                f"SELECT id FROM chunks WHERE id IN ({','.join('?' * len(found))})", list(found)).fetchall()}
            turn_vectors.store_own(tx, store.generation, [(i, v) for i, v in found.items() if i in still])
        kept += len(still)
    return kept


def _count_lines(store: Store, counter: TokenCounter, namespace: str | None) -> int:
    """Fill line_tokens where it is NULL (chunks written before schema 2), a batch per write lock.

    Recall counts such chunks itself, so this only moves a one-off cost (encoding each chunk once) off its path.
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
            tx.executemany("UPDATE chunks SET line_tokens = ? WHERE rowid = ? AND line_tokens IS NULL", costs)
        counted += len(costs)


def _reembed(store: Store, vectors: VectorIndex, embedder: Encoder, namespace: str, ids: Sequence[str]) -> int:
    """Embed chunks that have no vector, a batch at a time, outside the write lock."""
    db = store.db
    added = 0
    for start in range(0, len(ids), 256):
        part = list(ids[start:start + 256])
        marks = ",".join("?" * len(part))
        rows = db.execute(
            "SELECT c.id, c.text, c.heading, d.speaker, d.kind FROM chunks c JOIN documents d "
            f"ON d.namespace = c.namespace AND d.doc_id = c.doc_id WHERE c.id IN ({marks})",
            part,
        ).fetchall()
        if not rows:
            continue
        # A turn whose own embedding is kept needs no encoding (sync mixes it with its neighbours afterwards).
        own = turn_vectors.own_vectors(db, store.generation, [r[0] for r in rows])
        fresh = [r for r in rows if r[0] not in own]
        texts = [indexed_text(t, h, s) for _, t, h, s, _ in fresh]
        encoded: np.ndarray | list[np.ndarray] = embedder.encode_documents(texts) if texts else []
        own.update(zip([r[0] for r in fresh], encoded, strict=True))
        with store.write_lock:
            # Chunks replaced while we were embedding are skipped: their new version brought its own vectors.
            still = {r[0] for r in db.execute(f"SELECT id FROM chunks WHERE id IN ({marks})", part).fetchall()}
            keep = [r[0] for r in rows if r[0] in still]
            if not keep:
                continue
            vectors.add(namespace, keep, np.stack([own[i] for i in keep]))
            with store.transaction() as tx:
                # Written as own embeddings (mix NULL): the vectors just added are unmixed.
                turn_vectors.store_own(tx, store.generation, [(r[0], own[r[0]]) for r in rows
                                                         if r[4] == "memory" and r[0] in still])
        added += len(keep)
    return added


def _drop_orphan_collections(store: Store) -> int:
    """Drop this generation's experience collections that belong to no namespace SQLite knows; vectors removed.

    A collection records no namespace (memory.store), so one whose namespace has no row (a kill between the
    vector write and the SQLite commit of a new namespace) is known only by its name matching no namespace's.
    """
    pattern = re.compile(r"exp-[0-9a-f]{24}" + (f"-g{store.generation}" if store.generation else ""))
    removed = 0
    # Under the write lock no write is between its vector step and its SQLite step (as in repair()).
    with store.write_lock:
        own = {collection_name(n, generation=store.generation) for n in catalog.namespaces(store.db)}
        for name in store.collection_names():
            if pattern.fullmatch(name) and name not in own:
                with store.vector_lock.shared():
                    removed += int(store.chroma.get_collection(name, embedding_function=None).count())
                store.drop_collection_named(name)
    return removed


def _collection_namespaces(store: Store) -> list[str]:
    """Namespaces named in an experience collection's metadata (stores written before collections lost it)."""
    out = []
    with store.vector_lock.shared():  # an erase pass may be vacuuming Chroma's file (memory.erase)
        for collection in store.chroma.list_collections():
            name = str(getattr(collection, "name", collection))
            if name.startswith("exp-"):
                metadata = store.chroma.get_collection(name, embedding_function=None).metadata or {}
                if "namespace" in metadata:
                    out.append(str(metadata["namespace"]))
    return out
