"""Tombstones of deleted facts: digests of each deleted version's key and text, so that re-reading a conversation
never brings a fact the user deleted back, while no byte of its text stays on disk."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from memory.database import Connection
from memory.facts.records import FactRecord

__all__ = ["buried", "bury", "clear", "digest", "fold"]


def fold(text: str) -> str:
    """Text as compared for sameness: whitespace runs folded to one space, lower-cased."""
    return " ".join(text.split()).lower()


def digest(key: str, text: str) -> str:
    """The tombstone of a fact's (key, text): sha256 over the key and the folded text."""
    said = f"{key}\0{fold(text)}"
    return hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest()


def bury(db: Connection, namespace: str, records: Iterable[FactRecord], at: str) -> None:
    """Inside a delete's transaction: a tombstone for every deleted version."""
    db.executemany(
        "INSERT INTO fact_tombstones (namespace, digest, deleted_at) VALUES (?, ?, ?) "
        "ON CONFLICT (namespace, digest) DO UPDATE SET deleted_at = excluded.deleted_at",
        [(namespace, digest(r.key, r.text), at) for r in records])


def buried(db: Connection, namespace: str, key: str, text: str) -> bool:
    """Whether the user deleted a fact of this key said in these words."""
    return db.execute("SELECT 1 FROM fact_tombstones WHERE namespace = ? AND digest = ?",
                      [namespace, digest(key, text)]).fetchone() is not None


def clear(db: Connection, namespace: str) -> int:
    """Remove a namespace's tombstones (it is being forgotten whole); how many."""
    return db.execute("DELETE FROM fact_tombstones WHERE namespace = ?", [namespace]).rowcount
