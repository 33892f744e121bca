"""Recall fixtures: the real cl100k counter, a factory for candidate snippets, and a Memory on each backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memory.service import Memory
from memory.snippet import Snippet, Tier
from memory.tokens import TokenCounter


@pytest.fixture()
def snip(counter: TokenCounter) -> Callable[..., Snippet]:
    """Build a Snippet with its real token count; tier, id, text and score are the usual arguments."""

    def make(tier: Tier, id: str, text: str, score: float = 0.5, **extra: Any) -> Snippet:
        return Snippet(tier=tier, id=id, text=text, score=score, tokens=counter.count(text), **extra)

    return make


@pytest.fixture()
def memory(backend_memory: Memory) -> Memory:
    """A Memory on the SQLite file, then on PostgreSQL with a Chroma server."""
    return backend_memory
