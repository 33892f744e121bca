"""Reliability fixtures: a fresh real `memory serve` process per test, with its own data folder and port."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.server_process import ServerProcess


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    """The real server (SQLite, Chroma, MiniLM) on a free loopback port; stopped after the test."""
    with ServerProcess(tmp_path / "data", tmp_path / "server.log") as running:
        yield running
