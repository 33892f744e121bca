"""The embedded backend: one SQLite file (WAL, busy timeout, secure delete) through sqlite-utils, a connection per
thread, BEGIN IMMEDIATE for writes and the numbered migrations of memory.schema."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import sqlite_utils

from memory.database.base import Connection, Params
from memory.errors import StoreMismatchError
from memory.schema import MIGRATIONS, SCHEMA_VERSION

__all__ = ["SqliteConnection", "SqliteDatabase", "SqliteDialect", "checkpoint", "read_meta"]


class SqliteDialect:
    """SQLite's JSON functions."""

    name = "sqlite"

    @staticmethod
    def json_members(placeholder: str) -> str:
        """The members (column `value`) of a JSON list, bound or a column's, as text."""
        return f"SELECT value FROM json_each({placeholder})"

    @staticmethod
    def json_field(column: str, key: str) -> str:
        """A top-level field of a JSON object column, as text."""
        return f"json_extract({column}, '$.{key}')"


_DIALECT = SqliteDialect()


class SqliteConnection:
    """A thread's sqlite3 connection under sqlite-utils; `sqlite` is that Database, for what only SQLite has
    (scripts, PRAGMAs)."""

    __slots__ = ("_conn", "sqlite")
    dialect = _DIALECT

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.sqlite = db
        self._conn = db.conn

    def execute(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        """Run one statement; its cursor."""
        return self._conn.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        """Run one statement per row."""
        return self._conn.executemany(sql, rows)


def read_meta(path: Path) -> dict[str, str] | None:
    """The `meta` rows of the store file at `path`, read without writing; None when there is no such store."""
    if not path.exists():
        return None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def checkpoint(db_path: Path, timeout_s: float = 2.0) -> bool:
    """Copy memory.db's WAL into the file and truncate it to 0 bytes; False if readers kept it busy."""
    conn = sqlite3.connect(db_path, timeout=timeout_s, isolation_level=None)
    try:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    finally:
        conn.close()
    return not busy


class SqliteDatabase:
    """The store's SQLite file."""

    dialect = _DIALECT

    exclusive = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def connection(self) -> SqliteConnection:
        """This thread's connection (sqlite3 connections must not be shared across threads)."""
        found: SqliteConnection | None = getattr(self._local, "conn", None)
        if found is None:
            conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            # Deleted content is overwritten, not left in free pages: a forgotten memory must not stay on disk.
            conn.execute("PRAGMA secure_delete=ON")
            with self._lock:
                self._connections.append(conn)
            found = SqliteConnection(sqlite_utils.Database(conn))
            self._local.conn = found
        return found

    def begin(self, conn: Connection) -> None:
        """BEGIN IMMEDIATE: the file's one writer from now (another process's waits up to the busy timeout)."""
        conn.execute("BEGIN IMMEDIATE")

    def migrate(self) -> None:
        """The memory.schema steps this file has not seen, each recorded as it is done."""
        db = self.connection().sqlite
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        current = int(row[0]) if row else 0
        if current > SCHEMA_VERSION:
            raise StoreMismatchError(
                f"the store in {self.path.parent} has schema version {current}, newer than this program's "
                f"{SCHEMA_VERSION}; upgrade the program or use another data folder"
            )
        for version, step in MIGRATIONS:
            if version > current:
                step(db)
                db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                           "ON CONFLICT (key) DO UPDATE SET value = excluded.value", [str(version)])

    def hold(self, exclusive: bool) -> None:
        """Nothing more: the data folder's lock (memory.lock), taken before the file opens, keeps every other
        process out whatever it means to do."""

    def erase(self) -> bool:
        """Truncate the WAL, which keeps every page as it was written until a checkpoint (deleted rows are
        overwritten in the file itself: PRAGMA secure_delete)."""
        return checkpoint(self.path)

    def close(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            for conn in self._connections:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._connections.clear()
        self._local = threading.local()

