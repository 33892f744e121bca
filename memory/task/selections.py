"""A task's last tool selection: the names context assembly chose, kept so that a restart or another replica
chooses alike. The row goes with its task (a trigger on `tasks`, memory.schema)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from memory.config import LimitsConfig
from memory.database import Connection
from memory.errors import ValidationError
from memory.limits import check_length
from memory.text.unicode import storable

__all__ = ["check_names", "read", "write"]


def check_names(names: object, limits: LimitsConfig) -> tuple[str, ...]:
    """Tool names: a list of non-empty strings (duplicates dropped, order kept), at most limits.max_text_chars as
    JSON."""
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
        raise ValidationError(f"names must be a list of tool names, got {str(names)[:80]!r}")
    for at, name in enumerate(names):
        if not isinstance(name, str) or not name.strip():
            raise ValidationError(f"names[{at}] must be a non-empty tool name, got {str(name)[:80]!r}")
        storable(name, f"names[{at}]")
    checked = tuple(dict.fromkeys(names))
    check_length(json.dumps(list(checked)), limits.max_text_chars, "names (as JSON)", "limits.max_text_chars")
    return checked


def read(db: Connection, namespace: str, task_id: str, now: str) -> tuple[str, ...]:
    """The live task's last selection; empty when it has none."""
    row = db.execute(
        "SELECT c.names FROM context_tools c JOIN tasks t ON t.namespace = c.namespace AND t.task_id = c.task_id "
        "WHERE c.namespace = ? AND c.task_id = ? AND t.expires_at > ?", [namespace, task_id, now]).fetchone()
    return tuple(json.loads(row[0])) if row else ()


def write(db: Connection, namespace: str, task_id: str, names: Sequence[str]) -> None:
    """Replace the task's selection."""
    db.execute("INSERT INTO context_tools (namespace, task_id, names) VALUES (?, ?, ?) "
               "ON CONFLICT (namespace, task_id) DO UPDATE SET names = excluded.names",
               [namespace, task_id, json.dumps(list(names))])
