"""Hostile-input, isolation and deletion fixtures: a real store (and an app over it) per module, and ways to look
inside it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from memory.config import Config, load_config
from memory.embedding import Embedder
from memory.service import Memory
from tests import local_client

# Small limits keep the over-the-limit cases cheap; a 1 MB query still fits the request limit, so it is the
# query check that refuses it.
LIMITS = {"max_request_bytes": 2_000_000, "max_text_chars": 4000, "max_query_chars": 2000, "max_batch": 5}


def make_config(root: Path, **auth_keys: list[str]) -> Config:
    """Default settings, the store under `root`, LIMITS, and API keys when given."""
    config = load_config().replace("service", data_dir=str(root / "data")).replace("limits", **LIMITS)
    return config.replace("auth", keys=auth_keys) if auth_keys else config


@pytest.fixture(scope="module")
def module_memory(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Memory]:
    """One real store for a whole module (its tests either change nothing or clean up after themselves)."""
    with Memory(make_config(tmp_path_factory.mktemp("security")), embedder=embedder) as opened:
        yield opened


@pytest.fixture(scope="module")
def module_client(module_memory: Memory) -> TestClient:
    """The app (no keys) over the module's store."""
    return local_client(create_app(module_memory.config, module_memory))


def tables(memory: Memory) -> list[str]:
    """Every real table of the store's database, FTS5 shadow tables included."""
    rows = memory.store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
    return [r[0] for r in rows]


def snapshot(memory: Memory) -> dict[str, Any]:
    """Every row of every table and every vector id of every Chroma collection, to compare before and after."""
    db = memory.store.db
    state: dict[str, Any] = {}
    for table in tables(memory):
        state[table] = sorted(repr(tuple(row)) for row in db.execute(f'SELECT * FROM "{table}"').fetchall())
    # The erase pass's own bookkeeping (memory.erase) comes and goes in the background.
    state["meta"] = [row for row in state.get("meta", []) if "'erase_pending'" not in row]
    names = memory.store.collection_names()
    with memory.store.vector_lock.shared():  # as every Chroma call of the service: an erase pass may be vacuuming
        for name in names:
            collection = memory.store.chroma.get_collection(name)
            state[f"chroma:{name}"] = sorted(collection.get(include=[])["ids"])
    return state


def traces(memory: Memory, needle: str, *, whole: bool = False) -> list[str]:
    """`table.column` of every cell that holds `needle` (text or bytes, FTS5 index segments included).

    With `whole`, only cells equal to `needle` count (a namespace, not the namespaces it is a prefix of).
    """
    db = memory.store.db
    condition = "{} = ?" if whole else "instr(CAST({} AS BLOB), ?) > 0"
    value: object = needle if whole else needle.encode()
    found = []
    for table in tables(memory):
        for column in [r[1] for r in db.execute(f"PRAGMA table_info('{table}')").fetchall()]:
            where = condition.format(f'"{column}"')
            if db.execute(f'SELECT count(*) FROM "{table}" WHERE {where}', [value]).fetchone()[0]:
                found.append(f"{table}.{column}")
    return found
