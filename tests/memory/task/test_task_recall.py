"""What recall gets from the task tier: scoring, one-shot items consumed exactly once, empty edge cases."""

from __future__ import annotations

import threading

import pytest

from memory.errors import NotFoundError, ValidationError
from memory.task import TaskMemory
from memory.task.ranking import KIND_WEIGHTS, score
from memory.tokens import TokenCounter
from tests.conftest import ManualClock


def test_unknown_task_has_no_candidates(tasks: TaskMemory) -> None:
    assert tasks.snippets("u1", "never-seen") == []
    assert tasks.snippets("u1", "never-seen", ["anything"]) == []


def test_snippet_fields(tasks: TaskMemory, counter: TokenCounter) -> None:
    tasks.add("u1", "t-42", "plan", "先修复加载器，再跑测试。", metadata={"by": "planner"})
    [s] = tasks.snippets("u1", "t-42")
    assert (s.tier, s.id, s.key, s.source) == ("task", "t-42/r1", "t-42/r1", "task t-42")
    assert s.text == "先修复加载器，再跑测试。" and s.tokens == counter.count(s.text)
    assert s.updated_at == "2026-11-30T08:00:00Z"
    assert dict(s.metadata) == {"by": "planner", "kind": "plan"}
    assert s.why["kind"] == "plan" and s.why["ephemeral"] is False


def test_newer_items_and_plans_score_higher(tasks: TaskMemory, clock: ManualClock) -> None:
    tasks.add("u1", "t1", "tool_result", "old output")
    clock.advance(1)
    tasks.add("u1", "t1", "tool_result", "new output")
    tasks.add("u1", "t1", "plan", "older plan is still above fresh tool output")
    clock.advance(1)
    tasks.add("u1", "t1", "tool_result", "newest output")
    order = [s.text for s in tasks.snippets("u1", "t1")]
    assert order == ["older plan is still above fresh tool output", "newest output", "new output", "old output"]


def test_scores_stay_in_range_and_are_deterministic(tasks: TaskMemory) -> None:
    for i in range(40):
        tasks.add("u1", "t1", "tool_result" if i % 2 else "result", f"item {i}")
    first = tasks.snippets("u1", "t1", "item 3")
    assert len(first) > 1 and first == tasks.snippets("u1", "t1", "item 3")
    assert all(0.3 <= s.score <= 1.0 for s in first)
    assert score("plan", 0, 1.0) == 1.0
    assert score("tool_result", 10_000, 0.0) == pytest.approx(0.3 + 0.25 * KIND_WEIGHTS["tool_result"])


@pytest.mark.parametrize(
    ("query", "expected"),
    [(["Loader", "CSV"], "the loader chokes on CSV quotes"), (["加载器"], "加载器在引号处出错")],
)
def test_query_overlap_nudges_matching_items_up(tasks: TaskMemory, query: list[str], expected: str) -> None:
    tasks.add("u1", "t1", "note", "the loader chokes on CSV quotes")
    tasks.add("u1", "t1", "note", "加载器在引号处出错")
    tasks.add("u1", "t1", "note", "unrelated newest note")
    top = tasks.snippets("u1", "t1", query)[0]
    assert top.text == expected and top.why["overlap"] == 1.0


def test_a_query_string_is_split_on_whitespace(tasks: TaskMemory) -> None:
    tasks.add("u1", "t1", "note", "the loader chokes")
    tasks.add("u1", "t1", "note", "newest")
    assert tasks.snippets("u1", "t1", "loader quotes")[0].why["overlap"] == 0.5


def test_one_shot_item_is_returned_once_then_gone(tasks: TaskMemory) -> None:
    tasks.add("u1", "t1", "plan", "plan")
    now = tasks.add("u1", "t1", "observation", "当前时间：2026-11-30 08:00", ephemeral=True)
    assert [i.key for i in tasks.list_items("u1", "t1")] == ["t1/r1", "t1/r2"]  # looking does not consume
    first = tasks.snippets("u1", "t1")
    assert [s.key for s in first] == [now.key, "t1/r1"]  # one-shot items count as newest
    assert first[0].why["ephemeral"] is True
    assert [s.key for s in tasks.snippets("u1", "t1")] == ["t1/r1"]
    with pytest.raises(NotFoundError):
        tasks.get("u1", "t1", now.key)


@pytest.mark.parametrize("texts", [("当前时间：2026-11-30 08:00", "当前温度：21度"),
                                   ("The time is 08:00.", "The temperature is 21 degrees.")])
def test_consume_all_takes_every_item_or_none(tasks: TaskMemory, texts: tuple[str, str]) -> None:
    plan = tasks.add("u1", "t1", "plan", "plan")
    first, second = (tasks.add("u1", "t1", "observation", text, ephemeral=True) for text in texts)
    assert tasks.consume("u1", [first.key]) == {first.key}  # another call took one first
    assert tasks.consume_all("u1", [first.key, second.key]) is False
    assert [i.key for i in tasks.list_items("u1", "t1")] == [plan.key, second.key]  # the other stays
    assert tasks.consume_all("u1", [plan.key]) is False  # not a one-shot item: left alone
    assert tasks.consume_all("u1", []) is True
    assert tasks.consume_all("u1", [second.key, second.key]) is True
    assert [i.key for i in tasks.list_items("u1", "t1")] == [plan.key]


def test_concurrent_recalls_never_share_a_one_shot_item(tasks: TaskMemory) -> None:
    keys = {tasks.add("u1", "t1", "note", f"one-shot {i}", ephemeral=True).key for i in range(30)}
    seen: list[list[str]] = []
    start = threading.Barrier(8)

    def recall() -> None:
        start.wait()
        for _ in range(5):
            seen.append([s.id for s in tasks.snippets("u1", "t1")])

    threads = [threading.Thread(target=recall) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    handed_out = [key for batch in seen for key in batch]
    assert sorted(handed_out) == sorted(keys)  # each exactly once, none lost


def test_promote_returns_full_frozen_copies_without_removing(tasks: TaskMemory) -> None:
    big = "结论：" + "数据管道需要在读取前校验编码。" * 200
    tasks.add("u1", "t1", "plan", "plan")
    result = tasks.add("u1", "t1", "result", big, metadata={"topic": "etl"})
    promoted = tasks.promote("u1", "t1", [result.key, "t1/r1", result.key])
    assert [p.key for p in promoted] == [result.key, "t1/r1"]
    assert promoted[0].text == big and promoted[0].offloaded and dict(promoted[0].metadata) == {"topic": "etl"}
    with pytest.raises(AttributeError):
        promoted[0].text = "changed"  # type: ignore[misc]
    assert len(tasks.list_items("u1", "t1")) == 2
    assert tasks.promote("u1", "t1", []) == ()


def test_promote_names_every_missing_key(tasks: TaskMemory) -> None:
    tasks.add("u1", "t1", "note", "x")
    with pytest.raises(NotFoundError, match=r"'t1/r7', 'zzz' in task 't1' of namespace 'u1'"):
        tasks.promote("u1", "t1", ["t1/r1", "t1/r7", "zzz"])
    with pytest.raises(ValidationError, match="keys must be a list"):
        tasks.promote("u1", "t1", "t1/r1")
    with pytest.raises(NotFoundError, match="task 'ghost'"):
        tasks.promote("u1", "ghost", ["ghost/r1"])


def test_delete_namespace_removes_only_that_namespace(tasks: TaskMemory) -> None:
    tasks.add("u1", "t1", "note", "a")
    tasks.add("u1", "t2", "note", "b")
    tasks.add("u2", "t1", "note", "c")
    assert tasks.delete_namespace("u1") == 2
    assert tasks.delete_namespace("u1") == 0
    assert tasks.snippets("u1", "t1") == []
    assert [i.text for i in tasks.list_items("u2", "t1")] == ["c"]
