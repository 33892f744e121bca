"""The ingest pipeline: files and folders → loaders → Memory (chunked as documents, or stored as conversation turns)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ingest.loaders import LoadedDocument, iter_paths, load_path
from memory.clock import to_iso
from memory.errors import MemoryError_, ValidationError
from memory.experience import DocumentResult, MemoryTurn
from memory.service import Memory

__all__ = ["FileOutcome", "ingest_file", "ingest_paths"]


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one path: the documents it gave, or why it was skipped or failed."""

    path: str
    results: tuple[DocumentResult, ...] = ()
    skipped: str | None = None
    error: str | None = None


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
    return (memory.add_document(namespace, doc.text, title=doc.title, source=source,
                                doc_id=doc_id or doc.doc_id_hint, updated_at=to_iso(doc.updated_at),
                                project=project, tags=tags),)


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
