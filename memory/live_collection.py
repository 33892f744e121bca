"""Chroma collection handles that survive their collection being dropped, and the lock that makes that safe."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["LiveCollection", "LiveCollections", "SharedLock"]

# Opens a Chroma collection by (name, namespace, create); None when it is absent and create is False.
Opener = Callable[[str, str, bool], Any | None]


class SharedLock:
    """Many holders at once, or one exclusive holder; a waiting exclusive holder goes before new shared ones."""

    def __init__(self) -> None:
        self._state = threading.Condition()
        self._shared = 0
        self._exclusive = False
        self._waiting = 0

    @contextmanager
    def shared(self) -> Iterator[None]:
        with self._state:
            while self._exclusive or self._waiting:
                self._state.wait()
            self._shared += 1
        try:
            yield
        finally:
            with self._state:
                self._shared -= 1
                self._state.notify_all()

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._state:
            self._waiting += 1
            while self._exclusive or self._shared:
                self._state.wait()
            self._waiting -= 1
            self._exclusive = True
        try:
            yield
        finally:
            with self._state:
                self._exclusive = False
                self._state.notify_all()


class LiveCollections:
    """The live handles of one store: which collections were dropped or written, and the lock around drops."""

    def __init__(self, open_collection: Opener, delete_collection: Callable[[str], None]) -> None:
        self.lock = SharedLock()
        self._open = open_collection
        self._delete = delete_collection
        self._drops: dict[str, int] = {}  # collection name -> how many times it was dropped
        self._written: set[str] = set()  # collections written to since this process opened or created them

    def handle(self, name: str, namespace: str) -> LiveCollection:
        """A handle on collection `name` (which may not exist yet)."""
        return LiveCollection(self, name, namespace)

    def drop(self, name: str) -> None:
        """Delete the collection, waiting for calls on it that are under way; absent already is fine."""
        with self.lock.exclusive():
            self._drops[name] = self._drops.get(name, 0) + 1
            self._written.discard(name)
            try:
                self._delete(name)
            except Exception:  # absent already: nothing to delete
                pass

    def drops(self, name: str) -> int:
        """How many times the collection was dropped in this process."""
        return self._drops.get(name, 0)

    def open(self, name: str, namespace: str, create: bool) -> Any | None:
        """The raw Chroma handle; None when absent and not created."""
        return self._open(name, namespace, create)

    def written(self, name: str) -> bool:
        """Whether the collection had its first write in this process (since its last drop)."""
        return name in self._written

    def mark_written(self, name: str) -> None:
        """Record the collection's first write."""
        self._written.add(name)


class LiveCollection:
    """A Chroma collection handle that stays valid when its collection is dropped (a namespace forgotten).

    A raw Chroma handle fails once its collection is deleted, and callers cache handles. Calls through this one
    wait while the collection is being dropped; after a drop, reads see an empty collection and writes create
    it anew. The first write to a collection also runs alone: Chroma 1.5 fails a query that meets the first
    write of a new collection ("Error creating hnsw segment reader: Nothing found on disk").
    """

    def __init__(self, collections: LiveCollections, name: str, namespace: str) -> None:
        self.name = name
        self._collections = collections
        self._namespace = namespace
        self._handle: Any | None = None
        self._seen_drops = -1

    def _current(self, create: bool) -> Any | None:
        """The live Chroma handle (under the shared drop lock); None if there is no collection."""
        drops = self._collections.drops(self.name)
        if self._handle is None or drops != self._seen_drops:
            self._handle = self._collections.open(self.name, self._namespace, create)
            self._seen_drops = drops
        return self._handle

    def _call(self, method: str, create: bool, absent: Any, **kwargs: Any) -> Any:
        with self._collections.lock.shared():
            for attempt in (1, 2):
                handle = self._current(create)
                if handle is None:
                    return absent
                try:
                    return getattr(handle, method)(**kwargs)
                except Exception as exc:
                    if attempt == 2 or not _dropped_elsewhere(exc):
                        raise
                    self._handle = None  # another process sharing the Chroma server dropped it: look again
        return absent  # pragma: no cover (the loop returns or raises)

    def _write(self, method: str, **kwargs: Any) -> None:
        if self._collections.written(self.name):
            self._call(method, True, None, **kwargs)
            return
        with self._collections.lock.exclusive():
            try:
                getattr(self._current(True), method)(**kwargs)
            except Exception as exc:
                if not _dropped_elsewhere(exc):
                    raise
                self._handle = None
                getattr(self._current(True), method)(**kwargs)
            self._collections.mark_written(self.name)

    def exists(self, create: bool = False) -> bool:
        """Whether the collection is there (created first with `create`)."""
        with self._collections.lock.shared():
            return self._current(create) is not None

    def add(self, **kwargs: Any) -> None:
        """Chroma's add; a dropped collection is created anew."""
        self._write("add", **kwargs)

    def upsert(self, **kwargs: Any) -> None:
        """Chroma's upsert; a dropped collection is created anew."""
        self._write("upsert", **kwargs)

    def delete(self, **kwargs: Any) -> None:
        """Chroma's delete; nothing to do once the collection is gone."""
        self._call("delete", False, None, **kwargs)

    def get(self, **kwargs: Any) -> Any:
        """Chroma's get; nothing found once the collection is gone."""
        return self._call("get", False, {"ids": [], "embeddings": []}, **kwargs)

    def query(self, **kwargs: Any) -> Any:
        """Chroma's query; no neighbours once the collection is gone."""
        none: list[list[Any]] = [[] for _ in kwargs.get("query_embeddings", [[]])]
        return self._call("query", False, {"ids": none, "distances": none}, **kwargs)

    def count(self) -> int:
        """Number of vectors; 0 once the collection is gone."""
        return int(self._call("count", False, 0))


def _dropped_elsewhere(exc: Exception) -> bool:
    """Whether a call failed because its collection is gone: dropped by another process on the same Chroma
    server (this process's own drops are counted, so its handles never reach a dropped collection)."""
    from chromadb.errors import NotFoundError

    return isinstance(exc, NotFoundError)
