"""The storage seam (memory.database.base) and its backends: SQLite embedded, PostgreSQL shared."""

from memory.database.base import Connection, Cursor, Database, Dialect, Params

__all__ = ["Connection", "Cursor", "Database", "Dialect", "Params"]
