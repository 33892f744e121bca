"""A task's compaction summaries: their fields checked, the next version written in SQL, versions read back.

They are removed with their task (memory.task.tree.delete_tree, TaskMemory.delete_namespace)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from memory.config import LimitsConfig
from memory.database import Connection
from memory.limits import check_length
from memory.task import policy
from memory.task.model import SummaryVersion

__all__ = ["every", "insert", "latest", "one", "prepare", "spans", "versions"]

_COLUMNS = ("namespace, task_id, version, created_at, first, last, digest, text, tokens, covered_tokens, sections, "
            'dropped, "references", summariser')
_LARGEST = 2**63 - 1  # SQLite's largest integer: no version beyond it exists (a larger one cannot be bound)
_SELECT = (
    "SELECT " + ", ".join(f"s.{c}" for c in _COLUMNS.split(", ")) + " FROM task_summaries s JOIN tasks t "
    "ON t.namespace = s.namespace AND t.task_id = s.task_id "
    "WHERE s.namespace = :namespace AND s.task_id = :task_id AND t.expires_at > :now "
)


def prepare(*, first: object, last: object, digest: object, text: object, tokens: object, covered_tokens: object,
            sections: object, dropped: object, references: object, summariser: object,
            limits: LimitsConfig) -> dict[str, Any]:
    """A summary's column values, checked (the version and time are added when it is written)."""
    check_length(text, limits.max_text_chars, "text", "limits.max_text_chars")
    if isinstance(text, str):
        text = text.replace("\x00", "")  # free text, as an item's
    low, high = policy.check_range(first, last)
    values: dict[str, Any] = {
        "first": low, "last": high, "digest": policy.check_digest(digest), "text": policy.check_text(text),
        "tokens": policy.check_whole(tokens, "tokens"),
        "covered_tokens": policy.check_whole(covered_tokens, "covered_tokens"),
        # Sections keep the order given: it is the summary's own order.
        "sections": _json({name: list(entries) for name, entries in policy.check_sections(sections).items()}),
        "dropped": _json(list(policy.check_dropped(dropped))),
        "references": _json(list(policy.check_references(references))),
        "summariser": policy.check_summariser(summariser),
    }
    for name in ("sections", "dropped", "references"):
        check_length(values[name], limits.max_text_chars, f"{name} (as JSON)", "limits.max_text_chars")
    return values


def insert(db: Connection, namespace: str, task_id: str, created_at: str,
           values: Mapping[str, Any]) -> SummaryVersion:
    """Write the task's next version (its highest plus one, from 1) inside the caller's write transaction.

    The number is read and written by one statement of an IMMEDIATE transaction, so no two writers get the same.
    """
    row = db.execute(
        f"INSERT INTO task_summaries ({_COLUMNS}) SELECT :namespace, :task_id, coalesce(max(version), 0) + 1, "
        ":created_at, :first, :last, :digest, :text, :tokens, :covered_tokens, :sections, :dropped, :references, "
        f":summariser FROM task_summaries WHERE namespace = :namespace AND task_id = :task_id RETURNING {_COLUMNS}",
        {**values, "namespace": namespace, "task_id": task_id, "created_at": created_at},
    ).fetchone()
    return _version(row)


def latest(db: Connection, namespace: str, task_id: str, now: str) -> SummaryVersion | None:
    """The newest version of a live task; None when it has none or is gone."""
    row = db.execute(_SELECT + "ORDER BY s.version DESC LIMIT 1",
                     {"namespace": namespace, "task_id": task_id, "now": now}).fetchone()
    return None if row is None else _version(row)


def every(db: Connection, namespace: str, task_id: str, now: str) -> list[SummaryVersion]:
    """Every version of a live task, oldest first."""
    rows = db.execute(_SELECT + "ORDER BY s.version",
                      {"namespace": namespace, "task_id": task_id, "now": now}).fetchall()
    return [_version(row) for row in rows]


def one(db: Connection, namespace: str, task_id: str, version: int, now: str) -> SummaryVersion | None:
    """One version of a live task; None when there is no such version."""
    if version > _LARGEST:
        return None
    row = db.execute(_SELECT + "AND s.version = :version",
                     {"namespace": namespace, "task_id": task_id, "now": now, "version": version}).fetchone()
    return None if row is None else _version(row)


def versions(db: Connection, namespace: str, task_id: str) -> list[int]:
    """The version numbers a task holds, in order."""
    rows = db.execute("SELECT version FROM task_summaries WHERE namespace = ? AND task_id = ? ORDER BY version",
                      [namespace, task_id]).fetchall()
    return [int(row[0]) for row in rows]


def spans(numbers: Sequence[int]) -> str:
    """Sorted numbers as runs for a sentence: [1, 2, 3, 5] -> "1-3, 5"."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _version(row: Any) -> SummaryVersion:
    (namespace, task_id, version, created_at, first, last, digest, text, tokens, covered_tokens, sections, dropped,
     references, summariser) = row
    return SummaryVersion(
        namespace=namespace, task_id=task_id, version=int(version), created_at=created_at, first=int(first),
        last=int(last), digest=digest, text=text, tokens=int(tokens), covered_tokens=int(covered_tokens),
        sections=MappingProxyType({name: tuple(entries) for name, entries in json.loads(sections).items()}),
        dropped=tuple(MappingProxyType(entry) for entry in json.loads(dropped)),
        references=tuple(json.loads(references)),
        summariser=summariser,
    )
