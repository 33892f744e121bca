"""Task-tier fixtures: a real store under tmp_path (no model loaded) and TaskMemory over it on the test clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memory.config import Config
from memory.database import Database
from memory.embedding import MINILM
from memory.store import Store, open_store
from memory.task import TaskMemory
from memory.tokens import TokenCounter
from tests.conftest import ManualClock, again


@pytest.fixture()
def store(config: Config, database: Database | None) -> Iterator[Store]:
    """A real store (its records on each backend in turn, embedded Chroma) under tmp_path; no model is loaded."""
    opened = open_store(config, MINILM, database)
    yield opened
    opened.close()


@pytest.fixture()
def reopen(config: Config, database: Database | None) -> Iterator[Callable[[], Store]]:
    """Open the test's store again, as a restarted process (or another replica) would; closed at the end."""
    opened: list[Store] = []

    def open_again() -> Store:
        opened.append(open_store(config, MINILM, again(database)))
        return opened[-1]

    yield open_again
    for each in opened:
        each.close()


@pytest.fixture()
def make_tasks(store: Store, counter: TokenCounter, config: Config, clock: ManualClock) -> Callable[..., TaskMemory]:
    """Build a TaskMemory over the test store with some [tasks] settings changed."""

    def make(**settings: Any) -> TaskMemory:
        return TaskMemory(store, counter, config.replace("tasks", **settings).tasks, clock)

    return make


@pytest.fixture()
def tasks(make_tasks: Callable[..., TaskMemory]) -> TaskMemory:
    """A TaskMemory with the default [tasks] settings (TTL one day, offload above 500 tokens, 60-token heads)."""
    return make_tasks()
