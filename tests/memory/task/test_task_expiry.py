"""Expiry: task TTL that slides on activity, per-item TTLs, purge on access and in the background."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memory.errors import NotFoundError
from memory.store import Store
from memory.task import TaskMemory
from tests.conftest import ManualClock


def _rows(store: Store) -> int:
    return int(store.db.execute("SELECT count(*) FROM task_items").fetchone()[0])


def test_item_ttl_hides_the_item_once_due(tasks: TaskMemory, clock: ManualClock) -> None:
    short = tasks.add("u1", "t1", "tool_result", "ls: 3 files", ttl_s=60)
    tasks.add("u1", "t1", "plan", "keep going")
    assert short.expires_at == "2026-11-30T08:01:00Z"
    clock.advance(59)
    assert [s.key for s in tasks.snippets("u1", "t1")] == ["t1/r2", "t1/r1"]
    clock.advance(1)
    assert [s.key for s in tasks.snippets("u1", "t1")] == ["t1/r2"]
    with pytest.raises(NotFoundError, match=r"no live item 't1/r1' in task 't1' of namespace 'u1'"):
        tasks.get("u1", "t1", short.key)


def test_item_ttl_longer_than_the_task_is_capped_by_the_task(tasks: TaskMemory) -> None:
    added = tasks.add("u1", "t1", "note", "long lived", ttl_s=10 * 86400)
    assert added.expires_at == "2026-12-01T08:00:00Z"


def test_task_expires_after_default_ttl_without_activity(make_tasks: Callable[..., TaskMemory],
                                                         clock: ManualClock) -> None:
    tasks = make_tasks(default_ttl_s=3600)
    tasks.add("u1", "t1", "plan", "step one")
    clock.advance(3600)
    assert tasks.snippets("u1", "t1") == []
    with pytest.raises(NotFoundError, match=r"task 't1' does not exist in namespace 'u1'"):
        tasks.list_items("u1", "t1")


def test_adding_slides_the_task_expiry_so_older_items_stay(make_tasks: Callable[..., TaskMemory],
                                                           clock: ManualClock) -> None:
    tasks = make_tasks(default_ttl_s=3600)
    tasks.add("u1", "t1", "plan", "the plan")
    clock.advance(3000)
    later = tasks.add("u1", "t1", "note", "progress")
    clock.advance(3000)  # 6000 s after the plan, 3000 s after the last add
    assert later.expires_at == "2026-11-30T09:50:00Z"
    assert [i.text for i in tasks.list_items("u1", "t1")] == ["the plan", "progress"]
    assert tasks.list_items("u1", "t1")[0].expires_at == "2026-11-30T09:50:00Z"


def test_an_expired_task_starts_over_without_reviving_its_items(make_tasks: Callable[..., TaskMemory],
                                                                clock: ManualClock, store: Store) -> None:
    tasks = make_tasks(default_ttl_s=60)
    tasks.add("u1", "t1", "plan", "old plan")
    clock.advance(120)
    assert tasks.add("u1", "t1", "plan", "new plan").key == "t1/r1"
    assert [i.text for i in tasks.list_items("u1", "t1")] == ["new plan"]
    assert _rows(store) == 1


def test_access_purges_what_expired(make_tasks: Callable[..., TaskMemory], clock: ManualClock, store: Store) -> None:
    tasks = make_tasks(default_ttl_s=3600)
    tasks.add("u1", "t1", "note", "short", ttl_s=10)
    tasks.add("u1", "t1", "note", "stays")
    tasks.add("u1", "t2", "note", "other task, short", ttl_s=10)
    clock.advance(10)
    assert _rows(store) == 3
    tasks.snippets("u1", "t1")
    assert _rows(store) == 2  # t1's stale item went on access; t2 waits for its own access or the purge
    clock.advance(3600)
    tasks.snippets("u1", "t1")
    assert store.db.execute("SELECT task_id FROM tasks").fetchall() == [("t2",)]


def test_purge_expired_removes_due_items_and_tasks_everywhere(make_tasks: Callable[..., TaskMemory],
                                                              clock: ManualClock, store: Store) -> None:
    tasks = make_tasks(default_ttl_s=3600)
    tasks.add("u1", "t1", "note", "a", ttl_s=5)
    tasks.add("u2", "t1", "note", "b", ttl_s=5)
    tasks.add("u2", "t1", "plan", "c")
    tasks.add("u3", "t9", "plan", "d")
    assert tasks.purge_expired() == 0
    clock.advance(5)
    assert tasks.purge_expired() == 2
    assert _rows(store) == 2
    clock.advance(3600)
    assert tasks.purge_expired() == 2
    assert _rows(store) == 0
    assert store.db.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
    assert tasks.purge_expired() == 0


def test_expired_items_are_never_returned_even_before_a_purge(tasks: TaskMemory, clock: ManualClock,
                                                              store: Store) -> None:
    tasks.add("u1", "t1", "result", "done", ttl_s=30)
    clock.advance(30)
    # Still on disk until someone looks: the first access drops it and answers as if it never was.
    assert _rows(store) == 1
    with pytest.raises(NotFoundError):
        tasks.promote("u1", "t1", ["t1/r1"])
    assert tasks.list_items("u1", "t1") == []
