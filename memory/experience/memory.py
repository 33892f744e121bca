"""`ExperienceMemory`: the experience tier's library face: store documents and memories, search them hybrid."""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from memory.caches import Caches
from memory.chunking import Chunk, chunk_texts
from memory.clock import Clock, parse_iso, to_iso, utc_now
from memory.config import Config
from memory.embedding.queries import QueryVectors
from memory.errors import ConflictError, MemoryError_, NotFoundError, StoreError, ValidationError
from memory.experience import catalog, checks, conversations, identity, turn_vectors
from memory.experience.dense import VectorIndex
from memory.experience.model import (
    ChunkInfo,
    ChunkInput,
    DocumentInfo,
    DocumentKind,
    DocumentResult,
    MemoryTurn,
    SearchExplanation,
    SearchFilters,
    Shortlist,
    content_hash,
    indexed_text,
)
from memory.experience.repair import RepairReport, repair
from memory.experience.search import Search
from memory.experience.turn_vectors import TurnContext
from memory.experience.writer import (
    DocumentInput,
    DocumentWriter,
    Encoder,
    IngestProgress,
    SentenceEncoder,
    WriteGuard,
)
from memory.limits import check_count, check_length, check_score
from memory.namespaces import check_namespace
from memory.snippet import Snippet
from memory.store import Store
from memory.text.unicode import storable
from memory.tokens import TokenCounter

__all__ = ["ExperienceMemory", "TextInput"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TextInput:
    """One document to store: its text and the fields stored beside it (the one place they are named; an ingest
    job carries them as `payload()`)."""

    text: str
    doc_id: str | None = None
    derived_id: str | None = None
    title: str | None = None
    source: str | None = None
    updated_at: str | None = None
    metadata: Mapping[str, Any] | None = None
    project: str | None = None
    tags: Sequence[str] = ()

    def payload(self) -> dict[str, Any]:
        """The fields as JSON values, as an ingest job stores them."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {**fields, "metadata": dict(self.metadata or {}), "tags": list(self.tags)}

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> TextInput:
        """The document an ingest job's stored payload() names."""
        return cls(**{**payload, "tags": tuple(payload.get("tags") or ())})


@dataclass(frozen=True)
class _PendingText:
    """A text of add_texts that passed its checks and is to be chunked."""

    index: int
    item: TextInput  # as check_text answers it: the text without NUL characters, updated_at normalised
    digest: str
    doc_id: str
    exists: bool  # a document of that id is stored (with other content)


def _signature(chunks: Sequence[ChunkInput]) -> list[tuple[int, str, str]]:
    """What makes two documents' chunks the same content (catalog.same_chunks compares the same)."""
    return sorted((c.ordinal, c.text, c.heading) for c in chunks)


class ExperienceMemory:
    """Documents and conversation memories of every namespace: atomic writes, hybrid dense + lexical search."""

    def __init__(
        self, store: Store, embedder: Encoder, counter: TokenCounter, config: Config, clock: Clock = utc_now,
        caches: Caches | None = None, queries: QueryVectors | None = None,
    ) -> None:
        self._caches = caches or Caches()  # what layers above keep of this tier's records (memory.caches)
        queries = queries or QueryVectors(embedder, self._caches)
        self._store = store
        self._config = config
        self._clock = clock
        self._embedder = embedder
        self._counter = counter
        self._vectors = VectorIndex(store)  # one handle cache shared by writes and searches
        self._context = TurnContext.of(config.retrieval)
        self._writer = DocumentWriter(store, self._vectors, embedder, counter, clock, self._context)
        self._search = Search(store, self._vectors, queries, config.retrieval, clock)
        self._stop_remix = threading.Event()
        self._remixer: threading.Thread | None = None

    def add_document(
        self,
        namespace: str,
        doc_id: str,
        chunks: Sequence[ChunkInput],
        *,
        content_hash: str,
        title: str | None = None,
        source: str | None = None,
        kind: DocumentKind = "document",
        created_at: str | None = None,
        updated_at: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        project: str | None = None,
        tags: Sequence[str] = (),
        speaker: str | None = None,
        progress: IngestProgress | None = None,
    ) -> DocumentResult:
        """Store or replace a chunked document as one unit; an unchanged document costs one read, no embedding."""
        check_namespace(namespace)
        doc = self._document_input(doc_id, chunks, content_hash=content_hash, title=title, source=source, kind=kind,
                                   created_at=created_at, updated_at=updated_at, metadata=metadata,
                                   project=project, tags=tags, speaker=speaker)
        return self._writer.write(namespace, [doc], progress)[0]

    def _document_input(
        self, doc_id: str, chunks: Sequence[ChunkInput], *, content_hash: str, title: str | None = None,
        source: str | None = None, kind: DocumentKind = "document", created_at: str | None = None,
        updated_at: str | None = None, metadata: Mapping[str, Any] | None = None, project: str | None = None,
        tags: Sequence[str] = (), speaker: str | None = None,
    ) -> DocumentInput:
        """The checked DocumentInput of add_document's arguments."""
        checks.check_record("document", metadata or {}, {
            "doc_id": doc_id, "title": title, "source": source, "project": project, "speaker": speaker,
            **{f"tags[{i}]": t for i, t in enumerate(tags)},
            **{f"chunks[{i}].text": getattr(c, "text", None) for i, c in enumerate(chunks)},
            **{f"chunks[{i}].heading": getattr(c, "heading", None) for i, c in enumerate(chunks)},
        }, self._config.limits)
        return DocumentInput(
            doc_id=checks.require_text(doc_id, "doc_id"), chunks=checks.check_chunks(doc_id, chunks),
            content_hash=checks.require_text(content_hash, "content_hash"), kind=checks.check_kind(kind), title=title,
            source=source, created_at=created_at, updated_at=updated_at, metadata=dict(metadata or {}),
            project=project, tags=checks.check_tags(tags), speaker=speaker,
        )

    def add_text(self, namespace: str, item: TextInput, *, progress: IngestProgress | None = None,
                 guard: WriteGuard | None = None) -> DocumentResult:
        """Chunk and store one document's text; one unchanged in text and fields is recognised before any model call.

        An explicit `doc_id` names the document: the same id again updates it (or answers unchanged). Without
        one the id is `derived_id` (the name a file goes by, from ingest.identity) or else derived from `source`
        (or from the text when there is no source), and nothing existing is overwritten: the same content under
        that id, or under any id of the namespace, answers unchanged with that id; other content under that id
        raises ConflictError. NUL characters are dropped from the text (ids and names refuse them). `guard` may
        stop the write inside its transaction (memory.experience.writer.WriteGuard: an ingest job's).
        """
        outcome = self.add_texts(namespace, [item], progress=progress, guard=guard)[0]
        if isinstance(outcome, MemoryError_):
            raise outcome
        return outcome

    def add_texts(self, namespace: str, texts: Sequence[TextInput], *, progress: IngestProgress | None = None,
                  guard: WriteGuard | None = None) -> list[DocumentResult | MemoryError_]:
        """add_text for many documents at once: for each, the result add_text returns or the error it raises.

        The model sees them together: one call embeds the sentences of all of them (chunking's topic shifts) and
        one their chunks, in full batches, each distinct text once. They are written in one transaction, each
        document whole or not at all; a write that fails is the outcome of every document in it. The same doc_id
        twice in one call: the last one is stored, and both answer its result.
        """
        outcomes: dict[int, DocumentResult | MemoryError_] = {}
        pending: list[_PendingText] = []
        for index, item in enumerate(texts):
            try:
                found = self._pending_text(namespace, index, item)
            except MemoryError_ as exc:
                outcomes[index] = exc
                continue
            if isinstance(found, DocumentResult):
                outcomes[index] = found
            else:
                pending.append(found)
        encoder = SentenceEncoder(self._embedder, progress)
        chunked = chunk_texts([p.item.text for p in pending], self._counter, encoder, self._config.chunking)
        docs: dict[str, DocumentInput] = {}  # doc id -> what this call writes under it
        owners: dict[str, list[int]] = {}  # doc id -> the texts (by index) that answer its write's result
        for text, chunks in zip(pending, chunked, strict=True):
            try:
                planned = self._planned(namespace, text, chunks, docs)
            except MemoryError_ as exc:
                outcomes[text.index] = exc
                continue
            if isinstance(planned, DocumentResult):
                outcomes[text.index] = planned
                continue
            docs[planned.doc_id] = planned
            owners.setdefault(planned.doc_id, []).append(text.index)
        if docs:
            known = encoder.take(indexed_text(c.text, c.heading) for d in docs.values() for c in d.chunks)
            try:
                written: list[DocumentResult | MemoryError_] = list(
                    self._writer.write(namespace, list(docs.values()), progress, known, guard=guard))
            except MemoryError_ as exc:
                written = [exc] * len(docs)
            for doc_id, outcome in zip(docs, written, strict=True):
                outcomes.update((index, outcome) for index in owners[doc_id])
        return [outcomes[index] for index in range(len(texts))]

    def _pending_text(self, namespace: str, index: int, item: TextInput) -> _PendingText | DocumentResult:
        """A text checked and named, or its result when the document is stored unchanged (no model call)."""
        item = self.check_text(namespace, item)
        fields = dict(item.metadata or {})
        digest = content_hash(item.text, title=item.title, source=item.source, metadata=fields,
                              project=item.project, tags=list(item.tags), updated_at=item.updated_at)
        doc_id = item.doc_id if item.doc_id is not None else identity.derived_id(item.derived_id, item.source,
                                                                                   item.text)
        doc_id = checks.require_text(doc_id, "doc_id")  # refused as add_document would, before the model is asked
        known = catalog.get_document(self._store.db, namespace, doc_id)
        if known is not None and known.content_hash == digest:
            return DocumentResult(doc_id=doc_id, chunks=known.chunks, status="unchanged")
        return _PendingText(index, item, digest, doc_id, known is not None)

    def _planned(self, namespace: str, text: _PendingText, chunks: Sequence[Chunk],
                 docs: Mapping[str, DocumentInput]) -> DocumentInput | DocumentResult:
        """What add_texts writes for a chunked text, or its result when nothing is to be written: the rules of
        add_text (memory.experience.identity), with the documents this call writes before it counted as stored."""
        if not chunks:
            raise ValidationError("the document has no text to index once blank lines and markup are removed")
        pieces = [ChunkInput(text=c.text, heading=c.heading, ordinal=c.ordinal) for c in chunks]
        item = text.item
        earlier = docs.get(text.doc_id)  # written by this call before this text: as if stored already
        if earlier is not None and (earlier.content_hash == text.digest
                                    or (item.doc_id is None and _signature(earlier.chunks) == _signature(pieces))):
            return DocumentResult(doc_id=text.doc_id, chunks=len(earlier.chunks), status="unchanged")
        if item.doc_id is None:
            if earlier is not None:
                raise ConflictError(
                    f"document {text.doc_id!r} already exists in namespace {namespace!r} with other content, and "
                    f"nothing was overwritten; send doc_id={text.doc_id!r} to replace it, or another doc_id to keep "
                    "both")
            kept = identity.kept(self._store.db, namespace, text.doc_id, text.exists, pieces)
            if kept is not None:
                return kept
            twin = next((d.doc_id for d in docs.values() if _signature(d.chunks) == _signature(pieces)), None)
            if twin is not None:
                return DocumentResult(doc_id=twin, chunks=len(pieces), status="unchanged")
        return self._document_input(
            text.doc_id, pieces, content_hash=text.digest, title=item.title, source=item.source,
            updated_at=item.updated_at, metadata=dict(item.metadata or {}), project=item.project, tags=tuple(item.tags),
        )

    def check_text(self, namespace: str, item: TextInput) -> TextInput:
        """What add_text checks before any work, raising as it would; answers the document with its text without
        NUL characters and `updated_at` normalised (an ingest job is refused at the door, not minutes later)."""
        check_namespace(namespace)
        if not isinstance(item, TextInput):
            raise ValidationError(f"a document is given as a memory.TextInput, not a {type(item).__name__}")
        text = item.text
        check_length(text, self._config.limits.max_text_chars, "text", "limits.max_text_chars")
        if isinstance(text, str):
            text = text.replace("\x00", "")
        if not isinstance(text, str) or not text.strip():
            raise ValidationError("text must be a non-empty string; send the document's content")
        storable(text, "text")
        checks.check_record("document", item.metadata or {}, {
            "doc_id": item.doc_id, "derived_id": item.derived_id, "title": item.title, "source": item.source,
            "project": item.project, **{f"tags[{i}]": t for i, t in enumerate(item.tags)},
        }, self._config.limits)
        updated_at = None if item.updated_at is None else to_iso(parse_iso(item.updated_at, "updated_at"))
        return dataclasses.replace(item, text=text, updated_at=updated_at)

    def add_memories(self, namespace: str, turns: Sequence[MemoryTurn]) -> list[DocumentResult]:
        """Store conversation turns, each its own one-chunk memory timed by its timestamp; one embedding call.

        A turn without a timestamp is stamped now and belongs to its `conversation`, else to this call's: its
        neighbours are the turns next to it there (memory.experience.conversations), never those of another call.
        """
        check_namespace(namespace)
        limits = self._config.limits
        check_count(len(turns), limits.max_batch, "messages", "send them in smaller batches")
        for i, turn in enumerate(turns):
            check_length(turn.text, limits.max_text_chars, f"turns[{i}].text", "limits.max_text_chars")
        now = to_iso(self._clock())
        request = conversations.request_conversation(now, [(t.speaker, t.text) for t in turns if not t.timestamp])
        belongs: dict[str, str | None] = {}  # doc id -> conversation (None: on the timeline, by its own time)
        docs = []
        for i, turn in enumerate(turns):
            text = checks.require_text(turn.text, f"turns[{i}].text")
            checks.check_record(f"turns[{i}]", turn.metadata, {
                "speaker": turn.speaker, "source": turn.source, "project": turn.project, "doc_id": turn.doc_id,
                "conversation": turn.conversation, **{f"tags[{j}]": t for j, t in enumerate(turn.tags)},
            }, self._config.limits)
            if turn.conversation is not None:
                checks.require_text(turn.conversation, f"turns[{i}].conversation")
            # Normalised here, so every caller (REST, file ingest, library) stores the same ISO form.
            when = to_iso(parse_iso(turn.timestamp, f"turns[{i}].timestamp")) if turn.timestamp else now
            conversation = None if turn.timestamp else turn.conversation or request
            # The same words said in two conversations at one moment are two memories.
            identity = f"{turn.speaker or ''}\0{when}\0{text}" + (f"\0{conversation}" if conversation else "")
            doc_id = turn.doc_id or "m-" + hashlib.sha256(identity.encode()).hexdigest()[:24]
            belongs[doc_id] = conversation
            docs.append(DocumentInput(
                doc_id=doc_id,
                chunks=(ChunkInput(text=text),),
                content_hash=hashlib.sha256(f"{turn.speaker or ''}\0{text}".encode()).hexdigest(),
                kind="memory", source=turn.source, created_at=when, updated_at=when,
                metadata=dict(turn.metadata), project=turn.project, tags=checks.check_tags(turn.tags),
                speaker=turn.speaker,
            ))
        # Recorded before the write, which mixes the new turns' vectors with their neighbours. A timed turn with a
        # generated id never had a row, so a call of only those has nothing to record.
        recorded = any(c is not None for c in belongs.values()) or any(t.doc_id for t in turns)
        if recorded:
            with self._store.transaction() as tx:
                conversations.assign(tx, namespace, belongs)
        try:
            return self._writer.write(namespace, docs)
        except Exception:
            if recorded:
                with self._store.transaction() as tx:
                    conversations.forget_unwritten(tx, namespace, list(belongs))
            raise

    def list_documents(self, namespace: str, *, kind: DocumentKind | None = None, limit: int | None = None,
                       offset: int = 0) -> list[DocumentInfo]:
        """The namespace's documents and memories (of one kind, when given), newest first; `limit` and `offset`
        page through them (every one without a limit)."""
        if kind is not None and kind not in ("document", "memory"):
            raise ValidationError(f"kind must be 'document' or 'memory', got {str(kind)[:40]!r}")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise ValidationError(f"limit must be a whole number of 0 or more, got {limit!r}")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValidationError(f"offset must be a whole number of 0 or more, got {offset!r}")
        return catalog.list_documents(self._store.db, namespace, kind, limit, offset)

    def count_documents(self, namespace: str) -> dict[str, int]:
        """How many documents ("document") and conversation turns ("memory") the namespace holds."""
        documents, memories, _ = catalog.namespace_counts(self._store.db, namespace).get(namespace, (0, 0, 0))
        return {"document": documents, "memory": memories}

    def counts(self, within: Callable[[str], bool] | None = None) -> dict[str, tuple[int, int, int]]:
        """(documents, conversation turns, chunks) per namespace that holds one, of those `within` accepts."""
        found = catalog.namespace_counts(self._store.db)
        return {ns: n for ns, n in found.items() if within is None or within(ns)}

    def get_document(self, namespace: str, doc_id: str) -> DocumentInfo:
        """One document; NotFoundError when the namespace has no such id."""
        found = catalog.get_document(self._store.db, namespace, doc_id)
        if found is None:
            raise NotFoundError(
                f"no document {doc_id!r} in namespace {namespace!r}; the namespace's list of documents shows the "
                "ids that exist"
            )
        return found

    def chunks(self, namespace: str, doc_id: str) -> list[ChunkInfo]:
        """One document's chunks in reading order, with their token counts; NotFoundError when there is none."""
        self.get_document(namespace, doc_id)
        return catalog.document_chunks(self._store.db, namespace, doc_id)

    def delete_document(self, namespace: str, doc_id: str) -> None:
        """Remove a document from SQLite, the lexical index and Chroma; NotFoundError when there is none."""
        if not self._writer.delete(namespace, [doc_id]):
            raise NotFoundError(
                f"no document {doc_id!r} in namespace {namespace!r} to delete; the namespace's list of documents "
                "shows the ids that exist"
            )
        self._caches.forget(namespace)  # sentences of it that a layer above kept

    def delete_namespace(self, namespace: str) -> int:
        """Remove every document and memory of the namespace; returns how many there were (0 is fine)."""
        removed = self._writer.delete_namespace(namespace)
        if removed:  # nothing deleted, nothing to forget
            self._caches.forget(namespace)
        return removed

    def close(self) -> None:
        """Stop the background re-mix (what is left is done at the next open) and the search worker threads."""
        self._stop_remix.set()
        if self._remixer is not None:
            self._remixer.join()
        self._search.close()

    def repair(self, namespace: str | None = None, *, remix: bool = True) -> RepairReport:
        """Reconcile Chroma with SQLite after a crash: drop stray vectors, re-embed chunks that lack one, keep the
        own embedding of turns stored before schema 4, and (with `remix`) re-mix conversation turns whose vector
        does not carry their current neighbours."""
        return repair(self._store, self._vectors, self._embedder, self._counter, namespace,
                      self._context if remix else None)

    def remix_in_background(self) -> threading.Thread:
        """Start re-mixing, on a thread, every turn vector that does not carry its current neighbours.

        After an upgrade to schema 4 or a changed turn_context that is every turn (bench/turn_context_cost.py
        times it), so Memory does it after opening while searches and writes go on: a turn not
        yet re-mixed is found by its own embedding meanwhile. close() stops it; the rest is done at the next open.
        One runs at a time: while it runs, this returns it.
        """
        if self._remixer is not None and self._remixer.is_alive():
            return self._remixer

        def run() -> None:
            for namespace in catalog.namespaces(self._store.db):
                if self._stop_remix.is_set():
                    return
                try:
                    turn_vectors.sync_all(self._store, namespace, self._store.generation, self._context,
                                     partial(self._vectors.replace, namespace),
                                     self._stop_remix)
                except StoreError as exc:  # Chroma refused a write: the turns stay stale for the next open
                    _log.warning("turn vectors of namespace %r left for the next open: %s", namespace, exc)

        self._remixer = threading.Thread(target=run, name="turn-remix", daemon=True)
        self._remixer.start()
        return self._remixer

    def search(
        self, namespace: str, query: str, k: int = 10, *, filters: SearchFilters | None = None,
        reach_tokens: int | None = None,
    ) -> list[Snippet]:
        """The k best chunks for `query` (hybrid dense + lexical, reranked), scores in 0..1, best first.

        `reach_tokens`: the caller will use at most this many tokens of the results, so near-duplicates are
        looked for only among the candidates that can get there and as many again (see rerank).
        """
        return list(self.explain(namespace, query, k, filters=filters, reach_tokens=reach_tokens).results)

    def explain(
        self, namespace: str, query: str, k: int = 10, *, filters: SearchFilters | None = None,
        reach_tokens: int | None = None,
    ) -> SearchExplanation:
        """A search with each retriever's own ranks and scores laid open (for `memory search`)."""
        self._check_search(query, k, reach_tokens)
        return self._search.explain(namespace, query, k, filters or SearchFilters(), reach_tokens=reach_tokens)

    def shortlist(
        self, namespace: str, query: str, k: int, *, reach_tokens: int, filters: SearchFilters | None = None,
        item_tokens: int | None = None, floor: float | None = None,
    ) -> Shortlist:
        """search's results cut where their tokens reach `reach_tokens`: snippets within it, scores beyond. With
        `item_tokens` (the most the caller shows of one result) a longer result counts only that much; with `floor`
        (the caller's threshold) a result at or above it is not spread below it (memory.experience.spread)."""
        self._check_search(query, k, reach_tokens)
        if item_tokens is not None and (isinstance(item_tokens, bool) or not isinstance(item_tokens, int)
                                        or item_tokens < 1):
            raise ValidationError(f"item_tokens must be a whole number of tokens (1 or more) or None, "
                                  f"got {item_tokens!r}")
        check_score(floor, "floor")
        return self._search.shortlist(namespace, query, k, filters or SearchFilters(), reach_tokens=reach_tokens,
                                      item_tokens=item_tokens, floor=floor)

    def _check_search(self, query: str, k: int, reach_tokens: int | None) -> None:
        if not isinstance(query, str):
            raise ValidationError(f"query must be a string, got {type(query).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValidationError(f"k must be a whole number of results (0 or more), got {k!r}")
        check_length(query, self._config.limits.max_query_chars, "query", "limits.max_query_chars")
        if reach_tokens is not None and (isinstance(reach_tokens, bool) or not isinstance(reach_tokens, int)):
            raise ValidationError(f"reach_tokens must be a whole number of tokens or None, got {reach_tokens!r}")

