"""`Memory`: the facade every caller goes through (API, CLI, benchmarks) — the three tiers and recall."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.clock import Clock, utc_now
from memory.config import Config
from memory.embed import Embedder, load_embedder
from memory.store import Store, open_store
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
        self.config = config
        self.clock = clock
        self.counter: TokenCounter = get_counter(config.tokenizer.encoding)
        self.embedder: Embedder = embedder or load_embedder(config.embedding)
        self.store: Store = open_store(config, self.embedder.identity)

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
        """Release the store's connections."""
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
