"""Context memory for LLM agents: facts, experience and task memory, recalled inside a token budget.

    from memory import Memory, load_config
    with Memory(load_config("config.toml")) as memory:
        memory.facts.observe("u1", "Never use Python 2 syntax.")
        memory.add_document("u1", "The loader reads CSV files with the csv module ...", title="loader notes")
        print(memory.recall("u1", "how should I write the loader?", 800).rendered)
"""

from memory.config import Config, load_config
from memory.errors import (
    AuthError,
    ConfigError,
    ConflictError,
    MemoryError_,
    NotFoundError,
    StoreBusyError,
    StoreError,
    StoreMismatchError,
    TooLargeError,
    ValidationError,
)
from memory.experience import DocumentResult, MemoryTurn, SearchFilters
from memory.jobs import Job, JobOutcome
from memory.recall.model import Omitted, RecallItem, RecallResult
from memory.service import Health, Memory, NamespaceCounts, NamespaceDeletion
from memory.snippet import Snippet

__all__ = [
    "AuthError",
    "Config",
    "ConfigError",
    "ConflictError",
    "DocumentResult",
    "Health",
    "Job",
    "JobOutcome",
    "Memory",
    "MemoryError_",
    "MemoryTurn",
    "NamespaceCounts",
    "NamespaceDeletion",
    "NotFoundError",
    "Omitted",
    "RecallItem",
    "RecallResult",
    "SearchFilters",
    "Snippet",
    "StoreBusyError",
    "StoreError",
    "StoreMismatchError",
    "TooLargeError",
    "ValidationError",
    "load_config",
]
