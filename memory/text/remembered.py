"""Caches of text that deletions must clear: one registry, so that a tier deleting records need not know which
layer above it remembers their sentences.

A module that remembers texts of requests or records (context assembly's sentence, identifier and term caches)
registers how to forget them; every deletion of tasks, facts or a namespace calls `forget_all` (the deletion
tests list every cache and why it cannot outlive a delete: tests/security/test_deletion.py).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

__all__ = ["forget_all", "register"]

_lock = threading.Lock()
_functions: list[Callable[[], None]] = []
_methods: list[weakref.WeakMethod[Callable[[], None]]] = []


def register(forget: Callable[[], None]) -> None:
    """Call `forget` on every deletion (a bound method is held weakly: its object may go away)."""
    with _lock:
        if hasattr(forget, "__self__"):
            _methods.append(weakref.WeakMethod(forget))
        else:
            _functions.append(forget)


def forget_all() -> None:
    """Clear every registered cache of text."""
    with _lock:
        alive = [m for m in _methods if m() is not None]
        _methods[:] = alive
        calls = [*_functions, *(m() for m in alive)]
    for call in calls:
        if call is not None:
            call()
