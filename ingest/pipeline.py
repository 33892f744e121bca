"""The ingest pipeline: text or files → semantic chunks → experience memory, one document as one unit."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.chunking import chunk_text
from ingest.loaders import LoadedDocument, iter_paths, load_path
from memory.clock import parse_iso, to_iso
from memory.errors import MemoryError_, NotFoundError, ValidationError
from memory.experience import ChunkInput, DocumentResult, MemoryTurn
from memory.service import Memory
from memory.text.unicode import storable

__all__ = ["ingest_text", "ingest_file", "ingest_paths", "FileOutcome", "content_hash"]


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one path: the documents it gave, or why it was skipped or failed."""

    path: str
    results: tuple[DocumentResult, ...] = ()
    skipped: str | None = None
    error: str | None = None


def content_hash(text: str, **fields: Any) -> str:
    """A hash of the text and everything stored beside it, so a change to either counts as a change."""
    blob = json.dumps({"text": text, **fields}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def ingest_text(memory: Memory, namespace: str, text: str, *, title: str | None = None, source: str | None = None,
                doc_id: str | None = None, updated_at: str | None = None,
                metadata: Mapping[str, Any] | None = None, project: str | None = None,
                tags: Sequence[str] = ()) -> DocumentResult:
    """Chunk and store one document; an unchanged document is recognised before any model call."""
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("text must be a non-empty string; send the document's content")
    storable(text, "text")
    if updated_at is not None:
        updated_at = to_iso(parse_iso(updated_at, "updated_at"))
    metadata = dict(metadata or {})
    digest = content_hash(text, title=title, source=source, metadata=metadata, project=project, tags=list(tags),
                          updated_at=updated_at)
    doc_id = doc_id or "d-" + hashlib.sha256((source or text).encode("utf-8")).hexdigest()[:20]
    try:
        known = memory.experience.get_document(namespace, doc_id)
    except NotFoundError:
        known = None
    if known is not None and known.content_hash == digest:
        return DocumentResult(doc_id=doc_id, chunks=known.chunks, status="unchanged")
    chunks = chunk_text(text, memory.counter, memory.embedder, memory.config.chunking)
    if not chunks:
        raise ValidationError("the document has no text to index once blank lines and markup are removed")
    return memory.experience.add_document(
        namespace, doc_id, [ChunkInput(text=c.text, heading=c.heading, ordinal=c.ordinal) for c in chunks],
        content_hash=digest, title=title, source=source, updated_at=updated_at, metadata=metadata,
        project=project, tags=tuple(tags),
    )


def ingest_file(memory: Memory, namespace: str, path: Path, *, source: str | None = None,
                doc_id: str | None = None, project: str | None = None,
                tags: Sequence[str] = ()) -> tuple[DocumentResult, ...]:
    """Load one file and store what it holds: a document, or a conversation's turns as memories."""
    docs = load_path(path, memory.config.limits.max_text_chars)
    if not docs:
        raise ValidationError(f"{source or path} holds no text to index")
    return tuple(r for d in docs for r in _ingest_loaded(memory, namespace, d, source, doc_id if len(docs) == 1
                                                          else None, project, tags))


def _ingest_loaded(memory: Memory, namespace: str, doc: LoadedDocument, source: str | None, doc_id: str | None,
                   project: str | None, tags: Sequence[str]) -> tuple[DocumentResult, ...]:
    source = source or doc.source
    if doc.kind == "conversation":
        turns = [MemoryTurn(text=t.text, speaker=t.speaker, timestamp=t.timestamp or to_iso(doc.updated_at),
                            metadata=dict(t.metadata), project=project, tags=tuple(tags), source=source)
                 for t in doc.turns]
        return tuple(memory.experience.add_memories(namespace, turns))
    return (ingest_text(memory, namespace, doc.text, title=doc.title, source=source,
                        doc_id=doc_id or doc.doc_id_hint, updated_at=to_iso(doc.updated_at), project=project,
                        tags=tags),)


def ingest_paths(memory: Memory, namespace: str, paths: Iterable[str | Path], *, root: Path | None = None,
                 project: str | None = None, tags: Sequence[str] = (),
                 progress: Callable[[FileOutcome], None] | None = None) -> list[FileOutcome]:
    """Ingest files and folders (recursively); one file's failure is reported and does not stop the others."""
    outcomes = []
    for found in iter_paths(paths, root=root):
        if found.skip_reason:
            outcome = FileOutcome(str(found.path), skipped=found.skip_reason)
        else:
            try:
                results = ingest_file(memory, namespace, found.path, doc_id=str(found.path), project=project,
                                      tags=tags)
                outcome = FileOutcome(str(found.path), results=results)
            except MemoryError_ as exc:
                outcome = FileOutcome(str(found.path), error=str(exc))
        outcomes.append(outcome)
        if progress:
            progress(outcome)
    return outcomes


def promote(memory: Memory, namespace: str, task_id: str, keys: Sequence[str], *, project: str | None = None,
            tags: Sequence[str] = ()) -> list[DocumentResult]:
    """Copy chosen task items (full text) into experience memory, one document per item."""
    if not keys:
        raise ValidationError("promote needs at least one item key; GET the task's items to see them")
    return [
        ingest_text(memory, namespace, item.text, title=f"{item.kind} from task {item.task_id}",
                    source=f"task {item.task_id}", doc_id=f"task:{item.task_id}:{item.key}",
                    metadata={"task_id": item.task_id, "key": item.key, "kind": item.kind}, project=project,
                    tags=tags)
        for item in memory.tasks.promote(namespace, task_id, list(keys))
    ]
