"""A TestClient over a real Memory (SQLite, Chroma, MiniLM, cl100k) in a fresh folder."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from memory.config import Config
from memory.service import Memory
from tests import local_client


@pytest.fixture()
def client(config: Config, memory: Memory) -> TestClient:
    """The app without auth (the embedded default)."""
    return local_client(create_app(config, memory))
