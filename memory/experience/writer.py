"""Atomic document writes over SQLite (record of truth) and Chroma (vectors).

A content change is written in this order: embed (outside every lock; a text the namespace holds already keeps
its vector); in one SQLite transaction swap document row + chunks + FTS rows, ask the caller's guard whether the
write may still commit (an ingest job's: memory.jobs), then add the new version's vectors under new chunk ids and
commit; delete the old version's vectors; re-mix the vectors of conversation turns whose
neighbours changed (memory.experience.turn_vectors). A failure or a kill at any point leaves SQLite on the old or the
new version, whole; the only possible debris is vectors SQLite does not know, which memory.experience.repair
removes (it also finishes a re-mix a kill cut short).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np

from memory.bullet import body_cost
from memory.clock import Clock, parse_iso, to_iso
from memory.database import Connection
from memory.embedding import Progress
from memory.errors import StoreError
from memory.experience import catalog, lexical, turn_vectors
from memory.experience.dense import VectorIndex
from memory.experience.model import (
    ChunkInput,
    DocumentKind,
    DocumentResult,
    indexed_text,
)
from memory.experience.turn_vectors import TurnContext
from memory.store import Store
from memory.tokens import TokenCounter

__all__ = ["DocumentInput", "DocumentWriter", "Encoder", "IngestProgress", "SentenceEncoder", "WriteGuard", "chunk_id"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})

# (stage, done, total) of a document write: "chunking" counts the sentences embedded to find topic shifts,
# "embedding" the chunks; an exception it raises stops the write before anything is stored.
IngestProgress = Callable[[str, int, int], None]
# Called inside a write's transaction once its rows are in and before its vectors are: an exception it raises rolls
# the write back and leaves nothing a reader sees (an ingest job's check that it may still store: memory.jobs).
WriteGuard = Callable[[Connection], None]
_log = logging.getLogger(__name__)


class Encoder(Protocol):
    """What experience memory needs of an embedder (memory.embedding.Embedder is one)."""

    def encode_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray: ...

    def encode_query(self, text: str) -> np.ndarray: ...


class SentenceEncoder:
    """The embedder as chunking sees it: reports the sentences it embeds to `progress` as the "chunking" stage,
    and keeps their vectors (`vectors`, by text), so that a chunk that is one whole sentence is not embedded again."""

    def __init__(self, embedder: Encoder, progress: IngestProgress | None = None) -> None:
        self._embedder = embedder
        self._progress = progress
        self.vectors: dict[str, np.ndarray] = {}

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        report = None if self._progress is None else partial(self._progress, "chunking")
        vectors = self._embedder.encode_documents(texts, progress=report)
        self.vectors.update(zip(texts, vectors, strict=True))
        return vectors

    def take(self, texts: Iterable[str]) -> dict[str, np.ndarray]:
        """Copies of the vectors of those texts it embedded; the others are forgotten (they pin the whole call's
        array in memory)."""
        wanted = set(texts)
        kept = {text: np.array(vector) for text, vector in self.vectors.items() if text in wanted}
        self.vectors.clear()
        return kept


@dataclass(frozen=True)
class DocumentInput:
    """One document (or memory) to store, already chunked; times are ISO strings or None for 'now'."""

    doc_id: str
    chunks: tuple[ChunkInput, ...]
    content_hash: str
    kind: DocumentKind = "document"
    title: str | None = None
    source: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    project: str | None = None
    tags: tuple[str, ...] = ()
    speaker: str | None = None


@dataclass(frozen=True)
class _NewChunk:
    ordinal: int
    text: str
    heading: str
    indexed: str
    text_hash: str
    tokens: int
    terms: str = ""  # filled only for content that will be written: jieba is the slow part of a write
    line_tokens: int = 0  # bullet.body_cost(indexed), also filled only for content that will be written


@dataclass
class _Plan:
    doc: DocumentInput
    chunks: list[_NewChunk]
    fields: dict[str, Any]
    status: str = "content"  # content | metadata | unchanged: what the write must do
    is_new: bool = False
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # text_hash -> vector


def chunk_id(namespace: str, doc_id: str, version: int, ordinal: int) -> str:
    """`c<hash of namespace and doc id>-<version>-<ordinal>`: unique across namespaces, new for every version."""
    digest = hashlib.sha256(f"{namespace}\0{doc_id}".encode()).hexdigest()[:20]
    return f"c{digest}-{version}-{ordinal}"


class DocumentWriter:
    """Creates, replaces and deletes documents of experience memory."""

    def __init__(
        self, store: Store, vectors: VectorIndex, embedder: Encoder, counter: TokenCounter, clock: Clock,
        turn_context: TurnContext = turn_vectors.OFF,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._counter = counter
        self._clock = clock
        self._context = turn_context
        self.vectors = vectors

    def write(self, namespace: str, docs: Sequence[DocumentInput], progress: IngestProgress | None = None,
              known: Mapping[str, np.ndarray] | None = None, *, guard: WriteGuard | None = None,
              ) -> list[DocumentResult]:
        """Store documents; unchanged ones cost one read, the rest are embedded in one call and swapped in, in one
        transaction (all of them or none). `known` maps texts to vectors already computed (chunking's sentences);
        `guard` may stop the write inside that transaction (WriteGuard)."""
        now = to_iso(self._clock())
        latest = {doc.doc_id: doc for doc in docs}  # the same id twice in one batch: the last one wins
        plans = [self._plan(self._store.db, namespace, doc, now) for doc in latest.values()]
        changed = [p for p in plans if p.status == "content"]
        for plan in changed:
            plan.chunks = [
                replace(c, terms=lexical.index_terms(c.indexed), line_tokens=body_cost(c.indexed, self._counter))
                for c in plan.chunks
            ]
            if known:
                plan.vectors = {c.text_hash: known[c.indexed] for c in plan.chunks if c.indexed in known}
        self._embed(namespace, changed, progress)
        with self._store.write_lock:
            self._swap(namespace, [p for p in plans if p.status in ("content", "metadata")], guard)
        results = {
            p.doc.doc_id: DocumentResult(p.doc.doc_id, len(p.chunks), "unchanged" if p.status == "unchanged"
                                         else "created" if p.is_new else "updated")
            for p in plans
        }
        return [results[doc.doc_id] for doc in docs]

    def _plan(self, db: Connection, namespace: str, doc: DocumentInput, now: str) -> _Plan:
        chunks = []
        for chunk in sorted(doc.chunks, key=lambda c: c.ordinal):
            text = indexed_text(chunk.text, chunk.heading, doc.speaker)
            chunks.append(_NewChunk(
                chunk.ordinal, chunk.text, chunk.heading, text,
                hashlib.sha256(text.encode("utf-8")).hexdigest()[:32], self._counter.count(text),
            ))
        old = catalog.get_document(db, namespace, doc.doc_id)
        fields: dict[str, Any] = {
            "kind": doc.kind, "title": doc.title, "source": doc.source, "project": doc.project,
            "tags": json.dumps(list(doc.tags), ensure_ascii=False),
            "speaker": doc.speaker, "metadata": json.dumps(dict(doc.metadata), ensure_ascii=False, sort_keys=True),
        }
        if doc.created_at is not None:
            fields["created_at"] = to_iso(parse_iso(doc.created_at, "created_at"))
        if doc.updated_at is not None:
            fields["updated_at"] = to_iso(parse_iso(doc.updated_at, "updated_at"))
        plan = _Plan(doc, chunks, fields)
        if old is None:
            fields.setdefault("created_at", fields.get("updated_at", now))
            fields.setdefault("updated_at", now)
            plan.is_new = True
            plan.status = "content"
            return plan
        stored = {
            "kind": old.kind, "title": old.title, "source": old.source, "project": old.project,
            "tags": json.dumps(list(old.tags), ensure_ascii=False), "speaker": old.speaker,
            "metadata": json.dumps(dict(old.metadata), ensure_ascii=False, sort_keys=True),
            "created_at": old.created_at, "updated_at": old.updated_at,
        }
        old_hashes = db.execute(
            "SELECT ordinal, text_hash FROM chunks WHERE namespace = ? AND doc_id = ? ORDER BY ordinal",
            [namespace, doc.doc_id],
        ).fetchall()
        same_content = old.content_hash == doc.content_hash and [tuple(r) for r in old_hashes] == [
            (c.ordinal, c.text_hash) for c in chunks
        ]
        same_fields = all(stored[k] == v for k, v in fields.items())
        fields.setdefault("created_at", old.created_at)
        if same_content and same_fields:
            plan.status = "unchanged"
        elif same_content:
            fields.setdefault("updated_at", now)
            plan.status = "metadata"
        else:
            fields.setdefault("updated_at", now)
            plan.status = "content"
        return plan

    def _embed(self, namespace: str, plans: Sequence[_Plan], progress: IngestProgress | None = None) -> None:
        """Vectors for every new chunk, no text embedded twice: those a plan holds already (write's `known`), else
        the vector of any chunk of the namespace with the same text (an edited document's unchanged chunks, a
        passage two documents share); only the rest are encoded, in one call over every document of the write."""
        wanted = {c.text_hash: c.indexed for p in plans for c in p.chunks}
        given = {h: v for p in plans for h, v in p.vectors.items()}
        have = {**self._stored_vectors(namespace, [h for h in wanted if h not in given]), **given}
        missing = {h: text for h, text in wanted.items() if h not in have}
        if missing:
            report = None if progress is None else partial(progress, "embedding")
            encoded = self._embedder.encode_documents(list(missing.values()), progress=report)
            have.update(zip(missing, encoded, strict=True))
        for plan in plans:
            plan.vectors = {c.text_hash: have[c.text_hash] for c in plan.chunks}

    def _stored_vectors(self, namespace: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """The vectors the namespace already holds for these text hashes, found without the write lock.

        A conversation turn's Chroma vector carries its neighbours (memory.experience.turn_vectors): only its own
        embedding is reused. A document chunk's is read from Chroma, and kept only if its row is still there
        afterwards: a write that replaces the chunk commits before it overwrites the old vector with noise.
        """
        db = self._store.db
        documents: dict[str, str] = {}  # text hash -> the id of a document chunk with that text
        turns: dict[str, str] = {}  # text hash -> the id of a conversation turn with that text
        for start in range(0, len(hashes), 500):
            part = list(hashes[start:start + 500])
            for cid, text_hash, kind in db.execute(
                "SELECT c.id, c.text_hash, d.kind FROM chunks c JOIN documents d ON d.namespace = c.namespace "
                f"AND d.doc_id = c.doc_id WHERE c.namespace = ? AND c.text_hash IN ({','.join('?' * len(part))})",
                [namespace, *part],
            ).fetchall():
                (turns if kind == "memory" else documents).setdefault(text_hash, cid)
        own = turn_vectors.own_vectors(db, self._store.generation, list(turns.values()))
        have = {h: own[cid] for h, cid in turns.items() if cid in own}
        asked = {cid: h for h, cid in documents.items() if h not in have}
        fetched = self.vectors.fetch(namespace, list(asked))
        ids = list(fetched)
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            for (cid,) in db.execute(f"SELECT id FROM chunks WHERE id IN ({','.join('?' * len(part))})",
                                     part).fetchall():
                have[asked[cid]] = fetched[cid]
        return have

    def _swap(self, namespace: str, plans: Sequence[_Plan], guard: WriteGuard | None = None) -> None:
        """Under the write lock: new vectors in, one transaction swaps SQLite, old vectors out."""
        if not plans:
            return
        db = self._store.db
        new_ids: list[str] = []
        new_vectors: list[np.ndarray] = []
        turns: list[tuple[str, np.ndarray]] = []  # new chunks of conversation turns: their own embeddings
        live: list[_Plan] = []
        touched: set[str] = set()  # doc ids whose turns (before or after) change: their neighbours' vectors too
        for plan in plans:
            current = db.execute(
                "SELECT version, kind FROM documents WHERE namespace = ? AND doc_id = ?",
                [namespace, plan.doc.doc_id],
            ).fetchone()
            if current is None and plan.status != "content":
                # A metadata-only change to a document deleted since the plan was made: the delete came last,
                # so there is nothing to change (writing the row alone would leave a document without chunks).
                continue
            live.append(plan)
            # Read again under the lock: another writer may have stored a version since the plan was made.
            plan.fields["version"] = (current[0] if current else 0) + (plan.status == "content")
            if plan.status == "content":
                for chunk in plan.chunks:
                    new_ids.append(chunk_id(namespace, plan.doc.doc_id, plan.fields["version"], chunk.ordinal))
                    new_vectors.append(plan.vectors[chunk.text_hash])
                    if plan.doc.kind == "memory":
                        turns.append((new_ids[-1], new_vectors[-1]))
                if plan.doc.kind == "memory" or (current is not None and current[1] == "memory"):
                    touched.add(plan.doc.doc_id)
        times: list[str] = []
        generation = self._store.generation
        try:
            with self._store.transaction() as tx:
                old_ids = []
                for plan in live:
                    replaced, moments = self._write_sql(tx, namespace, plan)
                    old_ids += replaced
                    if plan.doc.doc_id in touched:
                        times += moments
                if old_ids:  # the replaced version's text and ids must leave the disk too (memory.erase)
                    self._store.erase_later(tx, vectors_of=namespace)
                turn_vectors.store_own(tx, generation, turns)
                # New turns go into Chroma already mixed with their neighbours (re-writing a vector costs
                # as much again); the transaction sees its own rows, so the neighbours are those after the write.
                fresh = set(new_ids)
                remixes = turn_vectors.stale(tx, namespace, generation, self._context, times)
                first = [r for r in remixes if r.chunk_id in fresh]
                stored = [r for r in remixes if r.chunk_id not in fresh]  # rewritten after the commit
                turn_vectors.record(tx, generation, first)
                mixed = {r.chunk_id: r.vector for r in first}
                if guard is not None:  # last before the vectors: Chroma is not asked to add what is rolled back
                    guard(tx)
                if new_ids:
                    # Still inside the transaction: SQLite commits only once the vectors are in.
                    self.vectors.add(namespace, new_ids, np.stack([mixed.get(cid, vector) for cid, vector
                                                                   in zip(new_ids, new_vectors, strict=True)]))
        except BaseException:
            self.vectors.delete(namespace, new_ids)
            raise
        self.vectors.delete(namespace, old_ids, scrub=True)  # an old version is deleted text too
        # Turns stored before whose neighbours changed: found in the transaction, still true under the lock.
        self._remix(namespace, lambda: turn_vectors.apply(self._store, generation, self._put(namespace), stored))

    def _sync_turns(self, namespace: str, times: Sequence[str]) -> None:
        """Re-mix the vectors of the turns around these times (under the write lock, after the commit)."""
        if times:
            self._remix(namespace, lambda: turn_vectors.sync(self._store, namespace, self._store.generation,
                                                        self._context, self._put(namespace), around=times))

    def _put(self, namespace: str) -> turn_vectors.Put:
        return partial(self.vectors.replace, namespace)

    @staticmethod
    def _remix(namespace: str, step: Callable[[], int]) -> None:
        """Run a re-mix after a write's commit. The write is committed by now: a Chroma failure here must not
        report it as failed. The turns stay recorded as stale (or without a vector) for the next open's repair.
        """
        try:
            step()
        except StoreError as exc:
            _log.warning("turn vectors of namespace %r left for repair: %s", namespace, exc)

    def _write_sql(self, tx: Connection, namespace: str, plan: _Plan) -> tuple[list[str], list[str]]:
        """Rewrite one document's rows inside the open transaction; returns the chunk ids it replaced and the
        times (updated_at) of the chunks it removed and wrote."""
        f = plan.fields
        doc_id = plan.doc.doc_id
        tokens = sum(c.tokens for c in plan.chunks)
        tx.execute(
            "INSERT INTO documents (namespace, doc_id, kind, title, source, content_hash, version, state, "
            "chunk_count, tokens, project, tags, speaker, metadata, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, 'ready', ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (namespace, doc_id) DO UPDATE SET kind = excluded.kind, title = excluded.title, "
            "source = excluded.source, content_hash = excluded.content_hash, version = excluded.version, "
            "chunk_count = excluded.chunk_count, tokens = excluded.tokens, project = excluded.project, "
            "tags = excluded.tags, speaker = excluded.speaker, metadata = excluded.metadata, "
            "created_at = excluded.created_at, updated_at = excluded.updated_at",
            [namespace, doc_id, f["kind"], f["title"], f["source"], plan.doc.content_hash, f["version"],
             len(plan.chunks), tokens, f["project"], f["tags"], f["speaker"], f["metadata"], f["created_at"],
             f["updated_at"]],
        )
        if plan.status != "content":
            return [], []
        old = tx.execute(
            "SELECT rowid, id, text_hash, created_at, updated_at FROM chunks WHERE namespace = ? AND doc_id = ?",
            [namespace, doc_id],
        ).fetchall()
        # A chunk whose text is unchanged keeps its times: freshness follows the text, not the file.
        kept = {text_hash: (created, updated) for _, _, text_hash, created, updated in old}
        lexical.remove(tx, [r[0] for r in old])
        tx.executemany("DELETE FROM chunks WHERE rowid = ?", [(r[0],) for r in old])
        fresh = (f["created_at"], f["updated_at"]) if plan.is_new else (f["updated_at"], f["updated_at"])
        rows = []
        times = [r[4] for r in old]
        for chunk in plan.chunks:
            created, updated = kept.get(chunk.text_hash, fresh)
            times.append(updated)
            rowid = tx.execute(
                "INSERT INTO chunks (id, namespace, doc_id, doc_version, ordinal, text, heading, text_hash, "
                "tokens, line_tokens, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING rowid",
                [chunk_id(namespace, doc_id, f["version"], chunk.ordinal), namespace, doc_id, f["version"],
                 chunk.ordinal, chunk.text, chunk.heading, chunk.text_hash, chunk.tokens, chunk.line_tokens,
                 created, updated],
            ).fetchone()[0]
            rows.append((int(rowid), namespace, chunk.terms))
        lexical.index(tx, rows)
        return [r[1] for r in old], times

    def delete(self, namespace: str, doc_ids: Sequence[str]) -> int:
        """Remove documents from SQLite, the FTS index and Chroma; returns how many existed."""
        with self._store.write_lock:
            with self._store.transaction() as tx:
                found = 0
                old: list[tuple[int, str]] = []
                times: list[str] = []  # of removed conversation turns: their neighbours' vectors change
                for doc_id in doc_ids:
                    kind = tx.execute(
                        "SELECT kind FROM documents WHERE namespace = ? AND doc_id = ?", [namespace, doc_id]
                    ).fetchone()
                    found += tx.execute(
                        "DELETE FROM documents WHERE namespace = ? AND doc_id = ?", [namespace, doc_id]
                    ).rowcount
                    chunks = tx.execute(
                        "SELECT rowid, id, updated_at FROM chunks WHERE namespace = ? AND doc_id = ?",
                        [namespace, doc_id],
                    ).fetchall()
                    old += [(r[0], r[1]) for r in chunks]
                    if kind is not None and kind[0] == "memory":
                        times += [r[2] for r in chunks]
                lexical.remove(tx, [r[0] for r in old])
                tx.executemany("DELETE FROM chunks WHERE rowid = ?", [(r[0],) for r in old])
                if old:
                    lexical.forget(tx)  # a deleted document must leave no term behind
                if found or old:  # and nothing on disk: not in the WAL, not in Chroma's files (memory.erase)
                    self._store.erase_later(tx, vectors_of=namespace if old else None)
            self.vectors.delete(namespace, [r[1] for r in old], scrub=True)
            self._sync_turns(namespace, times)
        return found

    def delete_namespace(self, namespace: str) -> int:
        """Remove every document of a namespace and its vector collection; returns how many there were."""
        with self._store.write_lock:
            with self._store.transaction() as tx:
                found = tx.execute("DELETE FROM documents WHERE namespace = ?", [namespace]).rowcount
                lexical.remove_namespace(tx, namespace)
                removed = tx.execute("DELETE FROM chunks WHERE namespace = ?", [namespace]).rowcount
                if removed:
                    lexical.forget(tx)
                if found or removed:  # the dropped collection's folder and rows go too (memory.erase)
                    self._store.erase_later(tx, dropped=namespace)
            self.vectors.drop(namespace)
        return found
