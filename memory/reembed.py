"""Re-encode a whole store with another embedder: new vectors into fresh collections, then one identity switch.

Every chunk's vector is rebuilt from the chunk text SQLite keeps, into collections of the next vector generation
(`exp-<digest>-g<n>`); only when every namespace is complete does one SQLite commit record the new model and
generation. A kill before that commit leaves the old identity and vectors in force (the next run first clears
the half-built generation); a kill after it leaves old-generation collections that the next run removes.
Stop the service first: a running service would keep writing vectors of the old model into the old generation.
A re-embed holds the store alone (memory.database: the data folder's lock; on PostgreSQL, an advisory lock that
every replica holds shared), so it is refused while anything has the store open, and nothing opens it meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import numpy as np

from memory.config import Config
from memory.embedding import EmbedderIdentity
from memory.errors import StoreError
from memory.experience import turn_vectors
from memory.experience.dense import collection_ids
from memory.experience.model import indexed_text
from memory.experience.turn_vectors import TurnContext
from memory.store import Store, StoreIdentity, collection_name, stored_identity

__all__ = ["ReembedReport", "chunk_count", "reembed"]

Progress = Callable[[int, int], None]  # (chunks just encoded, total chunks)

_BATCH = 64
_CHROMA_BATCH = 2000


class DocumentEncoder(Protocol):
    """What a re-embed needs of an embedder (memory.embedding.Embedder is one)."""

    identity: EmbedderIdentity

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class ReembedReport:
    """What a re-embed did: the identity before and after, and how much it encoded."""

    previous: StoreIdentity
    current: StoreIdentity
    namespaces: int
    chunks: int
    removed_collections: int


def chunk_count(config: Config) -> int:
    """How many chunks a re-embed of the store under config.service.data_dir would encode."""
    store = _open(config)
    try:
        return int(store.db.execute("SELECT count(*) FROM chunks").fetchone()[0])
    finally:
        store.close()


def reembed(config: Config, embedder: DocumentEncoder, progress: Progress | None = None,
            batch: int = _BATCH) -> ReembedReport:
    """Rebuild every vector of the store with `embedder`, then switch the store's identity to it."""
    store = _open(config)
    turn_context = TurnContext.of(config.retrieval)
    try:
        return _run(store, embedder, progress or (lambda done, total: None), batch, turn_context)
    finally:
        store.close()


def _open(config: Config) -> Store:
    identity = stored_identity(config)
    if identity is None:
        raise StoreError(
            f"there is no store in {config.data_path.resolve()} to re-embed; check --data or service.data_dir"
        )
    return Store(config, identity, alone=True)  # no process may write old-model vectors meanwhile


def _run(store: Store, embedder: DocumentEncoder, progress: Progress, batch: int,
         turn_context: TurnContext) -> ReembedReport:
    previous = store.identity
    target = store.generation + 1
    removed = _drop_other_generations(store, keep=store.generation)
    with store.transaction() as tx:  # a killed run's own embeddings of the half-built generation
        tx.execute("DELETE FROM turn_vectors WHERE generation != ?", [store.generation])
    db = store.db
    total = int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])
    namespaces = [r[0] for r in db.execute("SELECT DISTINCT namespace FROM chunks ORDER BY namespace").fetchall()]
    encoded = 0
    for namespace in namespaces:
        collection = store.collection(namespace, create=True, generation=target)
        ids = [r[0] for r in db.execute(
            "SELECT id FROM chunks WHERE namespace = ? ORDER BY rowid", [namespace]).fetchall()]
        for start in range(0, len(ids), batch):
            encoded += _encode_into(store, collection, embedder, ids[start:start + batch], target)
            progress(min(batch, len(ids) - start), total)
        encoded += _reconcile(store, collection, embedder, namespace, target)
        # Conversation turns are searched by vectors mixed with their neighbours' (memory.experience.turn_vectors).
        with store.write_lock:
            turn_vectors.sync(store, namespace, target, turn_context,
                         partial(_replace, collection))
    current = StoreIdentity(embedder.identity.backend, embedder.identity.model, embedder.identity.dimension,
                            previous.tokenizer)
    store.switch_identity(current, target)
    removed += _drop_other_generations(store, keep=target)
    with store.transaction() as tx:
        tx.execute("DELETE FROM turn_vectors WHERE generation != ?", [target])
    return ReembedReport(previous, current, len(namespaces), encoded, removed)


def _encode_into(store: Store, collection: Any, embedder: DocumentEncoder, ids: Sequence[str],
                 generation: int) -> int:
    if not ids:
        return 0
    marks = ",".join("?" * len(ids))
    rows = store.db.execute(
        "SELECT c.id, c.text, c.heading, d.speaker, d.kind FROM chunks c JOIN documents d "
        f"ON d.namespace = c.namespace AND d.doc_id = c.doc_id WHERE c.id IN ({marks})",
        list(ids),
    ).fetchall()
    if not rows:
        return 0
    vectors = embedder.encode_documents([indexed_text(t, h, s) for _, t, h, s, _ in rows])
    _upsert(collection, [r[0] for r in rows], vectors)
    with store.transaction() as tx:
        # The turns' own embeddings of the new generation, for chunks still there (a row written after its chunk
        # was deleted would never go: the trigger that removes them fires on the chunk's delete).
        still = {r[0] for r in tx.execute(f"SELECT id FROM chunks WHERE id IN ({marks})", list(ids)).fetchall()}
        turn_vectors.store_own(tx, generation, [(r[0], v) for r, v in zip(rows, vectors, strict=True)
                                           if r[4] == "memory" and r[0] in still])
    return len(rows)


def _upsert(collection: Any, ids: Sequence[str], vectors: np.ndarray) -> None:
    try:
        for start in range(0, len(ids), _CHROMA_BATCH):
            collection.upsert(ids=list(ids[start:start + _CHROMA_BATCH]),
                              embeddings=vectors[start:start + _CHROMA_BATCH])
    except Exception as exc:  # chromadb raises assorted errors for disk and validation problems
        raise StoreError(f"cannot write {len(ids)} re-embedded vectors to Chroma: {exc}") from exc


def _replace(collection: Any, ids: Sequence[str], vectors: np.ndarray) -> None:
    """Other vectors for existing ids: delete + add (an upsert of an existing id costs several times as much)."""
    for start in range(0, len(ids), _CHROMA_BATCH):
        collection.delete(ids=list(ids[start:start + _CHROMA_BATCH]))
    _upsert(collection, ids, vectors)


def _reconcile(store: Store, collection: Any, embedder: DocumentEncoder, namespace: str, generation: int) -> int:
    """Match the new collection to SQLite once more: chunks written or deleted meanwhile are caught here."""
    known = {r[0] for r in store.db.execute("SELECT id FROM chunks WHERE namespace = ?", [namespace]).fetchall()}
    present = collection_ids(collection)
    strays = sorted(present - known)
    for start in range(0, len(strays), _CHROMA_BATCH):
        collection.delete(ids=strays[start:start + _CHROMA_BATCH])
    missing = sorted(known - present)
    return sum(_encode_into(store, collection, embedder, missing[i:i + _BATCH], generation)
               for i in range(0, len(missing), _BATCH))


def _drop_other_generations(store: Store, keep: int) -> int:
    """Delete this store's experience collections of every vector generation but `keep`; returns how many."""
    # Only names of this store's namespaces: a Chroma server may hold other stores' collections too.
    ours = {collection_name(r[0]) for r in store.db.execute(
        "SELECT namespace FROM chunks UNION SELECT namespace FROM documents").fetchall()}
    removed = 0
    names = store.collection_names()
    with store.vector_lock.exclusive():  # no search, and no erase pass, while collections go
        for name in names:
            base, generation = _split(name)
            if base in ours and generation != keep:
                store.chroma.delete_collection(name)
                removed += 1
    return removed


def _split(name: str) -> tuple[str, int]:
    """A collection name made by memory.store.collection_name as (generation-0 name, generation)."""
    base, _, tail = name.rpartition("-")
    if base and tail.startswith("g") and tail[1:].isdigit():
        return base, int(tail[1:])
    return name, 0
