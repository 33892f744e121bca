"""Context memory for LLM agents: facts, experience and task memory, recalled inside a token budget.

    from memory import Memory, TextInput, load_config
    with Memory(load_config("config.toml")) as memory:
        memory.facts.observe("u1", "Never use Python 2 syntax.")
        memory.add_document("u1", TextInput("The loader reads CSV files with the csv module ...", title="loader notes"))
        print(memory.recall("u1", "how should I write the loader?", 800).rendered)
"""

import typing as _typing
from importlib import import_module as _import_module

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

if _typing.TYPE_CHECKING:
    from memory.context import ContextRequest, ContextResult
    from memory.experience import DocumentResult, MemoryTurn, SearchFilters, TextInput
    from memory.jobs import Job, JobOutcome
    from memory.recall.model import Omitted, RecallItem, RecallResult
    from memory.service import Health, Memory, NamespaceCounts, NamespaceDeletion
    from memory.snippet import Snippet

# The facade and its results are imported when first named: importing any module of the package runs this file,
# and a process that needs only the errors or the configuration (a CLI command that asks a running server) should
# not load the whole library for them.
_LAZY = {
    "ContextRequest": "memory.context", "ContextResult": "memory.context",
    "DocumentResult": "memory.experience", "MemoryTurn": "memory.experience", "SearchFilters": "memory.experience",
    "TextInput": "memory.experience",
    "Job": "memory.jobs", "JobOutcome": "memory.jobs",
    "Omitted": "memory.recall.model", "RecallItem": "memory.recall.model", "RecallResult": "memory.recall.model",
    "Health": "memory.service", "Memory": "memory.service", "NamespaceCounts": "memory.service",
    "NamespaceDeletion": "memory.service",
    "Snippet": "memory.snippet",
}

__all__ = [
    "AuthError",
    "Config",
    "ConfigError",
    "ConflictError",
    "ContextRequest",
    "ContextResult",
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
    "TextInput",
    "TooLargeError",
    "ValidationError",
    "load_config",
]


def __getattr__(name: str) -> _typing.Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'memory' has no attribute {name!r}")
    value = getattr(_import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
