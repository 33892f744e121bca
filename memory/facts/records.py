"""Fact records in SQLite: every change is a new version; a key's versions form its history."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from memory.database import Connection
from memory.facts.model import ExtractedFact

__all__ = ["FactChange", "FactRecord", "FactRecords", "Outcome", "OutcomeKind"]

# What became of one sentence: a new fact, a new version of a known one, a constraint for this request only
# (returned, not stored, when no task keeps it), or nothing (and why).
OutcomeKind = Literal["stored", "superseded", "request", "ignored"]


@dataclass(frozen=True)
class FactRecord:
    """One version of a fact; the current version has `superseded_at` None."""

    id: str
    namespace: str
    scope: str
    key: str
    value: str
    kind: str
    text: str
    pinned: bool
    version: int
    created_at: str
    updated_at: str
    superseded_at: str | None = None
    superseded_by: str | None = None
    source: str | None = None
    rule: str | None = None
    confidence: float = 1.0

    @property
    def current(self) -> bool:
        """True for the version in force."""
        return self.superseded_at is None

    @property
    def certain(self) -> bool:
        """A rule read it (confidence 1.0) or the user pinned it: such a fact is shown unasked (a context's
        constraints block, a summary's User constraints). A trained model's fact is recalled by relevance instead,
        so a misreading never takes a small window's room in every turn."""
        return self.pinned or self.confidence >= 1.0


@dataclass(frozen=True)
class Outcome:
    """What one sentence (or clause) of a message became.

    `facts`: the ids of the facts it stands for now (new versions, or the version in force when already known);
    `supersedes`: the ids of the versions its facts replaced; `reason`: why nothing was stored (ignored only).
    """

    text: str
    outcome: OutcomeKind
    reason: str | None = None
    facts: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()


@dataclass(frozen=True)
class FactChange:
    """What one write did: facts stored, the versions they superseded, what was ignored and why, and the
    outcome of every sentence in message order (`ignored` is those outcomes that stored nothing)."""

    stored: tuple[FactRecord, ...]
    superseded: tuple[FactRecord, ...]
    ignored: tuple[tuple[str, str], ...]
    outcomes: tuple[Outcome, ...] = ()
    this_turn: tuple[ExtractedFact, ...] = ()
    """The constraints said for this request only ("write a 300-word summary without commas"), stored or not."""


_NAMES = tuple(f.name for f in dataclasses.fields(FactRecord))  # the facts table's columns, in order
_COLUMNS = ", ".join(_NAMES)


def _record(row: Sequence[Any]) -> FactRecord:
    values = dict(zip(_NAMES, row, strict=True))
    return FactRecord(**{**values, "pinned": bool(values["pinned"])})


class FactRecords:
    """Row-level access to the `facts` table; callers hold the store's transaction for writes."""

    @staticmethod
    def new_id() -> str:
        """A fresh fact id like `f-3b1c9e0d2a4f`."""
        return "f-" + uuid.uuid4().hex[:12]

    def get(self, db: Connection, namespace: str, fact_id: str) -> FactRecord | None:
        """The version with this id in this namespace."""
        row = db.execute(f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND id = ?",
                         [namespace, fact_id]).fetchone()
        return _record(row) if row else None

    def current(self, db: Connection, namespace: str, scope: str, key: str) -> FactRecord | None:
        """The version in force for (scope, key)."""
        row = db.execute(
            f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND scope = ? AND key = ? "
            "AND superseded_at IS NULL ORDER BY version DESC LIMIT 1", [namespace, scope, key]).fetchone()
        return _record(row) if row else None

    def lineage(self, db: Connection, namespace: str, scope: str, key: str) -> list[FactRecord]:
        """Every version of (scope, key), oldest first."""
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND scope = ? AND key = ? ORDER BY version",
            [namespace, scope, key]).fetchall()
        return [_record(r) for r in rows]

    def list_current(self, db: Connection, namespace: str, scopes: tuple[str, ...] | None = None,
                     pinned: bool | None = None) -> list[FactRecord]:
        """Facts in force, pinned first, then by key."""
        sql = f"SELECT {_COLUMNS} FROM facts WHERE namespace = ? AND superseded_at IS NULL"
        params: list[Any] = [namespace]
        if scopes is not None:
            sql += f" AND scope IN ({', '.join('?' for _ in scopes)})"
            params.extend(scopes)
        if pinned is not None:
            sql += " AND pinned = ?"
            params.append(int(pinned))
        rows = db.execute(sql + " ORDER BY pinned DESC, scope, key, id", params).fetchall()
        return [_record(r) for r in rows]

    def insert(self, db: Connection, record: FactRecord) -> None:
        """Write a new version."""
        values = {**record.__dict__, "pinned": int(record.pinned)}
        db.execute(f"INSERT INTO facts ({_COLUMNS}) VALUES ({', '.join('?' for _ in _NAMES)})",
                   [values[n] for n in _NAMES])

    def supersede(self, db: Connection, record: FactRecord, by: str, at: str) -> FactRecord:
        """Mark `record` as replaced by version `by`."""
        db.execute("UPDATE facts SET superseded_at = ?, superseded_by = ? WHERE id = ?", [at, by, record.id])
        return FactRecord(**{**record.__dict__, "superseded_at": at, "superseded_by": by})

    def delete_lineage(self, db: Connection, namespace: str, scope: str, key: str) -> int:
        """Hard-delete every version of (scope, key)."""
        return db.execute("DELETE FROM facts WHERE namespace = ? AND scope = ? AND key = ?",
                          [namespace, scope, key]).rowcount

    def counts(self, db: Connection) -> dict[str, tuple[int, int]]:
        """(facts in force, pinned among them) per namespace that has one."""
        rows = db.execute("SELECT namespace, count(*), sum(pinned) FROM facts WHERE superseded_at IS NULL "
                          "GROUP BY namespace").fetchall()
        return {namespace: (int(n), int(pinned or 0)) for namespace, n, pinned in rows}

    def delete_namespace(self, db: Connection, namespace: str) -> int:
        """Hard-delete every fact of a namespace."""
        return db.execute("DELETE FROM facts WHERE namespace = ?", [namespace]).rowcount
