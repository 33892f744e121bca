"""Reentrant transactions over the real store: a transaction inside another of the same thread is a savepoint, so
several tiers' writes roll back together, and an inner dry run undoes only itself."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from memory.config import Config, load_config
from memory.embedding import MINILM
from memory.facts.memory import FactMemory
from memory.facts.rules import RuleSet, load_rules
from memory.store import Store, open_store
from memory.task import TaskMemory
from memory.tokens import TokenCounter
from tests.conftest import ManualClock

TEXTS = {"en": ("Never use tables.", "Always answer in English."),
         "zh": ("以后不要用表格。", "以后都用中文回答。")}


class _Refused(Exception):
    """What the tests raise to abandon a transaction half-way."""


@pytest.fixture(scope="module")
def rules() -> RuleSet:
    return load_rules()


@pytest.fixture()
def store(config: Config) -> Iterator[Store]:
    opened = open_store(config, MINILM)
    yield opened
    opened.close()


@pytest.fixture()
def facts(store: Store, rules: RuleSet, counter: TokenCounter, clock: ManualClock) -> FactMemory:
    return FactMemory(store, rules, counter, load_config().facts, clock)


@pytest.fixture()
def tasks(store: Store, counter: TokenCounter, config: Config, clock: ManualClock) -> TaskMemory:
    return TaskMemory(store, counter, config.tasks, clock)


def _rows(store: Store, table: str) -> int:
    return int(store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_an_outer_transaction_that_raises_leaves_neither_tier_written(store: Store, facts: FactMemory,
                                                                      tasks: TaskMemory, lang: str) -> None:
    rule, _ = TEXTS[lang]
    with pytest.raises(_Refused), store.transaction():
        assert facts.observe("u1", rule).stored
        tasks.add("u1", "t1", "plan", rule)
        facts.observe_conversation("u1", "t1", [(0, rule)])
        raise _Refused
    assert facts.list_facts("u1") == [] and tasks.list_tasks("u1") == []
    assert (_rows(store, "facts"), _rows(store, "task_items"), _rows(store, "facts_observed")) == (0, 0, 0)


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_an_inner_dry_run_rolls_back_only_itself_and_the_outer_commit_keeps_the_rest(
        store: Store, facts: FactMemory, tasks: TaskMemory, lang: str) -> None:
    first, second = TEXTS[lang]
    with store.transaction():
        facts.observe("u1", first)
        with store.transaction(commit=False):
            facts.observe("u1", second)
            tasks.add("u1", "t1", "plan", second)
            assert len(facts.list_facts("u1")) == 2  # the inner block sees its own writes
        tasks.add("u1", "t2", "plan", first)
    (kept,) = facts.list_facts("u1")
    assert kept.text in first
    assert [t.task_id for t in tasks.list_tasks("u1")] == ["t2"]


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_an_inner_transaction_that_raises_is_undone_and_the_outer_goes_on(store: Store, facts: FactMemory,
                                                                          lang: str) -> None:
    first, second = TEXTS[lang]
    with store.transaction():
        facts.observe("u1", first)
        with pytest.raises(_Refused), store.transaction():
            facts.observe("u1", second)
            raise _Refused
        with store.transaction():  # the savepoint name is free again
            facts.observe("u2", second)
    assert len(facts.list_facts("u1")) == 1 and len(facts.list_facts("u2")) == 1


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_a_preview_inside_an_outer_transaction_answers_and_stores_nothing(store: Store, facts: FactMemory,
                                                                          lang: str) -> None:
    first, second = TEXTS[lang]
    with store.transaction():
        facts.observe("u1", first)
        preview = facts.preview("u1", second)
        assert [o.outcome for o in preview.outcomes] == ["stored"]
        again = facts.preview("u1", first)
        assert [o.outcome for o in again.outcomes] == ["ignored"]  # the outer block's write is seen
    assert len(facts.list_facts("u1")) == 1


def test_another_threads_transaction_waits_and_does_not_nest(store: Store, facts: FactMemory) -> None:
    inside = threading.Event()
    results: list[int] = []

    def other() -> None:
        inside.wait(10)
        with store.transaction() as db:  # waits for the write lock: its own BEGIN, not a savepoint
            db.execute("INSERT INTO meta (key, value) VALUES ('zq-other', '1')")
        results.append(1)

    worker = threading.Thread(target=other)
    worker.start()
    with pytest.raises(_Refused), store.transaction():
        facts.observe("u1", "Never use tables.")
        inside.set()
        worker.join(0.3)
        assert worker.is_alive()  # still waiting on the lock
        raise _Refused
    worker.join(10)
    assert results == [1]
    assert facts.list_facts("u1") == []
    assert store.db.execute("SELECT value FROM meta WHERE key = 'zq-other'").fetchone() == ("1",)
