"""A value made on first use, once, whichever thread asks first: what a one-shot command may never need (the
Chroma client, the tokenizer's ranks, the model, context assembly), which a service makes at start by asking."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Once"]

T = TypeVar("T")


class Once(Generic[T]):
    """`make()`, called by the first get() and kept; if it raises, nothing is kept and the next get() tries again."""

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._value: T | None = None
        self._lock = threading.Lock()

    @property
    def made(self) -> bool:
        """Whether the value has been made yet."""
        return self._value is not None

    def get(self) -> T:
        """The value, made now if no call has made it yet."""
        value = self._value
        if value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._make()
                value = self._value
        return value
