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
from tests.conftest import on_backend

# Small limits keep the over-the-limit cases cheap; a 1 MB query still fits the request limit, so it is the
# query check that refuses it.
LIMITS = {"max_request_bytes": 2_000_000, "max_text_chars": 4000, "max_query_chars": 2000, "max_batch": 5}


def make_config(root: Path, **auth_keys: list[str]) -> Config:
    """Default settings, the store under `root`, LIMITS, and API keys when given."""
    config = load_config().replace("service", data_dir=str(root / "data")).replace("limits", **LIMITS)
    return config.replace("auth", keys=auth_keys) if auth_keys else config


@pytest.fixture(scope="module")
def module_memory(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, module_backend: str,
                  request: pytest.FixtureRequest) -> Iterator[Memory]:
    """One real store for a whole module (its tests either change nothing or clean up after themselves), on each
    backend in turn."""
    config = on_backend(make_config(tmp_path_factory.mktemp("security")), module_backend, request)
    with Memory(config, embedder=embedder) as opened:
        yield opened


@pytest.fixture(scope="module")
def module_client(module_memory: Memory) -> TestClient:
    """The app (no keys) over the module's store."""
    return local_client(create_app(module_memory.config, module_memory))


def on_postgres(memory: Memory) -> bool:
    """Whether the store's records are in PostgreSQL."""
    return memory.store.db.dialect.name == "postgres"


def tables(memory: Memory) -> list[str]:
    """Every real table of the store's database, FTS5 shadow tables included."""
    sql = ("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
           "AND table_type = 'BASE TABLE' ORDER BY table_name" if on_postgres(memory)
           else "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    return [r[0] for r in memory.store.db.execute(sql).fetchall()]


def _columns(memory: Memory, table: str) -> list[tuple[str, bool]]:
    """(name, holds bytes) of each column of `table`."""
    db = memory.store.db
    if on_postgres(memory):
        rows = db.execute("SELECT column_name, data_type FROM information_schema.columns "
                          "WHERE table_schema = current_schema() AND table_name = ?", [table]).fetchall()
        return [(r[0], r[1] == "bytea") for r in rows]
    return [(r[1], True) for r in db.execute(f"PRAGMA table_info('{table}')").fetchall()]


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
    found = []
    for table in tables(memory):
        for column, raw in _columns(memory, table):
            where, value = _holds(memory, f'"{column}"', raw, needle, whole)
            if db.execute(f'SELECT count(*) FROM "{table}" WHERE {where}', [value]).fetchone()[0]:
                found.append(f"{table}.{column}")
    return found


def _holds(memory: Memory, column: str, raw: bool, needle: str, whole: bool) -> tuple[str, object]:
    """The condition (and its value) that `column` holds `needle`: equals it with `whole`, else contains it (as
    bytes where the column may hold bytes: SQLite's FTS5 segments, PostgreSQL's bytea)."""
    if on_postgres(memory):
        if whole:
            return f"CAST({column} AS text) = ?", needle
        return (f"position(? in {column}) > 0", needle.encode()) if raw else \
            (f"strpos(CAST({column} AS text), ?) > 0", needle)
    return (f"{column} = ?", needle) if whole else (f"instr(CAST({column} AS BLOB), ?) > 0", needle.encode())
