"""Task-tier fixtures: a real store under tmp_path, the real tokenizer, and a clock the test moves by hand."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from memory.config import Config
from memory.embedding import EmbedderIdentity
from memory.store import Store, open_store
from memory.task import TaskMemory
from memory.tokens import TokenCounter, get_counter

MINILM = EmbedderIdentity("sentence-transformers", "all-MiniLM-L6-v2", 384)


class HandClock:
    """A Clock that stands still until the test moves it."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        self.now += timedelta(seconds=seconds)


@pytest.fixture()
def clock() -> HandClock:
    """Time starts at 2026-11-30 08:00:00 UTC."""
    return HandClock(datetime(2026, 11, 30, 8, 0, 0, tzinfo=timezone.utc))


@pytest.fixture()
def advance(clock: HandClock) -> Callable[[float], None]:
    """Move the test clock forward by some seconds."""
    return clock.advance


@pytest.fixture()
def counter() -> TokenCounter:
    """The real cl100k counter."""
    return get_counter()


@pytest.fixture()
def store(config: Config) -> Iterator[Store]:
    """A real SQLite store (and embedded Chroma) under tmp_path; no embedding model is loaded."""
    opened = open_store(config, MINILM)
    yield opened
    opened.close()


@pytest.fixture()
def reopen(config: Config) -> Iterator[Callable[[], Store]]:
    """Open the test's store again, as a restarted process would; closed at the end of the test."""
    opened: list[Store] = []

    def open_again() -> Store:
        opened.append(open_store(config, MINILM))
        return opened[-1]

    yield open_again
    for each in opened:
        each.close()


@pytest.fixture()
def make_tasks(store: Store, counter: TokenCounter, config: Config, clock: HandClock) -> Callable[..., TaskMemory]:
    """Build a TaskMemory over the test store with some [tasks] settings changed."""

    def make(**settings: Any) -> TaskMemory:
        return TaskMemory(store, counter, config.replace("tasks", **settings).tasks, clock)

    return make


@pytest.fixture()
def tasks(make_tasks: Callable[..., TaskMemory]) -> TaskMemory:
    """A TaskMemory with the default [tasks] settings (TTL one day, offload above 500 tokens, 60-token heads)."""
    return make_tasks()
