"""Context memory for LLM agents: facts, experience and task memory, recalled inside a token budget.

    from memory import Memory, load_config
    with Memory(load_config("config.toml")) as memory:
        memory.facts.observe("u1", "Never use Python 2 syntax.")
        print(memory.recall("how should I write the loader?", 800, "u1").rendered)
"""

from memory.config import Config, load_config
from memory.errors import (
    AuthError,
    ConfigError,
    MemoryError_,
    NotFoundError,
    StoreError,
    StoreMismatchError,
    TooLargeError,
    ValidationError,
)
from memory.recall.model import Omitted, RecallItem, RecallResult, Snippet
from memory.service import Health, Memory

__all__ = [
    "AuthError",
    "Config",
    "ConfigError",
    "Health",
    "Memory",
    "MemoryError_",
    "NotFoundError",
    "Omitted",
    "RecallItem",
    "RecallResult",
    "Snippet",
    "StoreError",
    "StoreMismatchError",
    "TooLargeError",
    "ValidationError",
    "load_config",
]
