"""The one family of errors the memory library raises.

    MemoryError_ (base: every error the library raises on purpose)
    ├── ConfigError          a setting is unknown or has a bad value
    ├── StoreMismatchError   the store was built by another model / tokenizer / schema
    ├── StoreError           the store cannot be opened or written
    │   └── StoreBusyError   another process (a running server, another command) holds the store
    ├── ValidationError      an argument is out of range or malformed
    ├── NotFoundError        an id, key, task or document does not exist (in this namespace)
    ├── ConflictError        an id derived from a name already holds other content; nothing was overwritten
    ├── TooLargeError        an input is over a configured limit
    └── AuthError            a key is missing, unknown, or may not use a namespace

Messages say what was expected, what arrived, and what to do. The core knows nothing about HTTP:
the API maps these types to status codes in one table.
"""

from __future__ import annotations

__all__ = [
    "AuthError",
    "ConfigError",
    "ConflictError",
    "MemoryError_",
    "NotFoundError",
    "StoreBusyError",
    "StoreError",
    "StoreMismatchError",
    "TooLargeError",
    "ValidationError",
]


class MemoryError_(Exception):
    """Base of every error the memory library raises on purpose."""


class ConfigError(MemoryError_):
    """A setting is unknown or has a bad value."""


class StoreMismatchError(MemoryError_):
    """The store on disk was built by a different embedding model, tokenizer or schema."""


class StoreError(MemoryError_):
    """The store cannot be opened or written."""


class StoreBusyError(StoreError):
    """Another process holds the store: `pid` says which, `url` where it serves it when it is a server."""

    def __init__(self, message: str, pid: int | None = None, url: str | None = None) -> None:
        super().__init__(message)
        self.pid = pid
        self.url = url


class ValidationError(MemoryError_):
    """An argument is out of range or malformed."""


class NotFoundError(MemoryError_):
    """An id, key, task or document does not exist in the namespace asked about."""


class ConflictError(MemoryError_):
    """A document without an explicit id would replace another one of that name; nothing was written."""


class TooLargeError(MemoryError_):
    """An input is over a configured size limit."""


class AuthError(MemoryError_):
    """An API key is missing or unknown, or may not use the namespace asked for."""
