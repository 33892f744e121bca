"""One-shot task items through the whole recall: consumed only when shown, never shown to two calls."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from memory.service import Memory

LONG = "Intermediate result of the crawl: " + "the page listed 40 products with prices and stock. " * 30


def _keys(result) -> set[str]:  # type: ignore[no-untyped-def]
    return {item.snippet.key for item in result.items if item.snippet.tier == "task"}


def test_one_shot_item_is_consumed_by_the_recall_that_shows_it(memory: Memory) -> None:
    added = memory.tasks.add("u1", "t1", "observation", "当前时间：2026-11-30 08:00", ephemeral=True)
    first = memory.recall("u1", "what time is it", 300, task_id="t1")
    assert added.key in _keys(first)
    second = memory.recall("u1", "what time is it", 300, task_id="t1")
    assert added.key not in _keys(second)


def test_one_shot_item_left_out_by_the_budget_stays_for_a_later_turn(memory: Memory) -> None:
    added = memory.tasks.add("u1", "t1", "observation", LONG, ephemeral=True)
    tight = memory.recall("u1", "crawl result", 20, task_id="t1")
    assert added.key not in _keys(tight)
    assert [i.key for i in memory.tasks.list_items("u1", "t1")] == [added.key]  # still there
    roomy = memory.recall("u1", "crawl result", 2000, task_id="t1")
    assert added.key in _keys(roomy)
    assert memory.tasks.list_items("u1", "t1") == []


def test_concurrent_recalls_never_show_the_same_one_shot_item(memory: Memory) -> None:
    keys = {memory.tasks.add("u1", "t1", "note", f"one-shot note number {i}", ephemeral=True).key
            for i in range(24)}
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda _: memory.recall("u1", "note", 4000, task_id="t1"), range(12)))
    shown = [key for result in results for key in _keys(result)]
    assert len(shown) == len(set(shown))  # no item in two blocks
    assert set(shown) == keys  # and none lost: every item was shown once
    for result in results:  # the block each call rendered matches its items
        for item in result.items:
            assert item.text in result.rendered
