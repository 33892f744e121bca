"""The live tasks of a namespace in SQL, and the live tasks and items of every namespace (the inspector's
overview): what has expired but is not yet purged is left out, as every read of the tier leaves it out."""

from __future__ import annotations

from collections.abc import Callable

from memory.database import Connection
from memory.task.model import TaskInfo

__all__ = ["counts", "live_tasks"]

# The items of a task that are still alive at :now (the same rule as every read in memory.task.memory).
_LIVE_ITEMS = ("LEFT JOIN task_items i ON i.namespace = t.namespace AND i.task_id = t.task_id "
               "AND (i.expires_at IS NULL OR i.expires_at > :now) ")


def live_tasks(db: Connection, namespace: str, now: str) -> list[TaskInfo]:
    """The namespace's live tasks, newest first (ties by id), each with its live items' count and tokens."""
    rows = db.execute(
        "SELECT t.task_id, t.parent_task_id, t.created_at, t.expires_at, count(i.key), coalesce(sum(i.tokens), 0), "
        "coalesce(sum(i.offloaded), 0) FROM tasks t " + _LIVE_ITEMS +
        "WHERE t.namespace = :namespace AND t.expires_at > :now GROUP BY t.task_id, t.parent_task_id, t.created_at, "
        "t.expires_at "
        "ORDER BY t.created_at DESC, t.task_id",
        {"namespace": namespace, "now": now},
    ).fetchall()
    return [TaskInfo(namespace, task_id, parent, created, expires, items, tokens, offloaded)
            for task_id, parent, created, expires, items, tokens, offloaded in rows]


def counts(db: Connection, now: str,
           within: Callable[[str], bool] | None = None) -> dict[str, tuple[int, int]]:
    """Live tasks and live items per namespace (of those `within` accepts); namespaces without a live task are
    absent."""
    rows = db.execute(
        "SELECT t.namespace, count(DISTINCT t.task_id), count(i.key) FROM tasks t " + _LIVE_ITEMS +
        "WHERE t.expires_at > :now GROUP BY t.namespace", {"now": now},
    ).fetchall()
    return {ns: (tasks, items) for ns, tasks, items in rows if within is None or within(ns)}
