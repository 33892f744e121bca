"""The caches of one `Memory`: each bounded, each keyed by namespace, forgotten a namespace at a time.

What a cache holds comes from one tenant's requests and records (message texts, their counts and sentences, item
pages, tool-description vectors). So every entry is keyed by its namespace first: a hit never tells one tenant
what another sent, a delete forgets the entries of the namespace it deleted from and leaves the others' warm, and
all of them together stay within their bounds, the least recently used going first. The tests list every cache
and why it cannot outlive a delete (tests/security/test_deletion.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["BoundedCache", "Caches"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """Entries keyed by (namespace, key), least recently used out beyond `entries` or a total `weight`.

    `weigh` says what an entry weighs (the characters of a text it keeps, the bytes of a vector); an entry heavier
    than a sixteenth of the whole is computed each time rather than kept, so one request cannot empty the cache.
    """

    def __init__(self, entries: int, *, weight: int | None = None,
                 weigh: Callable[[K, V], int] | None = None) -> None:
        self._entries = entries
        self._weight = weight
        self._weigh = weigh
        self._items: OrderedDict[tuple[str, K], tuple[V, int]] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def get(self, namespace: str, key: K) -> V | None:
        """The value kept for `key` in `namespace`, or None."""
        with self._lock:
            found = self._items.get((namespace, key))
            if found is None:
                return None
            self._items.move_to_end((namespace, key))
            return found[0]

    def put(self, namespace: str, key: K, value: V) -> None:
        """Keep `value` (unless it alone weighs more than a sixteenth of the cache's weight)."""
        weight = self._weigh(key, value) if self._weigh is not None else 0
        if self._weight is not None and weight > self._weight // 16:
            return
        with self._lock:
            old = self._items.pop((namespace, key), None)
            if old is not None:
                self._total -= old[1]
            self._items[(namespace, key)] = (value, weight)
            self._total += weight
            while len(self._items) > self._entries or (self._weight is not None and self._total > self._weight):
                self._total -= self._items.popitem(last=False)[1][1]

    def get_or_compute(self, namespace: str, key: K, compute: Callable[[], V]) -> V:
        """The kept value, or `compute()` kept (computed outside the lock: two threads may both compute it)."""
        found = self.get(namespace, key)
        if found is not None:
            return found
        value = compute()
        self.put(namespace, key, value)
        return value

    def forget(self, namespace: str) -> None:
        """Drop every entry of `namespace`."""
        with self._lock:
            for entry in [e for e in self._items if e[0] == namespace]:
                self._total -= self._items.pop(entry)[1]

    def namespaces(self) -> set[str]:
        """The namespaces that have an entry (for the tests that check deletes reach the caches)."""
        with self._lock:
            return {namespace for namespace, _ in self._items}

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


class Caches:
    """Every cache of one Memory, made here so that a delete reaches them all."""

    def __init__(self) -> None:
        self._caches: list[BoundedCache[object, object]] = []
        self._lock = threading.Lock()

    def new(self, entries: int, *, weight: int | None = None,
            weigh: Callable[[K, V], int] | None = None) -> BoundedCache[K, V]:
        """A cache that forget() reaches."""
        cache: BoundedCache[K, V] = BoundedCache(entries, weight=weight, weigh=weigh)
        with self._lock:
            self._caches.append(cache)  # type: ignore[arg-type]  # forget() reads only the namespaces
        return cache

    def forget(self, namespace: str) -> None:
        """Drop what every cache holds of `namespace` (records of it were deleted)."""
        with self._lock:
            caches = list(self._caches)
        for cache in caches:
            cache.forget(namespace)

    def namespaces(self) -> set[str]:
        """The namespaces any cache holds an entry of."""
        with self._lock:
            caches = list(self._caches)
        return set().union(*(cache.namespaces() for cache in caches))
