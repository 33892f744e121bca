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
import re
import threading
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from memory.database.base import Connection, Params, redacted
from memory.database.postgres_schema import MIGRATIONS, SCHEMA_VERSION
from memory.errors import StoreError, StoreMismatchError

__all__ = ["PostgresConnection", "PostgresDatabase", "PostgresDialect", "read_meta"]

# Advisory lock keys (any 64-bit numbers that no other application on the database is likely to use).
_WRITER = 0x6D656D6F72790001  # held by each write transaction
_MIGRATOR = 0x6D656D6F72790002  # held while migrations run
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


class PostgresConnection:
    """A pooled psycopg connection held by one thread."""

    __slots__ = ("_conn",)
    dialect = _DIALECT

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Params = ()) -> Any:
        """Run one statement; its cursor."""
        cursor = self._conn.cursor()
        cursor.execute(_psycopg_sql(sql), params if isinstance(params, dict) else tuple(params))
        return cursor

    def script(self, sql: str) -> None:
        """Run several statements without parameters, as written (no placeholders are read)."""
        self._conn.execute(sql)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement per row."""
        rows = [tuple(r) for r in rows]
        if rows:
            with self._conn.cursor() as cursor:
                cursor.executemany(_psycopg_sql(sql), rows)


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


def read_meta(url: str) -> dict[str, str] | None:
    """The `meta` rows of the store in the database at `url`; None when it holds none yet."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=30) as conn:
            return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta").fetchall()}
    except psycopg.errors.UndefinedTable:
        return None
    except psycopg.OperationalError as exc:
        raise StoreError(f"cannot connect to PostgreSQL at {redacted(url)}: {exc}") from exc


class PostgresDatabase:
    """The store's records in the PostgreSQL database at `url`."""

    dialect = _DIALECT
    exclusive = False  # any number of replicas

    def __init__(self, url: str, *, max_connections: int = 48, timeout_s: float = 30.0) -> None:
        from psycopg_pool import ConnectionPool

        self.url = url
        self.where = redacted(url)
        self._local = threading.local()
        self._held: list[Any] = []
        self._lock = threading.Lock()
        try:
            self._pool = ConnectionPool(url, min_size=1, max_size=max_connections, timeout=timeout_s,
                                        configure=_configure, open=True, name="memory")
            self._pool.wait(timeout=timeout_s)
        except Exception as exc:  # psycopg's PoolTimeout / OperationalError: the server is not reachable
            raise StoreError(f"cannot connect to PostgreSQL at {self.where}: {exc}") from exc

    def connection(self) -> PostgresConnection:
        """This thread's connection, taken from the pool on first use and kept until close."""
        found: PostgresConnection | None = getattr(self._local, "conn", None)
        if found is None:
            conn = self._pool.getconn()
            with self._lock:
                self._held.append(conn)
            found = PostgresConnection(conn)
            self._local.conn = found
        return found

    def begin(self, conn: Connection) -> None:
        """BEGIN, then wait for the store-wide writer lock (released by COMMIT or ROLLBACK)."""
        conn.execute("BEGIN")
        conn.execute("SELECT pg_advisory_xact_lock(?)", [_WRITER])

    def migrate(self) -> None:
        """The memory.database.postgres_schema steps this database has not seen, under the migrator lock."""
        conn = self.connection()
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

    def erase(self) -> bool:
        """VACUUM the tables that hold text: the space of deleted rows is marked free and written over by later
        rows, and no query reads them. What PostgreSQL keeps beyond that (its WAL, base backups, a replica's
        copies) is the operator's to expire (docs/operations.md)."""
        self.connection().execute(f"VACUUM {', '.join(_TEXT_TABLES)}")
        return True

    def close(self) -> None:
        """Return every held connection and close the pool."""
        with self._lock:
            for conn in self._held:
                try:
                    self._pool.putconn(conn)
                except Exception:  # a connection the server dropped: the pool discards it
                    pass
            self._held.clear()
        self._local = threading.local()
        self._pool.close()  # again after a first close: nothing to do
