"""Deletes that leave nothing on disk: SQLite's WAL, Chroma's log, id map and free pages, dropped collections' folders.

SQLite overwrites deleted rows in place (PRAGMA secure_delete), but its WAL keeps every page as it was written
until a checkpoint truncates it. Embedded Chroma 1.5 keeps a deleted id in its log table (`embeddings_queue`) and
in its HNSW id map (`index_metadata.pickle`) until the index is next persisted, which it does once every
`hnsw:sync_threshold` (1,000) log records of the collection, and then prunes the log; it deletes rows without
overwriting them; and it leaves a dropped collection's segment folder on disk. So a delete records, in its own
commit, that a pass is due, and a pass runs on a background thread ERASE_DELAY_S after the first delete it
covers: it makes every collection that lost vectors persist its index, removes the segment folders no collection
owns, VACUUMs chroma.sqlite3 and truncates memory.db's WAL. A process killed before the pass leaves the record,
and the next open runs it; `Store.close()` runs what is due before closing. bench/erase_cost.py times each step.
"""

from __future__ import annotations

import ctypes
import json
import logging
import re
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from memory.database import Connection, Database
from memory.live_collection import SharedLock

__all__ = ["ERASE_DELAY_S", "Erasable", "ErasePass", "Eraser", "flush", "orphan_folders", "vacuum",
           "zero_fresh_memory", "zeroing_available"]

# A pass starts at most this long after the first delete it covers; deletes meanwhile join it. Its own length
# grows with the store (bench/erase_cost.py).
ERASE_DELAY_S = 1.0
_RETRY_MAX_S = 60.0  # a failing pass is retried after 2, 4, ... ERASE_DELAY_S, at most this long apart

_PENDING = "erase_pending"  # meta key: {"flush": [collection names], "chroma": bool, "serial": n}: what is owed
_FORMAT = "erase_format"  # meta key: stores without it predate erasing and get one whole pass at open
_FORMAT_VERSION = "1"
_SET_META = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
_PAD = "~erase-"  # ids of the no-op deletes that make Chroma persist; no chunk id starts with "~"
_BATCH = 2000
_SEGMENT_FOLDER = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ErasePass:
    """What one pass did."""

    flushed: int  # collections whose index Chroma persisted (and whose log it pruned)
    folders: int  # orphaned segment folders removed
    vacuumed: bool  # chroma.sqlite3 rewritten without its free pages
    checkpointed: bool  # memory.db's WAL emptied (False when a reader held it: the pass is retried)


_M_PERTURB = -6  # glibc's mallopt parameter (malloc.h)
_zeroing: bool | None = None


def zeroing_available() -> bool:
    """Whether the C library the interpreter runs on is glibc, whose mallopt zero_fresh_memory sets."""
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt) and bool(libc.gnu_get_libc_version)
    except (OSError, AttributeError):
        return False


def zero_fresh_memory() -> bool:
    """Make glibc's malloc hand out zeroed memory and fill freed memory (mallopt M_PERTURB 0xff), once per process.

    Embedded Chroma's hnswlib writes a new collection's index buffers to disk at their whole capacity without
    zeroing them first (chroma-core/chroma#7688), so the unused slots of a live collection's files held whatever
    the process's heap held before: the text of a namespace deleted a moment earlier, say
    (tests/security/test_disk_trace.py found it there). With this setting such a buffer arrives zeroed. glibc's
    per-thread cache of small chunks is outside the setting, so it narrows the leak rather than closing it; the
    cure is upstream. bench/zeroing_cost.py measures what it costs. False where the C library is not glibc.

    It holds for the whole process, so a store sets it only when chroma.zero_fresh_memory says so: a `memory`
    command's own process does by default, an application that imports the library only when configured to.
    """
    global _zeroing
    if _zeroing is None:
        _zeroing = zeroing_available() and ctypes.CDLL(None).mallopt(_M_PERTURB, 0xFF) == 1
    return _zeroing


def vacuum(path: Path, timeout_s: float = 10.0) -> None:
    """Rewrite a SQLite file (Chroma's) so no deleted row is left in its free pages (nor in a WAL, had it one)."""
    conn = sqlite3.connect(path, timeout=timeout_s, isolation_level=None)
    try:
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # Chroma 1.5 keeps a rollback journal: then a no-op
    finally:
        conn.close()


def flush(client: Any, name: str) -> bool:
    """Make Chroma persist the collection's index now (its log is pruned with it); False if it is gone.

    Chroma persists once `sync_threshold` log records arrived since the last time, and has no call to do it
    sooner: deleting that many ids that do not exist counts as that many records and changes nothing else.
    """
    try:
        collection = client.get_collection(name, embedding_function=None)
    except Exception:  # chromadb raises NotFoundError or ValueError depending on version
        return False
    hnsw = (getattr(collection, "configuration_json", None) or {}).get("hnsw") or {}
    pads = [f"{_PAD}{i}" for i in range(int(hnsw.get("sync_threshold") or 1000))]
    for start in range(0, len(pads), _BATCH):
        collection.delete(ids=pads[start:start + _BATCH])
    return True


def orphan_folders(chroma_root: Path) -> list[Path]:
    """Segment folders under chroma_root that belong to no segment of any collection Chroma still has."""
    path = chroma_root / "chroma.sqlite3"
    if not path.exists():
        return []
    # Folders are listed before segments are read: Chroma records a segment before it makes its folder, so a
    # collection created meanwhile has its segment listed and its folder is kept.
    folders = [p for p in chroma_root.iterdir() if p.is_dir() and _SEGMENT_FOLDER.fullmatch(p.name)]
    try:
        live = _segments(f"file:{path}?mode=ro")
    except sqlite3.OperationalError:
        # A process killed while Chroma wrote leaves a write-ahead log to recover, which a read-only connection
        # cannot do; one that may write recovers it as Chroma's own would on opening (SQLite's locks keep the two
        # apart when Chroma is open too).
        live = _segments(f"file:{path}")
    return [p for p in folders if p.name not in live]


def _segments(uri: str) -> set[str]:
    conn = sqlite3.connect(uri, uri=True, timeout=10.0)
    try:
        return {r[0] for r in conn.execute("SELECT id FROM segments").fetchall()}
    finally:
        conn.close()


class Erasable(Protocol):
    """What a pass needs of a store (memory.store.Store is one): its transactions and database, and its Chroma
    client with the lock that keeps the store's own calls out while a pass rewrites Chroma's files."""

    database: Database

    @property
    def write_lock(self) -> AbstractContextManager[Any]: ...

    @property
    def chroma(self) -> Any: ...

    @property
    def vector_lock(self) -> SharedLock: ...

    def transaction(self) -> AbstractContextManager[Connection]: ...

    def collection_names(self) -> list[str]: ...


class Eraser:
    """Runs the passes of one store: soon after deletes (on its own thread), at open when one is owed, at close.

    `chroma_root` is the folder of an embedded Chroma (None for a Chroma server, whose files are its own).
    """

    def __init__(self, store: Erasable, chroma_root: Path | None, delay_s: float = ERASE_DELAY_S) -> None:
        self._store = store
        self._delay = delay_s
        self._chroma_root = chroma_root
        self._state = threading.Condition()
        self._due: float | None = None  # time.monotonic() when the next pass starts
        self._running = False
        self._failures = 0
        self._closed = False
        self._thread: threading.Thread | None = None
        self._pass_lock = threading.Lock()
        self.passes = 0  # passes run so far

    def note(self, tx: Connection, flush: Iterable[str] = (), gone: Iterable[str] = (),
             chroma: bool = False) -> None:
        """Inside a delete's transaction: record that a pass is owed, which collections lost vectors and which
        were dropped (no longer named here: a forgotten namespace's collection name is a trace of it too)."""
        owed = _owed(tx)
        owed["flush"] = sorted((set(owed["flush"]) | set(flush)) - set(gone))
        owed["chroma"] = bool(owed["chroma"] or chroma or owed["flush"])
        owed["serial"] += 1  # a pass clears the record only if no delete came while it ran
        _record(tx, owed)
        self.soon()

    def opened(self) -> None:
        """At open: owe a whole pass to a store that predates erasing, and start any pass that is owed."""
        with self._store.transaction() as tx:
            row = tx.execute("SELECT value FROM meta WHERE key = ?", [_FORMAT]).fetchone()
            if row is None or row[0] != _FORMAT_VERSION:
                owed = _owed(tx)
                names = self._store.collection_names() if self._chroma_root is not None else []
                _record(tx, {"flush": sorted(set(owed["flush"]) | set(names)), "chroma": True,
                             "serial": owed["serial"] + 1})
                tx.execute(_SET_META, [_FORMAT, _FORMAT_VERSION])
            owed_now = tx.execute("SELECT 1 FROM meta WHERE key = ?", [_PENDING]).fetchone() is not None
        orphans = self._chroma_root is not None and bool(orphan_folders(self._chroma_root))
        if owed_now or orphans:
            self.soon()

    def soon(self) -> None:
        """Start a pass within the delay (a pass already due keeps its time)."""
        with self._state:
            if self._closed:
                return
            if self._due is None:
                self._due = time.monotonic() + self._delay
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="memory-eraser", daemon=True)
                self._thread.start()
            self._state.notify_all()

    def wait(self, timeout_s: float) -> bool:
        """Block until no pass is due or running; False if that took longer than timeout_s."""
        end = time.monotonic() + timeout_s
        with self._state:
            while self._due is not None or self._running:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._state.wait(left)
        return True

    def run(self) -> ErasePass:
        """One pass now, on the calling thread: what deletes owe, then memory.db's WAL truncated."""
        with self._pass_lock:
            store = self._store
            with store.transaction() as tx:
                owed = _owed(tx)
            flushed, removed, vacuumed = 0, 0, False
            if self._chroma_root is not None:
                for name in owed["flush"]:
                    with store.vector_lock.exclusive():  # no Chroma call of this process runs meanwhile
                        flushed += flush(store.chroma, name)
                orphans = orphan_folders(self._chroma_root)
                if owed["chroma"] or owed["flush"] or orphans:
                    with store.vector_lock.exclusive():
                        for folder in orphan_folders(self._chroma_root):
                            shutil.rmtree(folder)
                            removed += 1
                        vacuum(self._chroma_root / "chroma.sqlite3")
                        vacuumed = True
            with store.transaction() as tx:  # a delete made during the pass leaves it all owed to the next one
                if _owed(tx)["serial"] == owed["serial"]:
                    tx.execute("DELETE FROM meta WHERE key = ?", [_PENDING])
            with store.write_lock:  # a writer of this process would keep the checkpoint from finishing
                checkpointed = store.database.erase()
            self.passes += 1
            return ErasePass(flushed, removed, vacuumed, checkpointed)

    def close(self) -> None:
        """Stop the thread, then run what is owed (and always truncate the WAL) before the store closes."""
        with self._state:
            self._closed = True
            self._due = None
            self._state.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()
        try:
            self.run()
        except Exception:  # what the pass owed stays recorded: the next open runs it
            _log.exception("erasing deleted data at close failed; the next open retries")

    def _loop(self) -> None:
        while True:
            with self._state:
                while not self._closed and (self._due is None or self._due > time.monotonic()):
                    self._state.wait(None if self._due is None else self._due - time.monotonic())
                if self._closed:
                    return
                self._due = None
                self._running = True
            try:
                done = self.run()
                retry = not done.checkpointed
                self._failures = 0
            except Exception:  # a failed pass is retried; what it owed stays recorded in meta
                _log.exception("erasing deleted data failed; retrying")
                self._failures += 1
                retry = True
            with self._state:
                self._running = False
                if retry and not self._closed:
                    wait = min(_RETRY_MAX_S, self._delay * 2 ** self._failures)
                    self._due = min(self._due or float("inf"), time.monotonic() + wait)
                self._state.notify_all()


def _owed(db: Connection) -> dict[str, Any]:
    row = db.execute("SELECT value FROM meta WHERE key = ?", [_PENDING]).fetchone()
    owed = json.loads(row[0]) if row else {}
    return {"flush": list(owed.get("flush", [])), "chroma": bool(owed.get("chroma", False)),
            "serial": int(owed.get("serial", 0))}


def _record(db: Connection, owed: dict[str, Any]) -> None:
    db.execute(_SET_META, [_PENDING, json.dumps(owed)])
