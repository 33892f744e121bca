"""Shared fixtures: the real model and tokenizer loaded once per session, a fresh real store per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.config import Config, load_config
from memory.embedding import Embedder, load_embedder
from memory.service import Memory
from memory.tokens import TokenCounter, get_counter


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The bundled all-MiniLM-L6-v2, loaded once for the whole test session."""
    return load_embedder(load_config().embedding)


@pytest.fixture(scope="session")
def counter() -> TokenCounter:
    """The cl100k_base counter every budget uses."""
    return get_counter()


@pytest.fixture()
def config(tmp_path: Path) -> Config:
    """Default settings with the store in a fresh folder."""
    return load_config().replace("service", data_dir=str(tmp_path / "data"))


@pytest.fixture()
def memory(config: Config, embedder: Embedder) -> Iterator[Memory]:
    """A Memory over a real SQLite file and a real embedded Chroma under tmp_path."""
    with Memory(config, embedder=embedder) as opened:
        yield opened
