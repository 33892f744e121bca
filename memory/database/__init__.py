"""The storage seam (memory.database.base) and its backends: the SQLite file embedded, PostgreSQL shared."""

from __future__ import annotations

from pathlib import Path

from memory.database.base import Connection, Cursor, Database, Dialect, Params, redacted

__all__ = ["Connection", "Cursor", "Database", "Dialect", "Params", "open_database", "redacted", "stored_meta"]


def open_database(url: str, data_path: Path, pool_size: int) -> Database:
    """The records' database: PostgreSQL at `url`, or without one the SQLite file under `data_path`."""
    if url:
        from memory.database.postgres import PostgresDatabase

        return PostgresDatabase(url, max_connections=pool_size)
    from memory.database.sqlite import SqliteDatabase

    return SqliteDatabase(data_path / "memory.db")


def stored_meta(url: str, data_path: Path) -> dict[str, str] | None:
    """The store's `meta` rows (its identity), read without writing; None when there is no store yet."""
    if url:
        from memory.database.postgres import read_meta as read_postgres

        return read_postgres(url)
    from memory.database.sqlite import read_meta

    return read_meta(data_path / "memory.db")
