"""TaskMemory.list_tasks and counts: the live tasks of a namespace, and live tasks and items per namespace."""

from __future__ import annotations

from memory.task import TaskMemory
from tests.conftest import ManualClock


def test_live_tasks_newest_first_with_their_items(tasks: TaskMemory, clock: ManualClock) -> None:
    tasks.add("u1", "t-old", "note", "The loader must stream rows.")
    clock.advance(10)
    tasks.add("u1", "t-new", "plan", "先读文件，再写入数据库。")
    tasks.add("u1", "t-new", "tool_result", "row " * 800)
    tasks.add("u2", "t-other", "note", "someone else's")
    listed = tasks.list_tasks("u1")
    assert [t.task_id for t in listed] == ["t-new", "t-old"]
    newest = listed[0]
    assert (newest.items, newest.offloaded, newest.parent_task_id) == (2, 1, None)
    assert newest.tokens == sum(i.tokens for i in tasks.list_items("u1", "t-new"))
    assert newest.expires_at == "2026-12-01T08:00:10Z"


def test_expired_tasks_and_items_are_left_out(tasks: TaskMemory, clock: ManualClock) -> None:
    tasks.add("u1", "t1", "note", "stays")
    tasks.add("u1", "t1", "tool_result", "goes soon", ttl_s=60)
    tasks.add("u1", "t2", "note", "the whole task goes", ttl_s=30)
    assert tasks.counts() == {"u1": (2, 3)}
    clock.advance(61)
    assert [(t.task_id, t.items) for t in tasks.list_tasks("u1")] == [("t1", 1), ("t2", 0)]
    clock.advance(86400)
    assert tasks.list_tasks("u1") == []
    assert tasks.counts() == {}


def test_counts_keep_to_the_namespaces_asked_for(tasks: TaskMemory) -> None:
    tasks.add("alice", "t1", "note", "a")
    tasks.add("alice", "t2", "note", "b")
    tasks.add("bob", "t1", "note", "c")
    assert tasks.counts() == {"alice": (2, 2), "bob": (1, 1)}
    assert tasks.counts(lambda ns: ns == "alice") == {"alice": (2, 2)}
