"""Adding items: keys, token counts, validation, metadata, and persistence across a restart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memory.config import Config
from memory.errors import ValidationError
from memory.store import Store
from memory.task import KINDS, TaskMemory
from memory.tokens import TokenCounter
from tests.conftest import ManualClock


@pytest.mark.parametrize("text", ["Ran pytest: 3 failed, 41 passed.", "运行测试：三个失败，四十一个通过。"])
def test_add_counts_tokens_exactly(tasks: TaskMemory, counter: TokenCounter, text: str) -> None:
    added = tasks.add("u1", "t-42", "tool_result", text)
    assert added.key == "t-42/r1"
    assert added.tokens == counter.count(text)
    assert added.offloaded is False
    assert tasks.get("u1", "t-42", added.key).text == text


def test_keys_count_up_per_task_and_namespace(tasks: TaskMemory) -> None:
    keys = [tasks.add("u1", "t-42", "note", f"note {i}").key for i in range(3)]
    assert keys == ["t-42/r1", "t-42/r2", "t-42/r3"]
    assert tasks.add("u1", "t-43", "note", "other task").key == "t-43/r1"
    assert tasks.add("u2", "t-42", "note", "other tenant").key == "t-42/r1"
    assert tasks.get("u2", "t-42", "t-42/r1").text == "other tenant"
    assert tasks.get("u1", "t-42", "t-42/r1").text == "note 0"


def test_item_records_kind_times_and_metadata(tasks: TaskMemory) -> None:
    added = tasks.add("u1", "t1", "plan", "1. read 2. fix", metadata={"step": 1, "工具": "pytest"})
    item = tasks.get("u1", "t1", added.key)
    assert (item.kind, item.task_id, item.namespace) == ("plan", "t1", "u1")
    assert item.created_at == "2026-11-30T08:00:00Z"
    assert item.expires_at == added.expires_at == "2026-12-01T08:00:00Z"
    assert dict(item.metadata) == {"step": 1, "工具": "pytest"}
    assert item.parent_task_id is None and not item.ephemeral and not item.offloaded


def test_every_documented_kind_is_accepted(tasks: TaskMemory) -> None:
    for kind in KINDS:
        tasks.add("u1", "t1", kind, f"a {kind}")
    assert [i.kind for i in tasks.list_items("u1", "t1")] == list(KINDS)


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"text": ""}, "text must be a non-empty string"),
        ({"text": "   \n"}, "text must be a non-empty string"),
        ({"text": None}, "text must be a non-empty string"),
        ({"text": "bad \ud800 surrogate"}, "lone surrogate"),
        ({"kind": "thought"}, "kind must be one of tool_result, note, plan, todo, result"),
        ({"kind": "PLAN"}, "got 'PLAN'"),
        ({"ttl_s": 0}, "ttl_s must be a whole number of seconds above 0"),
        ({"ttl_s": -5}, "got -5"),
        ({"ttl_s": 1.5}, "ttl_s must be"),
        ({"ttl_s": True}, "ttl_s must be"),
        ({"task_id": ""}, "task_id must be 1-128 characters"),
        ({"task_id": "a/b"}, "got 'a/b'"),
        ({"task_id": "x" * 129}, "task_id must be 1-128"),
        ({"task_id": "任务一"}, "task_id must be"),
        ({"namespace": ""}, "namespace must be 1-128 characters"),
        ({"parent_task_id": "has space"}, "parent_task_id must be 1-128"),
        ({"metadata": {"when": object()}}, "metadata must hold JSON values"),
        ({"metadata": ["not", "a", "mapping"]}, "metadata must be an object"),
    ],
)
def test_invalid_input_is_rejected_with_a_helpful_message(
    tasks: TaskMemory, changes: dict[str, Any], needle: str
) -> None:
    args: dict[str, Any] = {"namespace": "u1", "task_id": "t1", "kind": "note", "text": "hello", **changes}
    with pytest.raises(ValidationError) as info:
        tasks.add(**args)
    assert needle in str(info.value)


def test_longest_valid_task_id_and_every_allowed_character(tasks: TaskMemory) -> None:
    task_id = ("Az09._:-" * 16)[:128]
    assert tasks.add("u1", task_id, "note", "ok").key == f"{task_id}/r1"


def test_items_survive_a_restart_until_they_expire(
    store: Store,
    reopen: Callable[[], Store],
    counter: TokenCounter,
    config: Config,
    clock: ManualClock,
) -> None:
    key = TaskMemory(store, counter, config.tasks, clock).add("u1", "t1", "plan", "计划：先读后写").key
    store.close()
    restarted = TaskMemory(reopen(), counter, config.tasks, clock)
    assert restarted.get("u1", "t1", key).text == "计划：先读后写"
    assert restarted.add("u1", "t1", "note", "next").key == "t1/r2"
    clock.advance(config.tasks.default_ttl_s)
    assert restarted.snippets("u1", "t1") == []
