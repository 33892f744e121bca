"""The ingest pipeline: files and folders → loaders → Memory (chunked as documents, or stored as conversation turns).

The documents of a folder reach the library in batches (ExperienceMemory.add_texts), so the model embeds many
files' sentences and chunks in full batches and a batch is written in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ingest.loaders import FoundPath, LoadedDocument, Turn, iter_paths, load_path
from memory.clock import to_iso
from memory.errors import ConflictError, MemoryError_, ValidationError
from memory.experience import DocumentResult, MemoryTurn, TextInput
from memory.service import Memory

__all__ = ["FileOutcome", "PassageCount", "PassageEstimate", "ingest_file", "ingest_paths", "kept_message",
           "load_for_job"]

# Characters of documents handed to the library at once: enough to fill the model's batches across short files,
# few enough that a batch's files are reported (and a progress bar moves) every few seconds.
_BATCH_CHARS = 50_000
# Bytes of a file per passage before any file of the ingest was chunked (about 200 tokens of English or Chinese).
_FIRST_GUESS_BYTES = 800


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one path: the documents it gave, or why it was skipped or failed."""

    path: str
    results: tuple[DocumentResult, ...] = ()
    skipped: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class PassageCount:
    """How far an ingest is in passages (chunks, stored or found unchanged): those done, and those expected in all,
    an estimate until the last file is chunked (PassageEstimate)."""

    done: int
    expected: int


class PassageEstimate:
    """The passages an ingest of the files iter_paths found will give: those of the files done, and the others by
    their size at the passages per byte seen so far. What it reports as done never goes back."""

    def __init__(self, found: Sequence[FoundPath]) -> None:
        self._sizes = [0 if f.skip_reason else _size(f.path) for f in found]
        self._left = sum(self._sizes)
        self._bytes = 0
        self._passages = 0
        self._done = 0

    def add(self, index: int, passages: int) -> None:
        """The file found at `index` is done and gave `passages`."""
        size = self._sizes[index]
        self._left -= size
        self._bytes += size
        self._passages += passages

    def count(self, done: int) -> PassageCount:
        """`done` passages so far (those of the files added, and any of files on their way) against the estimate."""
        per_byte = self._passages / self._bytes if self._bytes else 1 / _FIRST_GUESS_BYTES
        self._done = max(self._done, done)
        expected = self._passages + round(max(self._left, 0) * per_byte)
        return PassageCount(self._done, max(expected, self._done))


def ingest_file(memory: Memory, namespace: str, path: Path, *, source: str | None = None,
                doc_id: str | None = None, derived_id: str | None = None, project: str | None = None,
                tags: Sequence[str] = (), name: str | None = None) -> tuple[DocumentResult, ...]:
    """Load one file and store what it holds: a document, or its conversations' turns as memories.

    `doc_id` names the document: the same id again updates it. Without one it is called `derived_id` (see
    ingest.identity; the file's own name when not given) and nothing existing is overwritten: the same content
    answers unchanged, other content under that name raises ConflictError. All the turns of a file are stored
    in one batch, so they count against limits.max_batch together; so are its documents. `name` is what an
    error calls the file (its path unless given).
    """
    docs, results = _load(memory, namespace, path, source, project, tags, name)
    inputs = _inputs(docs, source, doc_id, derived_id, project, tags)
    for outcome in memory.experience.add_texts(namespace, inputs) if inputs else ():
        if isinstance(outcome, MemoryError_):
            raise outcome
        results.append(outcome)
    return tuple(results)


def _load(memory: Memory, namespace: str, path: Path, source: str | None, project: str | None,
          tags: Sequence[str], name: str | None = None) -> tuple[list[LoadedDocument], list[DocumentResult]]:
    """The file's documents that are to be chunked, and the results of its conversations' turns, stored now."""
    docs = load_path(path, memory.config.limits.max_text_chars, name)
    if not docs:
        raise ValidationError(f"{name or source or path} holds no text to index")
    turns = [_turn(t, doc, source, project, tags) for doc in docs if doc.kind == "conversation" for t in doc.turns]
    results = list(memory.experience.add_memories(namespace, turns)) if turns else []
    return [doc for doc in docs if doc.kind != "conversation"], results


def _inputs(docs: Sequence[LoadedDocument], source: str | None, doc_id: str | None, derived_id: str | None,
            project: str | None, tags: Sequence[str]) -> list[TextInput]:
    """What add_texts takes for a file's documents (`doc_id` names the document of a file that holds one)."""
    return [TextInput(doc.text, doc_id=doc_id if len(docs) == 1 else None, derived_id=derived_id or doc.doc_id_hint,
                      title=doc.title, source=source or doc.source, updated_at=to_iso(doc.updated_at),
                      project=project, tags=tuple(tags)) for doc in docs]


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
                 progress: Callable[[FileOutcome], None] | None = None,
                 passages: Callable[[PassageCount], None] | None = None) -> list[FileOutcome]:
    """Ingest files and folders (recursively); one file's failure is reported and does not stop the others.

    Each file's document is named by ingest.identity.derived_id (`docs/a/notes.md` for `docs/`). With `replace`
    that name is the explicit doc_id, so an edited file updates its document; without it an edited file is
    reported as that file's error (ConflictError) and its stored version is kept. The paths are walked first
    (a path that does not exist stops the ingest before anything is stored). `progress` hears of each file as it
    is done (a batch's files together), `passages` of the passages done and expected, as the chunks are embedded.
    """
    found = list(iter_paths(paths, root=root))
    batch = _Batch(memory, namespace, found, replace=replace, project=project, tags=tuple(tags),
                   progress=progress, passages=passages)
    for index, path in enumerate(found):
        batch.take(index, path)
    batch.flush()
    return [batch.outcomes[index] for index in range(len(found))]


@dataclass
class _File:
    """A file whose documents wait in a batch."""

    index: int
    path: str
    name: str
    results: list[DocumentResult]  # of its conversations' turns, stored already
    inputs: list[TextInput]


class _Batch:
    """ingest_paths's files on their way: loaded one by one, their documents stored a batch at a time."""

    def __init__(self, memory: Memory, namespace: str, found: Sequence[FoundPath], *, replace: bool,
                 project: str | None, tags: tuple[str, ...], progress: Callable[[FileOutcome], None] | None,
                 passages: Callable[[PassageCount], None] | None) -> None:
        self._memory = memory
        self._namespace = namespace
        self._replace = replace
        self._project = project
        self._tags = tags
        self._progress = progress
        self._passages = passages
        self._estimate = PassageEstimate(found)
        self._done = 0  # passages of the files reported
        self._files: list[_File] = []
        self._chars = 0
        self.outcomes: dict[int, FileOutcome] = {}

    def take(self, index: int, found: FoundPath) -> None:
        """Load one file found by iter_paths; its documents join the batch, which is stored once it is full."""
        path = found.path
        if found.skip_reason:
            self._finish(index, FileOutcome(str(path), skipped=found.skip_reason), 0)
            return
        name = found.name or path.name
        try:
            docs, results = _load(self._memory, self._namespace, path, None, self._project, self._tags)
        except MemoryError_ as exc:
            self._finish(index, FileOutcome(str(path), error=self._message(exc, name)), 0)
            return
        inputs = _inputs(docs, None, name if self._replace else None, name, self._project, self._tags)
        if not inputs:  # conversations only: stored already
            self._finish(index, FileOutcome(str(path), results=tuple(results)), sum(r.chunks for r in results))
            return
        pending = _File(index, str(path), name, results, inputs)
        self._files.append(pending)
        self._chars += sum(len(i.text) for i in pending.inputs)
        if self._chars >= _BATCH_CHARS:
            self.flush()

    def flush(self) -> None:
        """Store the batch's documents in one add_texts call and report its files."""
        files, self._files, self._chars = self._files, [], 0
        inputs = [i for f in files for i in f.inputs]
        outcomes = iter(self._memory.experience.add_texts(self._namespace, inputs, progress=self._embedding)
                        if inputs else ())
        for pending in files:
            mine = [next(outcomes) for _ in pending.inputs]
            failed = next((o for o in mine if isinstance(o, MemoryError_)), None)
            results = pending.results + [o for o in mine if isinstance(o, DocumentResult)]
            if failed is not None:
                outcome = FileOutcome(pending.path, error=self._message(failed, pending.name))
            else:
                outcome = FileOutcome(pending.path, results=tuple(results))
            self._finish(pending.index, outcome, sum(r.chunks for r in results))

    def _embedding(self, stage: str, done: int, total: int) -> None:
        """add_texts's progress: chunks embedded so far in this batch count as passages done."""
        if stage == "embedding" and self._passages is not None:
            self._passages(self._estimate.count(self._done + done))

    def _finish(self, index: int, outcome: FileOutcome, passages: int) -> None:
        self.outcomes[index] = outcome
        self._estimate.add(index, passages)
        self._done += passages
        if self._progress is not None:
            self._progress(outcome)
        if self._passages is not None:
            self._passages(self._estimate.count(self._done))

    def _message(self, exc: MemoryError_, name: str) -> str:
        return kept_message(name, self._namespace) if isinstance(exc, ConflictError) else str(exc)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # gone since the walk: loading it reports why
        return 0


def load_for_job(memory: Memory, path: Path, *, source: str | None = None, doc_id: str | None = None,
                 derived_id: str | None = None, project: str | None = None, tags: Sequence[str] = (),
                 name: str | None = None) -> TextInput | None:
    """The file as one document, named as ingest_file names it (it may become an ingest job); None for
    conversations and files of several documents, which ingest_file stores in the request (their turns are
    bounded by limits.max_batch).
    """
    docs = load_path(path, memory.config.limits.max_text_chars, name)
    if not docs:
        raise ValidationError(f"{name or source or path} holds no text to index")
    if len(docs) != 1 or docs[0].kind == "conversation":
        return None
    return _inputs(docs, source, doc_id, derived_id, project, tags)[0]
