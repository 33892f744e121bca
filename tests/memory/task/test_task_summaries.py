"""Compaction summaries: versions per (namespace, task), fields kept whole, checks, removal with the task, races,
and the migration that brings the table to an older store."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from memory.config import Config
from memory.embedding import MINILM
from memory.errors import NotFoundError, TooLargeError, ValidationError
from memory.schema import SCHEMA_VERSION
from memory.store import Store, open_store
from memory.task import SummaryVersion, TaskMemory
from memory.tokens import TokenCounter
from tests.conftest import ManualClock, sqlite_only

SECTIONS = {"User constraints": ["Never use Python 2 syntax."], "Open": ["Fix the CSV loader."], "Done": []}
CHINESE = {"用户约束": ["预算不超过500元。"], "已完成": ["已修复编码问题。", "测试通过了。"]}


def _add(tasks: TaskMemory, namespace: str = "u1", task_id: str = "t1", **changes: Any) -> SummaryVersion:
    args: dict[str, Any] = {"first": 0, "last": 9, "digest": "sha256:ab12", "text": "## Summary\n- Fix the loader.",
                            "tokens": 12, "covered_tokens": 900, "sections": SECTIONS, **changes}
    return tasks.add_summary(namespace, task_id, **args)


def _rows(store: Store) -> int:
    return int(store.db.execute("SELECT count(*) FROM task_summaries").fetchone()[0])


def test_versions_count_up_per_task_and_namespace(tasks: TaskMemory) -> None:
    assert [_add(tasks, last=10 * i).version for i in range(1, 4)] == [1, 2, 3]
    assert _add(tasks, task_id="t2").version == 1
    assert _add(tasks, namespace="u2").version == 1
    assert [s.version for s in tasks.summaries("u1", "t1")] == [1, 2, 3]
    assert [s.last for s in tasks.summaries("u1", "t1")] == [10, 20, 30]
    latest = tasks.latest_summary("u1", "t1")
    assert latest is not None and latest.version == 3 and latest.last == 30


@pytest.mark.parametrize(("text", "sections", "dropped"), [
    ("## Summary of messages[0] to messages[9]\n- Fix the loader.", SECTIONS,
     [{"text": "ls -la output", "reason": "tool output, offloaded"}]),
    ("## 摘要\n- 预算不超过500元。\n- 已修复编码问题。", CHINESE, [{"text": "闲聊：天气不错。", "reason": "与任务无关"}]),
])
def test_every_field_comes_back_as_written(tasks: TaskMemory, text: str, sections: dict[str, list[str]],
                                           dropped: list[dict[str, str]]) -> None:
    written = _add(tasks, first=3, last=7, text=text, sections=sections, dropped=dropped,
                   references=["t1/r2", "t1/r5"], summariser="model:qwen2.5-7b", digest="d41d8cd9")
    read = tasks.summary("u1", "t1", 1)
    assert read == written
    assert (read.namespace, read.task_id, read.version, read.created_at) == ("u1", "t1", 1, "2026-11-30T08:00:00Z")
    assert (read.first, read.last, read.digest, read.text) == (3, 7, "d41d8cd9", text)
    assert (read.tokens, read.covered_tokens, read.summariser) == (12, 900, "model:qwen2.5-7b")
    assert list(read.sections) == list(sections)  # the summary's own section order
    assert {name: list(lines) for name, lines in read.sections.items()} == sections
    assert [dict(entry) for entry in read.dropped] == dropped
    assert read.references == ("t1/r2", "t1/r5")


def test_a_summary_is_frozen_and_defaults_to_extractive(tasks: TaskMemory) -> None:
    summary = _add(tasks)
    assert (summary.dropped, summary.references, summary.summariser) == ((), (), "extractive")
    with pytest.raises(AttributeError):
        summary.text = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        summary.sections["Open"] = ()  # type: ignore[index]


def test_a_summary_opens_the_task_without_using_an_item_number(tasks: TaskMemory) -> None:
    _add(tasks, task_id="fresh")
    assert tasks.list_items("u1", "fresh") == []
    assert tasks.add("u1", "fresh", "note", "first item").key == "fresh/r1"
    _add(tasks, task_id="fresh")
    assert tasks.add("u1", "fresh", "note", "second item").key == "fresh/r2"


def test_a_summary_honours_its_parent_like_an_item(tasks: TaskMemory, store: Store) -> None:
    tasks.add("u1", "parent", "plan", "the plan")
    _add(tasks, task_id="child", parent_task_id="parent")
    assert store.db.execute("SELECT parent_task_id FROM tasks WHERE task_id = 'child'").fetchone()[0] == "parent"
    with pytest.raises(NotFoundError, match="parent task 'nobody' does not exist"):
        _add(tasks, task_id="orphan", parent_task_id="nobody")
    tasks.end_task("u1", "parent")
    assert _rows(store) == 0  # a sub-task's summaries go with the tree


def test_latest_is_none_and_listing_is_not_found_for_an_unknown_task(tasks: TaskMemory) -> None:
    assert tasks.latest_summary("u1", "nobody") is None
    with pytest.raises(NotFoundError, match=r"task 'nobody' does not exist in namespace 'u1'"):
        tasks.summaries("u1", "nobody")
    with pytest.raises(NotFoundError, match=r"task 'nobody' does not exist in namespace 'u1'"):
        tasks.summary("u1", "nobody", 1)
    tasks.add("u1", "t1", "note", "an item, no summary yet")
    assert tasks.latest_summary("u1", "t1") is None
    assert tasks.summaries("u1", "t1") == []
    _add(tasks)
    assert tasks.latest_summary("u2", "t1") is None  # another namespace's task of the same id


def test_a_missing_version_names_the_ones_there_are(tasks: TaskMemory) -> None:
    tasks.add("u1", "t1", "note", "an item")
    with pytest.raises(NotFoundError, match=r"has no summary version 1; it has no summary yet"):
        tasks.summary("u1", "t1", 1)
    _add(tasks)
    with pytest.raises(NotFoundError, match=r"has no summary version 2; its only version is 1 — ask for one"):
        tasks.summary("u1", "t1", 2)
    for _ in range(2):
        _add(tasks)
    with pytest.raises(NotFoundError, match=r"task 't1' of namespace 'u1' has no summary version 4; its versions "
                                            r"are 1-3"):
        tasks.summary("u1", "t1", 4)
    with pytest.raises(NotFoundError, match=r"no summary version 9223372036854775808; its versions are 1-3"):
        tasks.summary("u1", "t1", 2**63)


@pytest.mark.parametrize(("changes", "needle"), [
    ({"first": 5, "last": 4}, "first must not be above last"),
    ({"first": -1}, "first must be a whole number of at least 0"),
    ({"last": 2.5}, "last must be a whole number of at least 0"),
    ({"first": True}, "first must be a whole number of at least 0"),
    ({"text": ""}, "text must be a non-empty string"),
    ({"text": "   "}, "text must be a non-empty string"),
    ({"text": None}, "text must be a non-empty string"),
    ({"text": "bad \ud800"}, "lone surrogate"),
    ({"digest": ""}, "digest must be a non-empty string"),
    ({"tokens": -3}, "tokens must be a whole number of at least 0"),
    ({"covered_tokens": "900"}, "covered_tokens must be a whole number of at least 0"),
    ({"sections": ["Open"]}, "sections must map section names to lists of strings"),
    ({"sections": {"Open": "one line"}}, "sections['Open'] must be a list of strings"),
    ({"sections": {"Open": [1]}}, "sections['Open'][0] must be a string"),
    ({"sections": {"": []}}, "sections must be named by non-empty strings"),
    ({"dropped": [{"text": "x"}]}, 'dropped[0] must be an object with exactly the strings "text" and "reason"'),
    ({"dropped": [{"text": "x", "reason": 3}]}, "dropped[0] must be an object"),
    ({"dropped": "x"}, "dropped must be a list of"),
    ({"references": "t1/r1"}, "references must be a list of task item keys"),
    ({"references": [7]}, "references[0] must be a string"),
    ({"summariser": "gpt"}, "summariser must be 'extractive' or 'model:<name>'"),
    ({"summariser": "model:"}, "summariser must be 'extractive' or 'model:<name>'"),
])
def test_bad_fields_are_refused_with_a_sentence(tasks: TaskMemory, store: Store, changes: dict[str, Any],
                                                 needle: str) -> None:
    with pytest.raises(ValidationError) as info:
        _add(tasks, **changes)
    assert needle in str(info.value)
    assert _rows(store) == 0 and store.db.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0


@pytest.mark.parametrize(("namespace", "task_id", "needle"), [
    ("u1", "a/b", "task_id must be 1-128 characters"),
    ("u1", "", "task_id must be 1-128 characters"),
    ("bad namespace", "t1", "namespace must be 1-128 characters"),
])
def test_bad_ids_are_refused(tasks: TaskMemory, namespace: str, task_id: str, needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        _add(tasks, namespace=namespace, task_id=task_id)
    with pytest.raises(ValidationError, match=needle):
        tasks.latest_summary(namespace, task_id)


@pytest.mark.parametrize("version", [0, -1, True, "1", 1.0])
def test_a_version_is_a_whole_number_from_1(tasks: TaskMemory, version: Any) -> None:
    _add(tasks)
    with pytest.raises(ValidationError, match="version must be a whole number of at least 1"):
        tasks.summary("u1", "t1", version)


def test_text_over_the_limit_is_too_large(counter: TokenCounter, config: Config, store: Store,
                                          clock: ManualClock) -> None:
    limited = config.replace("limits", max_text_chars=100)
    tasks = TaskMemory(store, counter, limited.tasks, clock, limits=limited.limits)
    with pytest.raises(TooLargeError, match=r"text has 101 characters, over the limit of 100"):
        _add(tasks, text="x" * 101)
    with pytest.raises(TooLargeError, match=r"sections \(as JSON\) has"):
        _add(tasks, sections={"Open": ["y" * 100]})


def test_ending_the_task_removes_its_summaries(tasks: TaskMemory, store: Store) -> None:
    tasks.add("u1", "t1", "plan", "the plan")
    _add(tasks)
    _add(tasks)
    _add(tasks, task_id="kept")
    assert tasks.end_task("u1", "t1") == 1  # the count is of items, as before
    assert tasks.latest_summary("u1", "t1") is None
    assert _rows(store) == 1
    assert _add(tasks).version == 1  # a new task of the same id starts over


def test_a_summary_only_task_can_be_ended(tasks: TaskMemory, store: Store) -> None:
    _add(tasks)
    assert tasks.end_task("u1", "t1") == 0
    assert _rows(store) == 0


def test_deleting_the_namespace_removes_its_summaries(tasks: TaskMemory, store: Store) -> None:
    _add(tasks)
    _add(tasks, task_id="t2")
    _add(tasks, namespace="u2")
    assert tasks.delete_namespace("u1") == 0
    assert store.db.execute("SELECT namespace FROM task_summaries").fetchall() == [("u2",)]
    assert store.db.execute("SELECT namespace FROM tasks").fetchall() == [("u2",)]


def test_summaries_expire_with_their_task(make_tasks: Callable[..., TaskMemory], clock: ManualClock,
                                          store: Store) -> None:
    tasks = make_tasks(default_ttl_s=3600)
    _add(tasks)
    clock.advance(3000)
    _add(tasks)  # a summary slides the task's expiry, as an add does
    clock.advance(3000)
    assert [s.version for s in tasks.summaries("u1", "t1")] == [1, 2]
    clock.advance(600)
    assert tasks.latest_summary("u1", "t1") is None
    with pytest.raises(NotFoundError, match=r"task 't1' does not exist in namespace 'u1'"):
        tasks.summaries("u1", "t1")
    assert _rows(store) == 0  # purged on access
    _add(tasks, task_id="t2")
    clock.advance(3600)
    assert tasks.purge_expired() == 0 and _rows(store) == 0  # the background purge takes them too


def test_an_expired_task_starts_its_versions_over(make_tasks: Callable[..., TaskMemory], clock: ManualClock) -> None:
    tasks = make_tasks(default_ttl_s=60)
    _add(tasks)
    _add(tasks)
    clock.advance(60)
    assert _add(tasks).version == 1
    assert [s.version for s in tasks.summaries("u1", "t1")] == [1]


def test_an_expired_summary_is_owed_an_erase_pass(make_tasks: Callable[..., TaskMemory], clock: ManualClock,
                                                  store: Store) -> None:
    tasks = make_tasks(default_ttl_s=60)
    assert store.eraser.wait(30)  # the pass a new store is owed at open
    for purge in (tasks.purge_expired, lambda: tasks.latest_summary("u1", "t1")):
        _add(tasks, text="The zqsummarygone plan.")
        clock.advance(60)
        passes = store.eraser.passes
        purge()
        assert store.eraser.wait(30)
        assert store.eraser.passes > passes, "expiring a task with summaries only must erase the WAL too"


def test_concurrent_writers_never_share_a_version(tasks: TaskMemory, reopen: Callable[[], Store],
                                                  counter: TokenCounter, config: Config, clock: ManualClock) -> None:
    # A second store over the same file: only SQLite's write lock stands between the two, as between processes.
    other = TaskMemory(reopen(), counter, config.tasks, clock)
    start = threading.Barrier(4)
    got: list[int] = []
    failures: list[BaseException] = []

    def write(memory: TaskMemory) -> None:
        start.wait()
        try:
            got.extend(_add(memory).version for _ in range(10))
        except BaseException as exc:  # reported below: an exception in a thread would pass unseen
            failures.append(exc)

    threads = [threading.Thread(target=write, args=(m,)) for m in (tasks, other, tasks, other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sorted(got) == list(range(1, 41))
    assert [s.version for s in tasks.summaries("u1", "t1")] == list(range(1, 41))


def test_a_version_7_store_gains_the_summaries_table(config: Config, counter: TokenCounter,
                                                     clock: ManualClock) -> None:
    store = open_store(config, MINILM)
    TaskMemory(store, counter, config.tasks, clock).add("u1", "t1", "plan", "written at version 7")
    store.db.sqlite.executescript("DROP TABLE task_summaries; UPDATE meta SET value = '7' WHERE key = 'schema_version';")
    store.close()
    store = open_store(config, MINILM)
    try:
        version = store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        assert version == str(SCHEMA_VERSION)
        tasks = TaskMemory(store, counter, config.tasks, clock)
        assert tasks.summaries("u1", "t1") == []
        assert _add(tasks).version == 1
        assert [i.text for i in tasks.list_items("u1", "t1")] == ["written at version 7"]
    finally:
        store.close()


def test_the_migration_can_run_again(store: Store, backend: str) -> None:
    from memory.schema import MIGRATIONS

    sqlite_only(backend, "the numbered migrations of the SQLite file")
    step = dict(MIGRATIONS)[8]
    step(store.db.sqlite)  # a kill after the step but before its version was recorded runs it once more
    assert _rows(store) == 0
