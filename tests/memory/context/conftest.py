"""Context fixtures: every test that asks for a Memory runs on both backends, since what the packer decided
(observed messages, tombstones, tool selections, summaries) is store state."""

from __future__ import annotations

import pytest

from memory.service import Memory


@pytest.fixture()
def memory(backend_memory: Memory) -> Memory:
    """A Memory on the SQLite file, then on PostgreSQL with a Chroma server."""
    return backend_memory
