"""Conversations sent without a task id, followed to their task: a request continues the known thread (same
namespace and seed) whose newest recorded request it extends or repeats, the longest such; else it opens a new one.

The caller hashes: `seed` is its digest of how the conversation starts, `prefixes[k]` its digest of the request's
messages[:k + 1]. A thread records its newest request's length and digest, so the store holds no message text.
Rows go with their task (a trigger on `tasks`, memory.schema).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from memory.database import Connection
from memory.errors import ValidationError
from memory.text.unicode import storable

__all__ = ["check", "follow", "new_task_id", "record", "task_of"]

_LONGEST_DIGEST = 256


def check(seed: object, prefixes: object) -> tuple[str, tuple[str, ...]]:
    """The seed and prefixes, checked: non-empty strings of at most 256 characters, at least one prefix."""
    if isinstance(prefixes, (str, bytes)) or not isinstance(prefixes, Sequence) or not prefixes:
        raise ValidationError("prefixes must be a non-empty list of digests, one per message of the request "
                              f"(prefixes[k] of messages[:k + 1]), got {str(prefixes)[:80]!r}")
    return _digest(seed, "seed"), tuple(_digest(p, f"prefixes[{k}]") for k, p in enumerate(prefixes))


def follow(db: Connection, namespace: str, seed: str, prefixes: Sequence[str]) -> str | None:
    """The task of the longest thread of `seed` whose newest request this one extends or repeats; None if none."""
    rows = db.execute(
        "SELECT task_id, length, digest FROM context_threads WHERE namespace = ? AND seed = ? "
        f"AND digest IN ({db.dialect.json_members('?')})", [namespace, seed, json.dumps(list(prefixes))]).fetchall()
    fits = [(int(length), task_id) for task_id, length, digest in rows
            if 0 < length <= len(prefixes) and prefixes[length - 1] == digest]
    return min(fits, key=lambda fit: (-fit[0], fit[1]))[1] if fits else None  # ties: the smallest id


def new_task_id(db: Connection, namespace: str, seed: str) -> str:
    """`ctx-` and 16 hex digits of sha256(seed), or of sha256(seed NUL n) for the first n = 1, 2, ... whose id no
    thread or task of the namespace holds: the same for every replica that sees the same store."""
    n = 0
    while True:
        hashed = seed if n == 0 else f"{seed}\0{n}"
        task_id = "ctx-" + hashlib.sha256(hashed.encode("utf-8")).hexdigest()[:16]
        taken = db.execute(
            "SELECT EXISTS (SELECT 1 FROM tasks WHERE namespace = :namespace AND task_id = :task_id) "
            "OR EXISTS (SELECT 1 FROM context_threads WHERE namespace = :namespace AND task_id = :task_id)",
            {"namespace": namespace, "task_id": task_id}).fetchone()[0]
        if not taken:
            return task_id
        n += 1


def task_of(db: Connection, namespace: str, seed: str, prefixes: Sequence[str]) -> str:
    """The task of the known thread of `seed` the request extends (follow), else the id a new one gets."""
    return follow(db, namespace, seed, prefixes) or new_task_id(db, namespace, seed)


def record(db: Connection, namespace: str, task_id: str, seed: str, prefixes: Sequence[str],
           now: str) -> None:
    """Make this request the thread's newest."""
    db.execute(
        "INSERT INTO context_threads (namespace, task_id, seed, length, digest, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (namespace, task_id) DO UPDATE SET seed = excluded.seed, length = excluded.length, "
        "digest = excluded.digest, updated_at = excluded.updated_at",
        [namespace, task_id, seed, len(prefixes), prefixes[-1], now])


def _digest(value: object, name: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > _LONGEST_DIGEST:
        raise ValidationError(f"{name} must be a digest: a non-empty string of at most {_LONGEST_DIGEST} "
                              f"characters, got {str(value)[:80]!r}")
    return storable(value, name)

