"""The task tree in SQL: opening a task under a parent, walking sub-trees and ancestors, removing sub-trees
(with their items and summaries)."""

from __future__ import annotations

from memory.database import Connection
from memory.errors import NotFoundError, ValidationError

__all__ = ["ancestors", "delete_tree", "open_task", "purge_all", "purge_task", "slide_ancestors", "subtree"]

# The later of a task's expiry and :expires_at (SQLite's two-argument max() is not PostgreSQL's).
_LATER = "CASE WHEN expires_at > :expires_at THEN expires_at ELSE :expires_at END"

# UNION (not UNION ALL) makes both walks stop on a cycle, should one ever reach the table.
_SUBTREE = """
    WITH RECURSIVE sub(id) AS (
        SELECT task_id FROM tasks WHERE namespace = :namespace AND task_id = :task_id
        UNION SELECT t.task_id FROM tasks t JOIN sub ON t.parent_task_id = sub.id WHERE t.namespace = :namespace
    ) SELECT id FROM sub
"""
_ANCESTORS = """
    WITH RECURSIVE up(id) AS (
        SELECT parent_task_id FROM tasks WHERE namespace = :namespace AND task_id = :task_id
        UNION SELECT t.parent_task_id FROM tasks t JOIN up ON t.task_id = up.id WHERE t.namespace = :namespace
    ) SELECT id FROM up WHERE id IS NOT NULL
"""


def open_task(
    db: Connection, namespace: str, task_id: str, parent_task_id: str | None, now: str, expiry: str, *,
    numbered: bool = True,
) -> tuple[int, str]:
    """Create or refresh a task inside an add's transaction; its next item number and its expiry.

    With `numbered` the number is claimed for the item being added; a write that adds no item (a summary) passes
    False, so item keys stay consecutive.
    """
    row = db.execute(
        "SELECT parent_task_id, expires_at FROM tasks WHERE namespace = ? AND task_id = ?", [namespace, task_id]
    ).fetchone()
    if row is not None and row[1] <= now:
        # An expired task starts over: sliding its expiry would bring its dead items back.
        delete_tree(db, namespace, task_id)
        row = None
    if parent_task_id is not None:
        _check_parent(db, namespace, task_id, parent_task_id, None if row is None else row[0], now)
    if row is None:
        db.execute(
            "INSERT INTO tasks (namespace, task_id, parent_task_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
            [namespace, task_id, parent_task_id, now, expiry],
        )
    elif parent_task_id is not None and row[0] is None:
        db.execute(
            "UPDATE tasks SET parent_task_id = ? WHERE namespace = ? AND task_id = ?",
            [parent_task_id, namespace, task_id],
        )
    seq, expires_at = db.execute(
        f"UPDATE tasks SET next_seq = next_seq + :step, expires_at = {_LATER} "
        "WHERE namespace = :namespace AND task_id = :task_id RETURNING next_seq - :step, expires_at",
        {"step": int(numbered), "expires_at": expiry, "namespace": namespace, "task_id": task_id},
    ).fetchone()
    slide_ancestors(db, namespace, task_id, expiry, now)
    return int(seq), str(expires_at)


def subtree(db: Connection, namespace: str, task_id: str) -> list[str]:
    """The task and all its descendants (the task itself first; none for a task that does not exist)."""
    rows = db.execute(_SUBTREE, {"namespace": namespace, "task_id": task_id}).fetchall()
    return [row[0] for row in rows]


def ancestors(db: Connection, namespace: str, task_id: str) -> list[str]:
    """Parent, grandparent, ... of a task (empty for a top-level task)."""
    rows = db.execute(_ANCESTORS, {"namespace": namespace, "task_id": task_id}).fetchall()
    return [row[0] for row in rows]


def slide_ancestors(db: Connection, namespace: str, task_id: str, expires_at: str, now: str) -> None:
    """Keep live ancestors alive at least until `expires_at`: a working sub-task means a working parent."""
    db.execute(
        f"UPDATE tasks SET expires_at = {_LATER} WHERE namespace = :namespace "
        f"AND expires_at > :now AND task_id IN ({_ANCESTORS})",
        {"namespace": namespace, "task_id": task_id, "expires_at": expires_at, "now": now},
    )


def delete_tree(db: Connection, namespace: str, task_id: str) -> int:
    """Remove a task, its descendants and all their items and summaries; the number of items removed.

    Each task row deleted takes its conversation state and `session:<task_id>` facts along (a trigger on `tasks`,
    memory.schema), here and wherever else a task row goes."""
    params = {"namespace": namespace, "task_id": task_id}
    removed = db.execute(
        f"DELETE FROM task_items WHERE namespace = :namespace AND task_id IN ({_SUBTREE})", params
    ).rowcount
    db.execute(f"DELETE FROM task_summaries WHERE namespace = :namespace AND task_id IN ({_SUBTREE})", params)
    db.execute(f"DELETE FROM tasks WHERE namespace = :namespace AND task_id IN ({_SUBTREE})", params)
    return removed


def purge_task(db: Connection, namespace: str, task_id: str, now: str) -> bool:
    """Remove what of one task has expired by `now`: the whole sub-tree if the task has, else its stale items;
    whether anything was removed."""
    row = db.execute(
        "SELECT expires_at FROM tasks WHERE namespace = ? AND task_id = ?", [namespace, task_id]
    ).fetchone()
    if row is None:
        return False
    if row[0] <= now:
        delete_tree(db, namespace, task_id)
        return True  # the task row at least
    return db.execute(
        "DELETE FROM task_items WHERE namespace = ? AND task_id = ? AND expires_at <= ?", [namespace, task_id, now]
    ).rowcount > 0


def purge_all(db: Connection, now: str) -> tuple[int, set[str]]:
    """Remove every expired task (with its sub-tree) and every expired item; the number of items removed, and the
    namespaces anything was removed from (none when nothing was)."""
    removed = 0
    expired = db.execute("SELECT namespace, task_id FROM tasks WHERE expires_at <= ?", [now]).fetchall()
    namespaces = {namespace for namespace, _ in expired}
    for namespace, task_id in expired:
        removed += delete_tree(db, namespace, task_id)
    namespaces.update(row[0] for row in db.execute(
        "SELECT DISTINCT namespace FROM task_items WHERE expires_at <= ?", [now]).fetchall())
    return removed + db.execute("DELETE FROM task_items WHERE expires_at <= ?", [now]).rowcount, namespaces


def _check_parent(
    db: Connection, namespace: str, task_id: str, parent: str, current: str | None, now: str
) -> None:
    if current is not None and current != parent:
        raise ValidationError(
            f"task {task_id!r} already has parent {current!r}, got parent_task_id {parent!r}; "
            "a task's parent cannot change — use a new task id"
        )
    if parent == task_id:
        raise ValidationError(f"task {task_id!r} cannot be its own parent; name another task or none")
    live = db.execute(
        "SELECT 1 FROM tasks WHERE namespace = ? AND task_id = ? AND expires_at > ?", [namespace, parent, now]
    ).fetchone()
    if live is None:
        # Parents are looked up in the caller's namespace only, so a task of another tenant cannot be named.
        raise NotFoundError(
            f"parent task {parent!r} does not exist in namespace {namespace!r}; a parent must be a live task "
            "of the same namespace — add an item to it first"
        )
    if task_id in ancestors(db, namespace, parent):
        raise ValidationError(
            f"task {task_id!r} cannot have parent {parent!r}: {parent!r} is already below {task_id!r}, "
            "which would make a cycle"
        )
