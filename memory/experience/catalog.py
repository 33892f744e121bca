"""Reading experience records from SQLite: documents as listed, chunk rows for search results, same content."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, NamedTuple

from memory.clock import parse_iso, to_iso
from memory.database import Connection
from memory.experience import conversations
from memory.experience.filters import filter_sql
from memory.experience.model import ChunkInfo, ChunkInput, DocumentInfo, DocumentKind, SearchFilters
from memory.limits import parse_metadata, readable_json

__all__ = [
    "ChunkRow", "chunk_rows", "document_chunks", "document_with_chunks", "filtered_chunk_ids",
    "get_document", "list_documents", "namespace_counts", "namespaces", "neighbour_turns", "same_chunks",
]

_DOC_COLUMNS = (
    "namespace, doc_id, kind, title, source, content_hash, version, chunk_count, tokens, project, tags, speaker, "
    "metadata, created_at, updated_at"
)


class ChunkRow(NamedTuple):
    """A chunk joined with what search results need from its document.

    A NamedTuple rather than a frozen dataclass: a search builds one per candidate, and a frozen dataclass of
    this many fields costs several times as much to build, on every recall (bench/recall_speed.py).
    """

    rowid: int
    id: str
    doc_id: str
    ordinal: int
    text: str
    heading: str
    tokens: int
    updated_at: str
    title: str | None
    source: str | None
    speaker: str | None
    kind: str
    metadata: str
    line_tokens: int | None = None  # bullet.body_cost of the indexed text; NULL for chunks written before v2
    terms: str = ""  # the analysed terms the lexical index holds for it, space-separated


def _document(row: tuple[Any, ...]) -> DocumentInfo:
    (namespace, doc_id, kind, title, source, content_hash, version, chunks, tokens, project, tags, speaker,
     metadata, created_at, updated_at) = row
    return DocumentInfo(
        namespace=namespace, doc_id=doc_id, kind=kind, title=title, source=source, content_hash=content_hash,
        version=version, chunks=chunks, tokens=tokens, project=project, tags=tuple(json.loads(tags)),
        speaker=speaker, metadata=parse_metadata(metadata), created_at=created_at,
        updated_at=updated_at,
    )


_ALL = 2 ** 62  # no limit, said in a number both backends take


def list_documents(db: Connection, namespace: str, kind: DocumentKind | None = None,
                   limit: int | None = None, offset: int = 0) -> list[DocumentInfo]:
    """The documents and memories of a namespace (of one kind, when given), newest first (ties by id), from
    `offset`, at most `limit` of them (all without it)."""
    where, params = ("namespace = ? AND kind = ?", [namespace, kind]) if kind else ("namespace = ?", [namespace])
    rows = db.execute(
        f"SELECT {_DOC_COLUMNS} FROM documents WHERE {where} ORDER BY updated_at DESC, doc_id LIMIT ? OFFSET ?",
        [*params, _ALL if limit is None else limit, offset],  # OFFSET needs a LIMIT on SQLite
    ).fetchall()
    return [_document(r) for r in rows]


def namespace_counts(db: Connection, namespace: str | None = None) -> dict[str, tuple[int, int, int]]:
    """(documents, conversation turns, chunks) per namespace that holds one (only `namespace` when given)."""
    where, params = ("AND namespace = ?", [namespace]) if namespace is not None else ("", [])
    found: dict[str, tuple[int, int, int]] = {}
    for name, documents, memories in db.execute(
            "SELECT namespace, count(*) FILTER (WHERE kind = 'document'), count(*) FILTER (WHERE kind = 'memory') "
            f"FROM documents WHERE state = 'ready' {where} GROUP BY namespace", params).fetchall():
        found[name] = (int(documents or 0), int(memories or 0), 0)
    # kept by triggers (memory.schema, version 2)
    for name, chunks in db.execute(f"SELECT namespace, chunks FROM namespace_chunks WHERE chunks > 0 {where}", params):
        documents, memories, _ = found.get(name, (0, 0, 0))
        found[name] = (documents, memories, int(chunks))
    return found


def get_document(db: Connection, namespace: str, doc_id: str) -> DocumentInfo | None:
    """One document, or None when the namespace has no such id."""
    row = db.execute(
        f"SELECT {_DOC_COLUMNS} FROM documents WHERE namespace = ? AND doc_id = ?", [namespace, doc_id]
    ).fetchone()
    return _document(row) if row else None


def document_chunks(db: Connection, namespace: str, doc_id: str) -> list[ChunkInfo]:
    """The chunks of one document in reading order (none for an unknown id)."""
    rows = db.execute(
        "SELECT id, doc_id, ordinal, heading, text, tokens, updated_at FROM chunks "
        "WHERE namespace = ? AND doc_id = ? ORDER BY ordinal, id", [namespace, doc_id],
    ).fetchall()
    return [ChunkInfo(*row) for row in rows]


def chunk_rows(
    db: Connection, namespace: str, ids: Sequence[str], filters: SearchFilters | None = None
) -> dict[str, ChunkRow]:
    """The rows of those chunk ids that exist in the namespace and pass the filters."""
    where, params = filter_sql(filters or SearchFilters(), db.dialect)
    out: dict[str, ChunkRow] = {}
    for start in range(0, len(ids), 500):
        part = list(ids[start:start + 500])
        rows = db.execute(
            "SELECT c.rowid, c.id, c.doc_id, c.ordinal, c.text, c.heading, c.tokens, c.updated_at, d.title, d.source, "
            "d.speaker, d.kind, d.metadata, c.line_tokens, coalesce(f.terms, '') FROM chunks c "
            "JOIN documents d ON d.namespace = c.namespace AND d.doc_id = c.doc_id "
            "LEFT JOIN chunks_fts f ON f.rowid = c.rowid "
            # The unary + keeps SQLite on the id index (else it may scan the namespace's whole updated_at index).
            f"WHERE +c.namespace = ? AND c.id IN ({','.join('?' * len(part))}) AND {where}",
            [namespace, *part, *params],
        ).fetchall()
        for r in rows:
            row = ChunkRow(*r)
            if (metadata := readable_json(row.metadata)) is not row.metadata:
                row = row._replace(metadata=metadata)
            out[row.id] = row
    return out


def same_chunks(db: Connection, namespace: str, doc_id: str, chunks: Sequence[ChunkInput]) -> bool:
    """Whether the stored document's chunks are exactly `chunks` (ordinal, text and heading): the same content."""
    stored = db.execute(
        "SELECT ordinal, text, heading FROM chunks WHERE namespace = ? AND doc_id = ? ORDER BY ordinal",
        [namespace, doc_id],
    ).fetchall()
    return [tuple(r) for r in stored] == [(c.ordinal, c.text, c.heading) for c in sorted(chunks, key=_ordinal)]


def document_with_chunks(db: Connection, namespace: str, chunks: Sequence[ChunkInput]) -> str | None:
    """The id of a document of the namespace (not a memory) whose chunks are exactly `chunks`, else None."""
    if not chunks:
        return None
    first = min(chunks, key=_ordinal)
    candidates = db.execute(
        "SELECT d.doc_id FROM documents d JOIN chunks c ON c.namespace = d.namespace AND c.doc_id = d.doc_id "
        "WHERE d.namespace = ? AND d.kind = 'document' AND d.chunk_count = ? AND c.ordinal = ? AND c.text = ? "
        "AND c.heading = ? ORDER BY d.doc_id",
        [namespace, len(chunks), first.ordinal, first.text, first.heading],
    ).fetchall()
    return next((r[0] for r in candidates if same_chunks(db, namespace, r[0], chunks)), None)


def _ordinal(chunk: ChunkInput) -> int:
    return chunk.ordinal


def filtered_chunk_ids(db: Connection, namespace: str, filters: SearchFilters, limit: int) -> list[str]:
    """Ids of the namespace's chunks that pass the filters, at most `limit` + 1 (so callers see an overflow)."""
    where, params = filter_sql(filters, db.dialect)
    rows = db.execute(
        "SELECT c.id FROM chunks c JOIN documents d ON d.namespace = c.namespace AND d.doc_id = c.doc_id "
        f"WHERE c.namespace = ? AND {where} LIMIT ?",
        [namespace, *params, limit + 1],
    ).fetchall()
    return [r[0] for r in rows]


def namespaces(db: Connection) -> list[str]:
    """Every namespace that holds experience records."""
    return [r[0] for r in db.execute("SELECT DISTINCT namespace FROM documents ORDER BY namespace").fetchall()]


def neighbour_turns(
    db: Connection, namespace: str, turns: Sequence[ChunkRow], window_seconds: int
) -> dict[str, list[str]]:
    """For each conversation turn, the chunk ids of the memories just before and just after it.

    A turn stored with its own timestamp: the closest memories in time that have theirs, within `window_seconds`
    (turns of the same timestamp ordered by when they were stored). A turn stored without one: the turns before
    and after it in its own conversation, in the order stored (memory.experience.conversations).
    """
    belongs = conversations.of(db, namespace, [turn.doc_id for turn in turns])
    out: dict[str, list[str]] = {}
    for turn in turns:
        moment = parse_iso(turn.updated_at, "updated_at")
        window = timedelta(seconds=window_seconds)
        params = {"ns": namespace, "at": turn.updated_at, "rowid": turn.rowid, "low": to_iso(moment - window),
                  "high": to_iso(moment + window), "conversation": belongs.get(turn.doc_id)}
        queries = (_BEFORE, _AFTER) if turn.doc_id not in belongs else (_BEFORE_IN, _AFTER_IN)
        out[turn.id] = [row[0] for row in (db.execute(sql, params).fetchone() for sql in queries) if row]
    return out


_NEIGHBOUR = (
    "SELECT c.id FROM chunks c JOIN documents d ON d.namespace = c.namespace AND d.doc_id = c.doc_id "
    "WHERE c.namespace = :ns AND d.kind = 'memory' AND c.updated_at BETWEEN :low AND :high AND NOT EXISTS "
    "(SELECT 1 FROM turn_conversations v WHERE v.namespace = c.namespace AND v.doc_id = c.doc_id) AND "
)
_BEFORE = _NEIGHBOUR + (
    "(c.updated_at < :at OR (c.updated_at = :at AND c.rowid < :rowid)) ORDER BY c.updated_at DESC, c.rowid DESC LIMIT 1"
)
_AFTER = _NEIGHBOUR + (
    "(c.updated_at > :at OR (c.updated_at = :at AND c.rowid > :rowid)) ORDER BY c.updated_at, c.rowid LIMIT 1"
)
# CROSS JOIN (never reordered) and the unary + keep SQLite on the conversation's few rows, not the namespace's.
_IN_CONVERSATION = (
    "SELECT c.id FROM turn_conversations v CROSS JOIN chunks c ON c.namespace = v.namespace AND c.doc_id = v.doc_id "
    "JOIN documents d ON d.namespace = c.namespace AND d.doc_id = c.doc_id "
    "WHERE v.namespace = :ns AND v.conversation = :conversation AND d.kind = 'memory' AND "
)
_BEFORE_IN = _IN_CONVERSATION + (
    "(+c.updated_at < :at OR (c.updated_at = :at AND c.rowid < :rowid)) "
    "ORDER BY c.updated_at DESC, c.rowid DESC LIMIT 1"
)
_AFTER_IN = _IN_CONVERSATION + (
    "(+c.updated_at > :at OR (c.updated_at = :at AND c.rowid > :rowid)) ORDER BY c.updated_at, c.rowid LIMIT 1"
)
