"""What context assembly keeps of a task in the store (real SQLite, the test clock): a task opened without an item
(touch), a conversation sent without task_id followed to its task (thread), and a task's last tool selection;
all of it across a restart, and gone with the task."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import pytest

from memory.config import Config
from memory.errors import NotFoundError, ValidationError
from memory.store import Store
from memory.task import TaskMemory
from memory.tokens import TokenCounter
from tests.conftest import ManualClock

DAY = 86400  # tasks.default_ttl_s
CONVERSATIONS = {
    "en": ("You are a travel agent.", "hi", "Hello! Where to?", "Lisbon in May.", "Tokyo in April."),
    "zh": ("你是一名旅行顾问。", "你好", "你好！想去哪里？", "五月去里斯本。", "四月去东京。"),
}


def prefixes(*messages: str) -> list[str]:
    """The caller's digests: prefixes[k] of messages[:k + 1] (a running hash, as context assembly computes it)."""
    running = hashlib.sha256()
    out = []
    for message in messages:
        running.update(message.encode("utf-8") + b"\x01")
        out.append(running.copy().hexdigest())
    return out


def seed_of(*messages: str) -> str:
    """How the conversation starts: here the digest of its system prompt and first user message."""
    return prefixes(*messages[:2])[-1]


def ctx(text: str) -> str:
    return "ctx-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _rows(store: Store, table: str) -> int:
    return int(store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_touch_opens_a_task_without_an_item_and_slides_its_expiry(tasks: TaskMemory, clock: ManualClock) -> None:
    tasks.touch("u1", "t1")
    (info,) = tasks.list_tasks("u1")
    assert (info.task_id, info.items) == ("t1", 0)
    assert tasks.list_items("u1", "t1") == []
    clock.advance(DAY - 10)
    tasks.touch("u1", "t1")
    clock.advance(20)  # past the first expiry, not the slid one
    assert [t.task_id for t in tasks.list_tasks("u1")] == ["t1"]
    tasks.touch("u1", "child", parent_task_id="t1")
    assert tasks.end_task("u1", "t1") == 0
    assert tasks.list_tasks("u1") == []


def test_touch_refuses_what_add_refuses(tasks: TaskMemory) -> None:
    with pytest.raises(ValidationError):
        tasks.touch("u1", "t/1")
    with pytest.raises(NotFoundError):
        tasks.touch("u1", "t1", parent_task_id="missing")


@pytest.mark.parametrize("lang", sorted(CONVERSATIONS))
def test_one_conversation_keeps_its_task_turn_after_turn_and_an_exact_repeat_too(tasks: TaskMemory,
                                                                                 lang: str) -> None:
    system, hi, reply, question, _ = CONVERSATIONS[lang]
    whole = prefixes(system, hi, reply, question)
    seed = seed_of(system, hi)
    first = tasks.thread("u1", seed, whole[:2])
    assert first == ctx(seed)
    assert tasks.thread("u1", seed, whole) == first
    assert tasks.thread("u1", seed, whole) == first  # the same request again
    assert [t.task_id for t in tasks.list_tasks("u1")] == [first]  # the task exists without any item


@pytest.mark.parametrize("lang", sorted(CONVERSATIONS))
def test_two_conversations_that_start_alike_and_then_differ_get_tasks_of_their_own(tasks: TaskMemory,
                                                                                   lang: str) -> None:
    system, hi, reply, lisbon, tokyo = CONVERSATIONS[lang]
    seed = seed_of(system, hi)
    a = prefixes(system, hi, reply, lisbon)
    b = prefixes(system, hi, reply, tokyo)
    task_a = tasks.thread("u1", seed, a[:2])
    assert tasks.thread("u1", seed, a) == task_a
    task_b = tasks.thread("u1", seed, b[:2])  # shorter than every known thread of the seed: a new one
    assert task_b != task_a
    assert task_b == ctx(f"{seed}\0{1}")  # the next deterministic id
    assert tasks.thread("u1", seed, b) == task_b
    more_a = prefixes(system, hi, reply, lisbon, "ok", "and hotels?")
    assert tasks.thread("u1", seed, more_a) == task_a
    more_b = prefixes(system, hi, reply, tokyo, "ok", "and hotels?")
    assert tasks.thread("u1", seed, more_b) == task_b


@pytest.mark.parametrize("lang", sorted(CONVERSATIONS))
def test_peek_thread_answers_what_thread_will_and_writes_nothing(tasks: TaskMemory, lang: str) -> None:
    system, hi, reply, lisbon, tokyo = CONVERSATIONS[lang]
    seed = seed_of(system, hi)
    a = prefixes(system, hi, reply, lisbon)
    assert tasks.peek_thread("u1", seed, a[:2]) == ctx(seed)
    assert tasks.list_tasks("u1") == []  # nothing opened, nothing recorded
    task_a = tasks.thread("u1", seed, a[:2])
    assert tasks.peek_thread("u1", seed, a) == task_a == tasks.thread("u1", seed, a)
    b = prefixes(system, hi, reply, tokyo)
    assert tasks.peek_thread("u1", seed, b[:2]) == ctx(f"{seed}\0{1}") == tasks.thread("u1", seed, b[:2])


@pytest.mark.parametrize("lang", sorted(CONVERSATIONS))
def test_a_forked_history_is_another_conversation(tasks: TaskMemory, lang: str) -> None:
    system, hi, reply, lisbon, tokyo = CONVERSATIONS[lang]
    seed = seed_of(system, hi)
    task = tasks.thread("u1", seed, prefixes(system, hi, reply, lisbon))
    edited = prefixes(system, hi, reply, tokyo, "ok")  # messages[3] changed, not appended to
    forked = tasks.thread("u1", seed, edited)
    assert forked != task
    assert tasks.thread("u1", seed, prefixes(system, hi, reply, lisbon, "ok")) == task


@pytest.mark.parametrize("lang", sorted(CONVERSATIONS))
def test_the_same_conversation_in_two_namespaces_is_two_tasks_of_the_same_id(tasks: TaskMemory, lang: str) -> None:
    system, hi, reply, lisbon, _ = CONVERSATIONS[lang]
    seed = seed_of(system, hi)
    whole = prefixes(system, hi, reply, lisbon)
    assert tasks.thread("u1", seed, whole) == tasks.thread("u2", seed, whole) == ctx(seed)
    tasks.end_task("u1", ctx(seed))
    assert [t.task_id for t in tasks.list_tasks("u2")] == [ctx(seed)]
    assert tasks.thread("u2", seed, [*whole, "more"]) == ctx(seed)


def test_a_new_thread_skips_an_id_a_task_already_holds(tasks: TaskMemory) -> None:
    seed = "s" * 64
    tasks.add("u1", ctx(seed), "note", "a task of that name, added by hand")
    assert tasks.thread("u1", seed, ["p0"]) == ctx(f"{seed}\0{1}")


@pytest.mark.parametrize("lang", sorted(CONVERSATIONS))
def test_a_conversation_is_followed_across_a_restart(tasks: TaskMemory, reopen: Callable[[], Store],
                                                     counter: TokenCounter, config: Config,
                                                     clock: ManualClock, lang: str) -> None:
    system, hi, reply, lisbon, tokyo = CONVERSATIONS[lang]
    seed = seed_of(system, hi)
    task = tasks.thread("u1", seed, prefixes(system, hi, reply, lisbon))
    other = tasks.thread("u1", seed, prefixes(system, hi, reply, tokyo))
    again = TaskMemory(reopen(), counter, config.tasks, clock)
    assert again.thread("u1", seed, prefixes(system, hi, reply, lisbon, "ok")) == task
    assert again.thread("u1", seed, prefixes(system, hi, reply, tokyo, "ok")) == other


def test_a_thread_goes_with_its_task(tasks: TaskMemory, store: Store, clock: ManualClock) -> None:
    seed = "s" * 64
    task = tasks.thread("u1", seed, ["p0", "p1"])
    assert _rows(store, "context_threads") == 1
    tasks.end_task("u1", task)
    assert _rows(store, "context_threads") == 0
    assert tasks.thread("u1", seed, ["p0", "p1", "p2"]) == task  # its id is free again: a fresh task
    clock.advance(DAY + 1)
    tasks.purge_expired()
    assert _rows(store, "context_threads") == 0 and tasks.list_tasks("u1") == []


@pytest.mark.parametrize("prefix_list", [[], "p0", [""], ["p0", 7], ["x" * 257]])
def test_thread_refuses_what_is_not_a_list_of_digests(tasks: TaskMemory, prefix_list: Sequence[object]) -> None:
    with pytest.raises(ValidationError):
        tasks.thread("u1", "seed", prefix_list)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        tasks.thread("u1", "", ["p0"])


def test_a_tool_selection_is_kept_replaced_and_read_after_a_restart(tasks: TaskMemory, reopen: Callable[[], Store],
                                                                   counter: TokenCounter, config: Config,
                                                                   clock: ManualClock) -> None:
    assert tasks.tool_selection("u1", "t1") == ()
    tasks.set_tool_selection("u1", "t1", ["search_flights", "book_hotel", "search_flights"])
    assert tasks.tool_selection("u1", "t1") == ("search_flights", "book_hotel")
    assert [t.task_id for t in tasks.list_tasks("u1")] == ["t1"]  # setting it opens the task
    tasks.set_tool_selection("u1", "t1", ["查询天气"])
    assert tasks.tool_selection("u1", "t1") == ("查询天气",)
    assert tasks.tool_selection("u2", "t1") == ()
    again = TaskMemory(reopen(), counter, config.tasks, clock)
    assert again.tool_selection("u1", "t1") == ("查询天气",)
    again.set_tool_selection("u1", "t1", [])
    assert again.tool_selection("u1", "t1") == ()


@pytest.mark.parametrize("ending", ["end", "expiry", "namespace"])
def test_a_tool_selection_goes_with_its_task(tasks: TaskMemory, store: Store, clock: ManualClock,
                                             ending: str) -> None:
    tasks.set_tool_selection("u1", "t1", ["search"])
    tasks.touch("u1", "child", parent_task_id="t1")
    tasks.set_tool_selection("u1", "child", ["book"])
    tasks.set_tool_selection("u1", "kept", ["other"])
    if ending == "end":
        tasks.end_task("u1", "t1")
    elif ending == "expiry":
        clock.advance(DAY - 10)
        tasks.touch("u1", "kept")
        clock.advance(20)
        assert tasks.tool_selection("u1", "t1") == ()  # an expired task has none, even before a purge
        tasks.purge_expired()
    else:
        tasks.delete_namespace("u1")
    left = store.db.execute("SELECT task_id FROM context_tools ORDER BY task_id").fetchall()
    assert left == ([] if ending == "namespace" else [("kept",)])


@pytest.mark.parametrize("names", ["search", [""], [None], ["ok", 3]])
def test_set_tool_selection_refuses_what_is_not_a_list_of_names(tasks: TaskMemory, names: object) -> None:
    with pytest.raises(ValidationError):
        tasks.set_tool_selection("u1", "t1", names)  # type: ignore[arg-type]
    assert tasks.list_tasks("u1") == []
