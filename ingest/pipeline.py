"""The ingest pipeline: files and folders → loaders → Memory (chunked as documents, or stored as conversation turns)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ingest.loaders import LoadedDocument, Turn, iter_paths, load_path
from memory.clock import to_iso
from memory.errors import ConflictError, MemoryError_, ValidationError
from memory.experience import DocumentResult, MemoryTurn
from memory.service import Memory

__all__ = ["FileOutcome", "JobText", "ingest_file", "ingest_paths", "kept_message", "load_for_job"]


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one path: the documents it gave, or why it was skipped or failed."""

    path: str
    results: tuple[DocumentResult, ...] = ()
    skipped: str | None = None
    error: str | None = None


def ingest_file(memory: Memory, namespace: str, path: Path, *, source: str | None = None,
                doc_id: str | None = None, derived_id: str | None = None, project: str | None = None,
                tags: Sequence[str] = ()) -> tuple[DocumentResult, ...]:
    """Load one file and store what it holds: a document, or its conversations' turns as memories.

    `doc_id` names the document: the same id again updates it. Without one it is called `derived_id` (see
    ingest.identity; the file's own name when not given) and nothing existing is overwritten: the same content
    answers unchanged, other content under that name raises ConflictError. All the turns of a file are stored
    in one batch, so they count against limits.max_batch together.
    """
    docs = load_path(path, memory.config.limits.max_text_chars)
    if not docs:
        raise ValidationError(f"{source or path} holds no text to index")
    turns = [_turn(t, doc, source, project, tags) for doc in docs if doc.kind == "conversation" for t in doc.turns]
    results = list(memory.experience.add_memories(namespace, turns)) if turns else []
    for doc in docs:
        if doc.kind != "conversation":
            results.append(memory.experience.add_text(
                namespace, doc.text, title=doc.title, source=source or doc.source,
                doc_id=doc_id if len(docs) == 1 else None, derived_id=derived_id or doc.doc_id_hint,
                updated_at=to_iso(doc.updated_at), project=project, tags=tags))
    return tuple(results)


def _turn(turn: Turn, doc: LoadedDocument, source: str | None, project: str | None,
          tags: Sequence[str]) -> MemoryTurn:
    return MemoryTurn(text=turn.text, speaker=turn.speaker, timestamp=turn.timestamp or to_iso(doc.updated_at),
                      metadata=dict(turn.metadata), project=project, tags=tuple(tags), source=source or doc.source)


def kept_message(name: str, namespace: str) -> str:
    """What a changed file reports when its derived id already holds other content (nothing was overwritten)."""
    return (f"document {name!r} already exists in namespace {namespace!r} with other content, and it was kept; "
            "ingest with replace (memory ingest --replace) to update it")


def ingest_paths(memory: Memory, namespace: str, paths: Iterable[str | Path], *, root: Path | None = None,
                 project: str | None = None, tags: Sequence[str] = (), replace: bool = False,
                 progress: Callable[[FileOutcome], None] | None = None) -> list[FileOutcome]:
    """Ingest files and folders (recursively); one file's failure is reported and does not stop the others.

    Each file's document is named by ingest.identity.derived_id (`docs/a/notes.md` for `docs/`). With `replace`
    that name is the explicit doc_id, so an edited file updates its document; without it an edited file is
    reported as that file's error (ConflictError) and its stored version is kept.
    """
    outcomes = []
    for found in iter_paths(paths, root=root):
        if found.skip_reason:
            outcome = FileOutcome(str(found.path), skipped=found.skip_reason)
        else:
            name = found.name or found.path.name
            try:
                results = ingest_file(memory, namespace, found.path, doc_id=name if replace else None,
                                      derived_id=name, project=project, tags=tags)
                outcome = FileOutcome(str(found.path), results=results)
            except ConflictError:
                outcome = FileOutcome(str(found.path), error=kept_message(name, namespace))
            except MemoryError_ as exc:
                outcome = FileOutcome(str(found.path), error=str(exc))
        outcomes.append(outcome)
        if progress:
            progress(outcome)
    return outcomes


@dataclass(frozen=True)
class JobText:
    """The text of a file that is one document, ready for Memory.submit_document."""

    text: str
    title: str | None
    updated_at: str


def load_for_job(memory: Memory, path: Path, *, source: str | None = None) -> JobText | None:
    """The file's text when it is one document (it may become an ingest job); None for conversations and files
    of several documents, which ingest_file stores in the request (their turns are bounded by limits.max_batch).
    """
    docs = load_path(path, memory.config.limits.max_text_chars)
    if not docs:
        raise ValidationError(f"{source or path} holds no text to index")
    if len(docs) != 1 or docs[0].kind == "conversation":
        return None
    return JobText(docs[0].text, docs[0].title, to_iso(docs[0].updated_at))
