"""`Memory`: the facade every caller goes through (API, CLI, benchmarks) — the three tiers and recall."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.clock import Clock, utc_now
from memory.config import Config
from memory.embed import Embedder, load_embedder
from memory.experience import DocumentResult, ExperienceMemory, MemoryTurn
from memory.facts.memory import FactMemory
from memory.facts.rules import load_rules
from memory.namespaces import check_namespace
from memory.recall.engine import Recaller
from memory.recall.model import RecallResult
from memory.store import Store, open_store
from memory.task import TaskMemory
from memory.text import prepare as prepare_text
from memory.tokens import TokenCounter, get_counter

__all__ = ["Memory", "Health"]


@dataclass(frozen=True)
class Health:
    """What /healthz and `memory stats` report."""

    model: str
    dimension: int
    tokenizer: str
    store: str
    chroma: str
    counts: dict[str, int]


class Memory:
    """Opens the store once and holds the embedder, token counter and tiers."""

    def __init__(self, config: Config, *, clock: Clock = utc_now, embedder: Embedder | None = None) -> None:
        self.clock = clock
        self.counter: TokenCounter = get_counter(config.tokenizer.encoding)
        self.embedder: Embedder = embedder or load_embedder(config.embedding)
        # [retrieval] calibration settings left "auto" become the loaded model's (config.toml: [retrieval]).
        config = config.calibrated(self.embedder.calibration)
        self.config = config
        self.store: Store = open_store(config, self.embedder.identity)
        self.facts = FactMemory(self.store, load_rules(*config.facts.extra_rules), self.counter, config.facts, clock)
        self.tasks = TaskMemory(self.store, self.counter, config.tasks, clock)
        self.experience = ExperienceMemory(self.store, self.embedder, self.counter, config, clock)
        self.experience.repair(remix=False)
        self.experience.remix_in_background()  # turn vectors a kill, an upgrade or a new turn_context left stale
        prepare_text()  # jieba's dictionary loads here, not during the first Chinese request
        self._recaller = Recaller(self.facts, self.tasks, self.experience, self.counter, config, clock)

    def recall(self, query: str, budget: int, namespace: str, task_id: str | None = None,
               filters: Mapping[str, Any] | None = None, min_score: float | None = None) -> RecallResult:
        """What the agent must know this turn, inside `budget` cl100k tokens (see memory.recall.engine)."""
        return self._recaller.recall(query, budget, namespace, task_id, filters, min_score)

    def remember(self, namespace: str, turns: Sequence[MemoryTurn]) -> tuple[list[DocumentResult], int]:
        """Store conversation turns as experiences; turns by configured speakers are also scanned for facts."""
        results = self.experience.add_memories(namespace, turns)
        speakers = {s.lower() for s in self.config.facts.extract_from_speakers}
        facts = 0
        for turn in turns:
            if turn.speaker and turn.speaker.lower() in speakers:
                facts += len(self.facts.observe(namespace, turn.text, source=f"memory from {turn.speaker}").stored)
        return results, facts

    def delete_namespace(self, namespace: str) -> dict[str, int]:
        """Forget everything of a namespace: facts, task items, documents, memories and vectors."""
        check_namespace(namespace)
        return {
            "facts": self.facts.delete_namespace(namespace),
            "task_items": self.tasks.delete_namespace(namespace),
            "documents": self.experience.delete_namespace(namespace),
        }

    def health(self) -> Health:
        """Model, store location and counts."""
        cfg = self.config.chroma
        return Health(
            model=self.embedder.identity.model,
            dimension=self.embedder.dimension,
            tokenizer=self.counter.name,
            store=str(self.store.db_path),
            chroma=f"http://{cfg.host}:{cfg.port}" if cfg.host else str(Path(self.store.root) / "chroma"),
            counts=self.store.counts(),
        )

    def close(self) -> None:
        """Stop the search workers and release the store's connections."""
        self.experience.close()
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
