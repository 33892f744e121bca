"""The shared backend: every record in PostgreSQL through psycopg 3 and its connection pool, so that any number of
service replicas on any machines read and write one store.

Statements arrive in the portable subset with `?` / `:name` placeholders and are turned into psycopg's once each
(`_psycopg_sql`). Connections run in autocommit; a write transaction is BEGIN plus a transaction-scoped advisory
lock (`_WRITER`), so writes are serialised across every replica as SQLite's BEGIN IMMEDIATE serialises them across
processes, and the tiers' read-then-write steps stay correct without each taking its own lock. Migrations run under
a session advisory lock (`_MIGRATOR`): the first replica to start applies them, the others wait and find them done.
Values come back as SQLite gives them: booleans are stored as integers, an integer `sum()` is an int.
"""

from __future__ import annotations

import functools
import os
import re
import socket
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from memory.config import StoreConfig
from memory.database.base import Connection, Params, redacted
from memory.database.postgres_schema import MIGRATIONS, SCHEMA_VERSION
from memory.errors import StoreBusyError, StoreError, StoreMismatchError

__all__ = ["PostgresConnection", "PostgresDatabase", "PostgresDialect", "read_meta"]

# Advisory lock keys (any 64-bit numbers that no other application on the database is likely to use).
_WRITER = 0x6D656D6F72790001  # held by each write transaction
_MIGRATOR = 0x6D656D6F72790002  # held while migrations run
_HOLDER = 0x6D656D6F72790003  # held shared by every process that has the store open, alone by a re-embed
# Every table a delete may leave text in (memory.erase's pass vacuums them).
_TEXT_TABLES = ("facts", "fact_tombstones", "facts_observed", "tasks", "task_items", "task_summaries", "documents",
                "chunks", "turn_conversations", "jobs", "context_threads", "context_tools", "lexical_terms",
                "chunks_fts", "lexical_postings")


class PostgresDialect:
    """PostgreSQL's JSON operators (the columns hold JSON as text, as on SQLite)."""

    name = "postgres"

    @staticmethod
    def json_members(placeholder: str) -> str:
        """The members (column `value`) of a JSON list, bound or a column's, as text."""
        return f"SELECT value FROM jsonb_array_elements_text(CAST({placeholder} AS jsonb)) AS members(value)"

    @staticmethod
    def json_field(column: str, key: str) -> str:
        """A top-level field of a JSON object column, as text."""
        return f"(CAST({column} AS jsonb) ->> '{key}')"


_DIALECT = PostgresDialect()
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# SQLite's planner hints, which PostgreSQL's planner has no use for (and its grammar no room): a CROSS JOIN ... ON
# (SQLite never reorders it; an inner join everywhere) and a unary + that keeps SQLite off an index of a column.
_HINTS = ((re.compile(r"\bCROSS JOIN\b"), "JOIN"), (re.compile(r"(?<=[(\s])\+(?=[A-Za-z_])"), ""))


@functools.lru_cache(maxsize=4096)
def _psycopg_sql(sql: str) -> str:
    """`sql` with psycopg's placeholders: `?` -> %s, `:name` -> %(name)s (not `::type` casts, nothing inside quotes),
    every literal % doubled, and SQLite's planner hints (_HINTS) dropped."""
    for hint, plain in _HINTS:
        sql = hint.sub(plain, sql)
    out: list[str] = []
    i, n = 0, len(sql)
    quote: str | None = None
    while i < n:
        ch = sql[i]
        if ch == "%":
            out.append("%%")
        elif quote is not None:
            out.append(ch)
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == ":" and i + 1 < n and sql[i + 1] == ":":
            out.append("::")
            i += 1
        elif ch == ":" and (i == 0 or sql[i - 1] != ":") and (found := _NAME.match(sql, i + 1)):
            out.append(f"%({found.group()})s")
            i = found.end() - 1
        else:
            out.append(ch)
        i += 1
    return "".join(out)


class _Rows:
    """A statement's result, read whole before its connection goes back to the pool."""

    __slots__ = ("_rows", "rowcount")

    def __init__(self, cursor: Any) -> None:
        self._rows: list[Any] = cursor.fetchall() if cursor.description is not None else []
        self.rowcount: int = cursor.rowcount

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[Any]:
        return self._rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows)


class PostgresConnection:
    """One thread's way to the pool: each statement outside a transaction borrows a connection and gives it back
    when it ends, so a replica holds as many connections as it runs statements at once, and a thread that ends
    (the server's request threads come and go) holds none. A transaction (BEGIN until COMMIT or ROLLBACK) and a
    `pinned()` block keep the connection they started on."""

    __slots__ = ("_conn", "_database", "_pins")
    dialect = _DIALECT

    def __init__(self, database: PostgresDatabase) -> None:
        self._database = database
        self._conn: Any = None
        self._pins = 0

    def _borrowed(self) -> Any:
        if self._conn is None:
            self._conn = self._database._borrow()
        return self._conn

    def _settle(self) -> None:
        """Give the connection back unless a transaction or a pin is still using it."""
        conn = self._conn
        if conn is None or self._pins:
            return
        from psycopg.pq import TransactionStatus

        if conn.closed or conn.info.transaction_status in (TransactionStatus.IDLE, TransactionStatus.UNKNOWN):
            self._conn = None
            self._database._give_back(conn)

    def execute(self, sql: str, params: Params = ()) -> Any:
        """Run one statement; its rows."""
        conn = self._borrowed()
        try:
            with conn.cursor() as cursor:
                cursor.execute(_psycopg_sql(sql), params if isinstance(params, dict) else tuple(params))
                return _Rows(cursor)
        finally:
            self._settle()

    def script(self, sql: str) -> None:
        """Run several statements without parameters, as written (no placeholders are read)."""
        conn = self._borrowed()
        try:
            conn.execute(sql)
        finally:
            self._settle()

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement per row."""
        rows = [tuple(r) for r in rows]
        if not rows:
            return
        conn = self._borrowed()
        try:
            with conn.cursor() as cursor:
                cursor.executemany(_psycopg_sql(sql), rows)
        finally:
            self._settle()

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Statements of the block on one connection (what a session-level lock needs)."""
        self._pins += 1
        try:
            yield
        finally:
            self._pins -= 1
            self._settle()


def _configure(conn: Any) -> None:
    """Each pooled connection: autocommit, booleans as integers, integer sums as ints (as SQLite answers)."""
    from psycopg.adapt import Loader
    from psycopg.types.numeric import IntDumper

    class _Number(Loader):
        def load(self, data: Any) -> int | float:
            value = Decimal(bytes(data).decode())
            return int(value) if value == value.to_integral_value() else float(value)

    class _Bool(IntDumper):
        def dump(self, obj: Any) -> bytes:
            return b"1" if obj else b"0"

    conn.autocommit = True
    conn.adapters.register_dumper(bool, _Bool)
    conn.adapters.register_loader("numeric", _Number)
    _cheap_random_reads(conn)


# PostgreSQL's default cost of reading a page out of order, made for spinning disks.
_DISK_RANDOM_PAGE_COST = "4"


def _cheap_random_reads(conn: Any) -> None:
    """Price a page read out of order as one in order, nearly, unless the server was tuned otherwise.

    The store's reads fetch a few hundred rows by key (a recall's candidates, joined to their documents and
    lexical rows) from a working set the server keeps in memory. At the default price the planner instead scans
    a namespace's whole documents table to hash-join them, a cost that grows with the namespace while the
    index lookups' does not (bench/backend_latency.py). 1.1 is what PostgreSQL's documentation suggests for
    storage without a seek cost; a value an operator set is left as it is.
    """
    if conn.execute("SELECT current_setting('random_page_cost')").fetchone()[0] == _DISK_RANDOM_PAGE_COST:
        conn.execute("SET random_page_cost = 1.1")


def _connect(url: str, **options: Any) -> Any:
    """A connection of its own, outside the pool; StoreError in a sentence when the server cannot be reached."""
    import psycopg

    try:
        return psycopg.connect(url, connect_timeout=30, **options)
    except psycopg.OperationalError as exc:
        raise StoreError(f"cannot connect to PostgreSQL at {redacted(url)}: {exc}") from exc


def read_meta(url: str) -> dict[str, str] | None:
    """The `meta` rows of the store in the database at `url`; None when it holds none yet."""
    import psycopg

    try:
        with _connect(url) as conn:
            return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta").fetchall()}
    except psycopg.errors.UndefinedTable:
        return None
    except psycopg.OperationalError as exc:
        raise StoreError(f"cannot connect to PostgreSQL at {redacted(url)}: {exc}") from exc


class PostgresDatabase:
    """The store's records in the PostgreSQL database at `url`."""

    dialect = _DIALECT
    exclusive = False  # any number of replicas

    def __init__(self, url: str, *, max_connections: int = StoreConfig.pool_size, timeout_s: float = 30.0) -> None:
        from psycopg_pool import ConnectionPool

        self.url = url
        self.where = redacted(url)
        self._local = threading.local()
        self._lent: set[Any] = set()  # connections out of the pool (in a statement, a transaction or a pin)
        self._lock = threading.Lock()
        self._holder: Any = None  # the connection that holds _HOLDER (hold)
        try:
            self._pool = ConnectionPool(url, min_size=1, max_size=max_connections, timeout=timeout_s,
                                        configure=_configure, open=True, name="memory")
            self._pool.wait(timeout=timeout_s)
        except Exception as exc:  # psycopg's PoolTimeout / OperationalError: the server is not reachable
            raise StoreError(f"cannot connect to PostgreSQL at {self.where}: {exc}") from exc

    def connection(self) -> PostgresConnection:
        """This thread's connection: it borrows from the pool for each statement (PostgresConnection)."""
        found: PostgresConnection | None = getattr(self._local, "conn", None)
        if found is None:
            found = PostgresConnection(self)
            self._local.conn = found
        return found

    def _borrow(self) -> Any:
        try:
            conn = self._pool.getconn()
        except Exception as exc:  # PoolTimeout, PoolClosed: every connection busy for timeout_s, or closed
            raise StoreError(f"no connection to PostgreSQL at {self.where} came free: {exc}") from exc
        with self._lock:
            self._lent.add(conn)
        return conn

    def _give_back(self, conn: Any) -> None:
        with self._lock:
            self._lent.discard(conn)
        self._pool.putconn(conn)  # a broken one is discarded by the pool, an open transaction rolled back

    def begin(self, conn: Connection) -> None:
        """BEGIN, then wait for the store-wide writer lock (released by COMMIT or ROLLBACK)."""
        conn.execute("BEGIN")
        conn.execute("SELECT pg_advisory_xact_lock(?)", [_WRITER])

    def migrate(self) -> None:
        """The memory.database.postgres_schema steps this database has not seen, under the migrator lock."""
        conn = self.connection()
        with conn.pinned():  # the session lock and its unlock on one connection
            self._migrate(conn)

    def _migrate(self, conn: PostgresConnection) -> None:
        conn.execute("SELECT pg_advisory_lock(?)", [_MIGRATOR])
        try:
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT COLLATE \"C\" PRIMARY KEY, value TEXT NOT NULL)")
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            current = int(row[0]) if row else 0
            if current > SCHEMA_VERSION:
                raise StoreMismatchError(
                    f"the store at {self.where} has schema version {current}, newer than this program's "
                    f"{SCHEMA_VERSION}; upgrade the program or use another database")
            for version, step in MIGRATIONS:
                if version > current:
                    conn.execute("BEGIN")
                    try:
                        step(conn)
                        conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value", [str(version)])
                        conn.execute("COMMIT")
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
        finally:
            conn.execute("SELECT pg_advisory_unlock(?)", [_MIGRATOR])

    def hold(self, exclusive: bool) -> None:
        """Take `_HOLDER` on a connection of its own, kept until close(): a session lock, so a process that dies
        (or loses its connection) lets go of it at once."""
        name = f"memory {'rewrite' if exclusive else 'store'} pid {os.getpid()} on {socket.gethostname()}"[:63]
        conn = _connect(self.url, autocommit=True, application_name=name)
        take = "pg_try_advisory_lock" if exclusive else "pg_try_advisory_lock_shared"
        taken = conn.execute(f"SELECT {take}(%s)", [_HOLDER]).fetchone()
        if taken is not None and taken[0]:
            self._holder = conn
            return
        holders = [r[0] or "another client" for r in conn.execute(
            "SELECT DISTINCT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s AND l.objid = %s AND l.objsubid = 1 "
            "ORDER BY 1", [_HOLDER >> 32, _HOLDER & 0xFFFFFFFF]).fetchall()]
        conn.close()
        who = "; ".join(holders) or "another process"
        if exclusive:
            raise StoreBusyError(f"the store at {self.where} is open elsewhere ({who}): stop every replica and "
                                 "command that uses it before rewriting it")
        raise StoreBusyError(f"the store at {self.where} is being rewritten ({who}, a `memory reembed`): open it "
                             "again when that has finished")

    def erase(self) -> bool:
        """VACUUM the tables that hold text: the space of deleted rows is marked free and written over by later
        rows, and no query reads them. What PostgreSQL keeps beyond that (its WAL, base backups, a replica's
        copies) is the operator's to expire (docs/operations.md)."""
        self.connection().execute(f"VACUUM {', '.join(_TEXT_TABLES)}")
        return True

    def close(self) -> None:
        """Close the pool and every connection still lent out."""
        with self._lock:
            lent, self._lent = list(self._lent), set()
        for conn in lent:
            try:
                conn.close()
            except Exception:  # a connection the server dropped is closed already
                pass
        if self._holder is not None:
            self._holder.close()
            self._holder = None
        self._local = threading.local()
        self._pool.close()  # again after a first close: nothing to do
