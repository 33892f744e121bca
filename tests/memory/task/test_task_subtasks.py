"""Sub-tasks: a parent sees only its children's results; cycles and foreign parents are refused; end is recursive."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memory.errors import NotFoundError, ValidationError
from memory.store import Store
from memory.task import TaskMemory
from tests.conftest import ManualClock


def _family(tasks: TaskMemory) -> None:
    tasks.add("u1", "root", "plan", "split the work")
    tasks.add("u1", "child", "tool_result", "grep output 1000 lines", parent_task_id="root")
    tasks.add("u1", "child", "result", "the bug is in loader.py:42")
    tasks.add("u1", "grandchild", "result", "grandchild's answer", parent_task_id="child")


def test_parent_recall_sees_only_the_childs_result(tasks: TaskMemory) -> None:
    _family(tasks)
    root = {s.key: s for s in tasks.snippets("u1", "root")}
    assert set(root) == {"root/r1", "child/r2"}
    assert root["child/r2"].source == "sub-task child"
    assert root["root/r1"].source == "task root"
    child = {s.key for s in tasks.snippets("u1", "child")}
    assert child == {"child/r1", "child/r2", "grandchild/r1"}


def test_list_items_is_the_tasks_own_items(tasks: TaskMemory) -> None:
    _family(tasks)
    assert [i.key for i in tasks.list_items("u1", "root")] == ["root/r1"]
    assert tasks.list_items("u1", "child")[0].parent_task_id == "root"


def test_parent_can_read_and_promote_keys_of_its_subtree(tasks: TaskMemory) -> None:
    _family(tasks)
    assert tasks.get("u1", "root", "grandchild/r1").text == "grandchild's answer"
    with pytest.raises(NotFoundError, match=r"'root/r1' in task 'child'"):
        tasks.get("u1", "child", "root/r1")


def test_end_task_removes_children_recursively(tasks: TaskMemory, store: Store) -> None:
    _family(tasks)
    tasks.add("u1", "other", "note", "unrelated")
    assert tasks.end_task("u1", "root") == 4
    assert [r[0] for r in store.db.execute("SELECT task_id FROM tasks")] == ["other"]
    assert tasks.snippets("u1", "root") == []
    with pytest.raises(NotFoundError, match=r"task 'child' does not exist in namespace 'u1'"):
        tasks.list_items("u1", "child")
    with pytest.raises(NotFoundError, match=r"task 'root' does not exist in namespace 'u1'"):
        tasks.end_task("u1", "root")


def test_ending_a_child_leaves_the_parent(tasks: TaskMemory) -> None:
    _family(tasks)
    assert tasks.end_task("u1", "child") == 3
    assert [s.key for s in tasks.snippets("u1", "root")] == ["root/r1"]


def test_a_parent_must_exist_in_the_same_namespace(tasks: TaskMemory) -> None:
    tasks.add("tenant-a", "root", "plan", "a's plan")
    with pytest.raises(NotFoundError, match=r"parent task 'root' does not exist in namespace 'tenant-b'"):
        tasks.add("tenant-b", "child", "note", "x", parent_task_id="root")
    with pytest.raises(NotFoundError, match="parent task 'nope'"):
        tasks.add("tenant-a", "child", "note", "x", parent_task_id="nope")
    # A refused add leaves nothing behind.
    with pytest.raises(NotFoundError):
        tasks.list_items("tenant-b", "child")


def test_cycles_are_refused(tasks: TaskMemory) -> None:
    tasks.add("u1", "a", "plan", "a")
    tasks.add("u1", "b", "note", "b", parent_task_id="a")
    tasks.add("u1", "c", "note", "c", parent_task_id="b")
    with pytest.raises(ValidationError, match="cannot be its own parent"):
        tasks.add("u1", "a", "note", "x", parent_task_id="a")
    with pytest.raises(ValidationError, match=r"'c' is already below 'a'.*cycle"):
        tasks.add("u1", "a", "note", "x", parent_task_id="c")


def test_a_parent_cannot_change_but_may_be_set_once(tasks: TaskMemory) -> None:
    tasks.add("u1", "p1", "plan", "p1")
    tasks.add("u1", "p2", "plan", "p2")
    tasks.add("u1", "kid", "note", "started alone")
    tasks.add("u1", "kid", "result", "joined p1", parent_task_id="p1")
    tasks.add("u1", "kid", "note", "parent may be omitted later")
    with pytest.raises(ValidationError, match="already has parent 'p1'"):
        tasks.add("u1", "kid", "note", "x", parent_task_id="p2")
    assert [s.id for s in tasks.snippets("u1", "p1") if s.id.startswith("kid/")] == ["kid/r2"]


def test_child_activity_keeps_ancestors_alive(make_tasks: Callable[..., TaskMemory],
                                              clock: ManualClock) -> None:
    tasks = make_tasks(default_ttl_s=100)
    tasks.add("u1", "root", "plan", "plan")
    tasks.add("u1", "mid", "note", "mid", parent_task_id="root")
    tasks.add("u1", "leaf", "note", "leaf", parent_task_id="mid")
    for _ in range(3):
        clock.advance(90)
        tasks.add("u1", "leaf", "note", "still working")
    assert [i.text for i in tasks.list_items("u1", "root")] == ["plan"]


def test_an_expired_parent_takes_its_subtree_with_it(make_tasks: Callable[..., TaskMemory],
                                                     clock: ManualClock, store: Store) -> None:
    tasks = make_tasks(default_ttl_s=100)
    tasks.add("u1", "root", "plan", "plan")
    tasks.add("u1", "kid", "result", "answer", parent_task_id="root")
    clock.advance(100)
    assert tasks.purge_expired() == 2
    assert store.db.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0


def test_an_expired_parent_cannot_be_named(make_tasks: Callable[..., TaskMemory],
                                           clock: ManualClock) -> None:
    tasks = make_tasks(default_ttl_s=100)
    tasks.add("u1", "root", "plan", "plan")
    clock.advance(100)
    with pytest.raises(NotFoundError, match="parent task 'root' does not exist"):
        tasks.add("u1", "kid", "note", "late", parent_task_id="root")


def test_another_namespace_cannot_read_a_key(tasks: TaskMemory) -> None:
    key = tasks.add("tenant-a", "t1", "note", "secret").key
    tasks.add("tenant-b", "t1", "note", "mine")
    assert tasks.get("tenant-b", "t1", key).text == "mine"  # same key, its own item
    tasks.end_task("tenant-b", "t1")
    with pytest.raises(NotFoundError, match="namespace 'tenant-b'"):
        tasks.get("tenant-b", "t1", key)
