"""The storage seam: what the tiers ask of the database that holds their records, whichever it is.

The tiers write SQL in the subset SQLite and PostgreSQL both run (`INSERT ... ON CONFLICT ... DO UPDATE`,
`RETURNING`, `count(*) FILTER (WHERE ...)`, no `INSERT OR REPLACE`, no `rowid` but the column of that name that
`chunks` declares), with `?` or `:name` placeholders, through a `Connection`: one per thread. A `Database` hands
them out, opens transactions, and applies its own numbered migrations. One file per backend (memory.database.sqlite,
memory.database.postgres); nothing above this package asks which one it is given, except through the few
statements a backend says differently (`Dialect`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

__all__ = ["Connection", "Cursor", "Database", "Dialect", "Params", "redacted"]

Params = Sequence[Any] | Mapping[str, Any]


class Cursor(Protocol):
    """A statement's result rows (tuples), and how many rows a write touched."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Dialect(Protocol):
    """The statements the two backends say differently."""

    name: str  # "sqlite" or "postgres"

    def json_members(self, placeholder: str) -> str:
        """A query of the members (column `value`, as text) of the JSON list `placeholder` holds: a bound value
        or a column."""
        ...

    def json_field(self, column: str, key: str) -> str:
        """The text of top-level field `key` of the JSON object in `column` (NULL when absent)."""
        ...


class Connection(Protocol):
    """One thread's connection: statements in the portable subset, each in autocommit unless a transaction of
    the database (Database.begin) is open on it."""

    @property
    def dialect(self) -> Dialect: ...

    def execute(self, sql: str, params: Params = ()) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any: ...


class Database(Protocol):
    """Where the records live: connections per thread, write transactions, migrations and the store's identity."""

    @property
    def dialect(self) -> Dialect: ...

    where: str  # what an error or /healthz names: a file path, or the server without its password
    # Whether one process uses the database at a time (the SQLite file, under the data folder's lock): then
    # whatever another process left running was left by a stopped one.
    exclusive: bool

    def connection(self) -> Connection:
        """This thread's connection (opened on first use)."""
        ...

    def begin(self, conn: Connection) -> None:
        """Open a write transaction on `conn`: one writer at a time across every process sharing the database."""
        ...

    def migrate(self) -> None:
        """Apply the migrations the database has not seen (once, whichever process gets there first)."""
        ...

    def hold(self, exclusive: bool) -> None:
        """Hold the store for this process until close(): shared by whatever reads and writes it as usual, alone by
        what rewrites it whole (a re-embed); StoreBusyError, naming the holders, when the other kind holds it."""
        ...

    def erase(self) -> bool:
        """Leave no deleted row readable in the database's own files (memory.erase runs it after deletes); False
        when it could not finish now and is to be tried again."""
        ...

    def close(self) -> None:
        """Close every connection."""
        ...


def redacted(url: str) -> str:
    """A database URL without its password (what errors and /healthz may show)."""
    return re.sub(r"([A-Za-z][A-Za-z0-9+.-]*://[^:/@]+):[^@]*@", r"\1:***@", url)
