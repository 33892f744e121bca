"""Fixtures of the fact tier's tests: the shipped rules, and a real store in a temporary data folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.config import load_config
from memory.database import Database
from memory.embedding import MINILM
from memory.facts.rules import RuleSet, load_rules
from memory.store import Store, open_store


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return load_rules()


@pytest.fixture()
def store(tmp_path: Path, database: Database | None) -> Iterator[Store]:
    """A real store in a temporary data folder, its records on each backend in turn."""
    opened = open_store(load_config().replace("service", data_dir=str(tmp_path)), MINILM, database)
    yield opened
    opened.close()
