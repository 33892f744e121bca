"""Search filters as one SQL condition over chunks `c` joined to documents `d`."""

from __future__ import annotations

from typing import Any

from memory.clock import parse_iso, to_iso
from memory.database import Dialect
from memory.experience.model import SearchFilters

__all__ = ["filter_sql"]


def filter_sql(filters: SearchFilters, dialect: Dialect) -> tuple[str, list[Any]]:
    """A `WHERE`-ready condition (`1 = 1` when nothing is filtered) and its parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if filters.project is not None:
        clauses.append("d.project = ?")
        params.append(filters.project)
    if filters.source is not None:
        clauses.append("d.source = ?")
        params.append(filters.source)
    if filters.kind is not None:
        clauses.append("d.kind = ?")
        params.append(filters.kind)
    if filters.tags:
        # One clause for every tag asked (a document must hold them all): SQLite refuses an AND chain of a
        # thousand EXISTS clauses as too deep.
        wanted = sorted(set(filters.tags))
        clauses.append(f"(SELECT count(DISTINCT value) FROM ({dialect.json_members('d.tags')}) tags WHERE value IN "
                       f"({', '.join('?' * len(wanted))})) = ?")
        params.extend([*wanted, len(wanted)])
    # Times are stored normalised (ISO, UTC, trailing Z), so text comparison is time comparison.
    if filters.updated_from is not None:
        clauses.append("c.updated_at >= ?")
        params.append(to_iso(parse_iso(filters.updated_from, "filters.updated_from")))
    if filters.updated_to is not None:
        clauses.append("c.updated_at <= ?")
        params.append(to_iso(parse_iso(filters.updated_to, "filters.updated_to")))
    return (" AND ".join(clauses) or "1 = 1"), params
