"""A task's conversation read for facts over the real store (FactMemory.observe_conversation): each message once,
across restarts; its facts bound to the task and gone with it; a deleted fact never brought back by the message
that stated it, an older statement never rolling a newer fact back."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.config import Config, LimitsConfig, load_config
from memory.embedding import MINILM, Embedder
from memory.errors import ValidationError
from memory.facts.assisted import MODEL_RULES, model_readers
from memory.facts.memory import FactMemory
from memory.facts.records import FactRecord
from memory.facts.rules import RuleSet
from memory.service import Memory
from memory.store import Store, open_store
from memory.task import TaskMemory
from memory.tokens import get_counter
from tests.conftest import ManualClock

DAY = 86400  # tasks.default_ttl_s
BUDGETS = {  # stated one after another, then a new message correcting it once more
    "en": ("My budget is 500 dollars.", "Actually, make it 800 dollars.", "Actually, make it 1000 dollars.",
           "actually make it 1200 dollars", "1200 USD"),
    "zh": ("我的预算是500元。", "算了，改成800元", "算了，改成1000元", "算了，改成1200元", "1200 CNY"),
}
RULES = {  # a rule, the same rule in other words, and a control in another task
    "en": ("No emojis in your answers.", "Please never use emojis.", "Never use tables."),
    "zh": ("不要用表情符号。", "回答里别用表情符号。", "以后不要用表格。"),
}
MARKERS = {"en": "Never use zqxmarkerwordvtk.", "zh": "不要用独一无二的标记词语。"}
NEEDLES = {"en": "zqxmarkerwordvtk", "zh": "独一无二的标记词语"}


class World:
    """Both tiers over one real store on the test clock; `restart()` closes the store and opens its folder again."""

    def __init__(self, config: Config, rules: RuleSet, clock: ManualClock) -> None:
        self.config, self.rules, self.clock = config, rules, clock
        self._open()

    def _open(self) -> None:
        self.store = open_store(self.config, MINILM)
        self.facts = FactMemory(self.store, self.rules, get_counter(), self.config.facts, self.clock)
        self.tasks = TaskMemory(self.store, get_counter(), self.config.tasks, self.clock)

    def restart(self) -> None:
        self.store.close()
        self._open()

    def versions(self, namespace: str = "u1") -> int:
        """Every version of every fact of the namespace, superseded ones included."""
        return int(self.store.db.execute("SELECT count(*) FROM facts WHERE namespace = ?", [namespace]).fetchone()[0])

    def rows(self, table: str) -> int:
        return int(self.store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


@pytest.fixture()
def world(tmp_path: Path, rules: RuleSet) -> Iterator[World]:
    opened = World(load_config().replace("service", data_dir=str(tmp_path)), rules, ManualClock(tick=1))
    yield opened
    opened.store.close()


def _one(facts: list[FactRecord]) -> FactRecord:
    assert len(facts) == 1, facts
    return facts[0]


@pytest.mark.parametrize("lang", sorted(BUDGETS))
def test_a_history_of_older_statements_stores_nothing_and_a_new_message_does(world: World, lang: str) -> None:
    first, second, third, fourth, value = BUDGETS[lang]
    for text in (first, second, third):
        world.facts.observe("u1", text)
    (budget,) = world.facts.list_facts("u1")
    assert (budget.key, budget.version, budget.pinned) == ("limit:budget", 3, True)
    history = [(0, first), (2, second), (4, third)]
    stated = world.facts.observe_conversation("u1", "t1", history)
    assert world.versions() == 3  # no v4 = 500, v5 = 800
    assert _one(world.facts.list_facts("u1")).id == budget.id
    assert stated == {0: frozenset(), 2: frozenset(), 4: frozenset({("global", "limit:budget")})}
    stated = world.facts.observe_conversation("u1", "t1", [*history, (6, fourth)])
    assert stated[6] == frozenset({("session:t1", "limit:budget")})
    session = _one(world.facts.list_facts("u1", scopes=("session:t1",)))
    assert (session.value, session.source) == (value, "conversation t1 messages[6]")
    assert _one(world.facts.list_facts("u1", scopes=("global",))).id == budget.id  # the namespace's stays 1000


@pytest.mark.parametrize("lang", sorted(BUDGETS))
def test_a_correction_that_leaves_its_subject_unsaid_is_shown_with_it(world: World, lang: str) -> None:
    """Pinned into every context, "Actually, make it 800 dollars." alone says nothing of what it is about."""
    first, second, *_ = BUDGETS[lang]
    world.facts.observe("u1", first)
    world.facts.observe("u1", second)
    budget = _one(world.facts.list_facts("u1"))
    assert (budget.pinned, budget.text) == (True, "budget: 800 " + ("USD" if lang == "en" else "CNY"))
    snippet = _one(world.facts.snippets("u1", "what may I spend?", ("global",)))
    assert snippet.text == budget.text
    named = {"en": "Actually, my budget is 900 dollars.", "zh": "算了，预算改成900元。"}[lang]
    world.facts.observe("u1", named)
    assert _one(world.facts.list_facts("u1")).text == "budget: 900 " + ("USD" if lang == "en" else "CNY")
    # A fact whose value names its subject keeps the user's words.
    fixed = {"en": "Actually, never use tabs in YAML.", "zh": "其实，以后不要用表格。"}[lang]
    world.facts.observe("u1", fixed)
    (rule,) = [f for f in world.facts.list_facts("u1") if f.kind == "prohibition"]
    assert rule.value in rule.text and rule.text in fixed


@pytest.mark.parametrize("lang", sorted(BUDGETS))
def test_a_new_message_with_an_old_value_in_other_words_is_stored(world: World, lang: str) -> None:
    first, second, *_ = BUDGETS[lang]
    again = {"en": "Actually, make it 500 dollars again.", "zh": "算了，改成500元"}[lang]
    world.facts.observe_conversation("u1", "t1", [(0, first), (2, second), (4, again)])
    history = world.facts.history("u1", _one(world.facts.list_facts("u1")).id)
    assert [(f.version, f.value.split()[0]) for f in history] == [(1, "500"), (2, "800"), (3, "500")]


@pytest.mark.parametrize("lang", sorted(BUDGETS))
def test_the_namespaces_words_said_over_the_tasks_own_fact_are_written_for_the_task(world: World, lang: str) -> None:
    first, second, *_ = BUDGETS[lang]
    world.facts.observe("u1", first)  # the namespace's budget: 500
    stated = world.facts.observe_conversation("u1", "t1", [(0, second), (2, first)])
    # The task's 800 is what it reads; saying 500 again in the namespace's words is new for the task.
    session = _one(world.facts.list_facts("u1", scopes=("session:t1",)))
    assert (session.value.split()[0], session.version) == ("500", 2)
    assert stated[2] == frozenset({("session:t1", "limit:budget")})


@pytest.mark.parametrize("lang", sorted(RULES))
def test_a_deleted_fact_does_not_come_back_until_a_new_message_says_it(config: Config, embedder: Embedder,
                                                                       lang: str) -> None:
    rule, reworded, _ = RULES[lang]
    history = [(0, rule)]
    with Memory(config, embedder=embedder) as memory:
        stated = memory.facts.observe_conversation("u1", "t1", history)
        ((scope, key),) = stated[0]
        fact = _one(memory.facts.list_facts("u1"))
        assert (fact.scope, fact.key) == (scope, key) == ("session:t1", fact.key)
        memory.facts.delete("u1", fact.id)
        assert memory.facts.observe_conversation("u1", "t1", history) == {0: frozenset()}
        assert memory.facts.observe_conversation("u1", "t2", history) == {0: frozenset()}  # read, then refused
        assert memory.facts.preview("u1", rule).outcomes[0].outcome == "stored"  # an explicit observe would
    with Memory(config, embedder=embedder) as memory:  # a restart
        assert memory.facts.observe_conversation("u1", "t1", history) == {0: frozenset()}
        assert memory.facts.observe_conversation("u1", "t3", [(5, rule)]) == {5: frozenset()}
        assert memory.facts.list_facts("u1") == []
        stated = memory.facts.observe_conversation("u1", "t1", [*history, (2, reworded)])
        assert stated[2] == frozenset({("session:t1", key)})
        assert _one(memory.facts.list_facts("u1")).version == 1


@pytest.mark.parametrize("lang", sorted(RULES))
def test_an_explicit_observe_is_obeyed_after_a_delete(world: World, lang: str) -> None:
    rule, *_ = RULES[lang]
    world.facts.observe_conversation("u1", "t1", [(0, rule)])
    world.facts.delete("u1", _one(world.facts.list_facts("u1")).id)
    assert len(world.facts.observe("u1", rule).stored) == 1
    assert _one(world.facts.list_facts("u1")).scope == "global"
    # now in force with those words: the message is known, not refused
    assert world.facts.observe_conversation("u1", "t2", [(0, rule)])[0] == {("global", _one(world.facts.list_facts(
        "u1")).key)}


@pytest.mark.parametrize("lang", sorted(RULES))
def test_facts_said_in_a_task_bind_that_task_only(world: World, lang: str) -> None:
    rule, _, other = RULES[lang]
    request_only = {"en": "For this request only, answer in under 100 words.", "zh": "这次回答不超过100字。"}[lang]
    stated = world.facts.observe_conversation("u1", "t1", [(1, rule), (3, request_only)],
                                              source_prefix="playground t1")
    assert world.facts.list_facts("u1", scopes=("global",)) == []
    kept = world.facts.list_facts("u1", scopes=("session:t1",))
    assert {f.key for f in kept} >= {"limit:words"} and len(kept) >= 2
    assert {f.source for f in kept} == {"playground t1 messages[1]", "playground t1 messages[3]"}
    assert ("session:t1", "limit:words") in stated[3]
    world.facts.observe_conversation("u1", "t2", [(1, other)])
    assert world.facts.list_facts("u1", scopes=("global", "session:t2"))[0].scope == "session:t2"
    assert len(world.facts.list_facts("u1", scopes=("global", "session:t2"))) == 1


@pytest.mark.parametrize("lang", sorted(RULES))
def test_observed_messages_are_not_read_again_after_a_restart(world: World, lang: str) -> None:
    rule, reworded, _ = RULES[lang]
    history = [(0, rule), (2, reworded)]
    first = world.facts.observe_conversation("u1", "t1", history)
    before = (world.versions(), world.rows("facts_observed"))
    assert before == (1, 2)
    world.restart()
    assert world.facts.observe_conversation("u1", "t1", history) == first
    assert (world.versions(), world.rows("facts_observed")) == before


@pytest.mark.parametrize("text", ["Please cite a source for every statistic you give me.", "所有图表都加上数据来源"])
def test_a_message_read_without_the_detector_is_not_read_again_with_it(world: World, embedder: Embedder,
                                                                        text: str) -> None:
    assert world.facts.observe_conversation("u1", "t1", [(0, text)]) == {0: frozenset()}  # the rules find nothing
    world.restart()
    world.facts = FactMemory(world.store, world.rules, get_counter(), world.config.facts, world.clock,
                             readers=model_readers(embedder, world.rules))
    assert world.facts.observe_conversation("u1", "t1", [(0, text)]) == {0: frozenset()}
    assert world.versions() == 0  # the message was read once; a restart does not read it again
    stated = world.facts.observe_conversation("u1", "t1", [(0, text), (4, text)])  # said again: a new message
    (fact,) = world.facts.list_facts("u1")
    assert stated == {0: frozenset(), 4: frozenset({("session:t1", fact.key)})}
    assert (fact.rule in MODEL_RULES, fact.pinned) == (True, False)


@pytest.mark.parametrize("text", ["Please cite a source for every statistic you give me.", "所有图表都加上数据来源"])
def test_a_reading_writes_nothing_and_observe_writes_what_it_read(world: World, embedder: Embedder,
                                                                  text: str) -> None:
    reader = FactMemory(world.store, world.rules, get_counter(), world.config.facts, world.clock,
                        readers=model_readers(embedder, world.rules))
    reading = reader.read_conversation("u1", "t1", [(0, text)])
    assert reading.stated == {0: frozenset()}  # not read before: it states nothing yet
    assert (world.versions(), world.rows("facts_observed")) == (0, 0)
    # world.facts has no detector, and the rules find nothing: the fact it writes is the one the reading read.
    stated = world.facts.observe_conversation("u1", "t1", [(0, text)], reading=reading)
    (fact,) = world.facts.list_facts("u1")
    assert stated == {0: frozenset({("session:t1", fact.key)})} and fact.rule in MODEL_RULES
    again = world.facts.read_conversation("u1", "t1", [(0, text)])
    assert (again.stated, again.clauses) == (stated, {})  # read before: what it stated, nothing to read


@pytest.mark.parametrize("lang", sorted(RULES))
@pytest.mark.parametrize("ending", ["end", "sub-task", "expiry", "expiry-on-read", "expired-and-reopened", "namespace"])
def test_session_facts_go_with_their_task(world: World, ending: str, lang: str) -> None:
    rule, _, other = RULES[lang]
    world.facts.observe("u1", other)  # a global fact: stays
    task = world.tasks.thread("u1", "seed", ["p0", "p1"])
    world.tasks.touch("u1", "kept")
    world.facts.observe_conversation("u1", "kept", [(0, rule)])  # another task's: stays
    doomed = task if ending != "sub-task" else "child"
    if ending == "sub-task":
        world.tasks.touch("u1", "child", parent_task_id=task)
    world.facts.observe_conversation("u1", doomed, [(0, rule), (1, MARKERS[lang])])
    world.tasks.set_tool_selection("u1", doomed, ["search"])
    assert len(world.facts.list_facts("u1", scopes=(f"session:{doomed}",))) == 2
    assert world.store.eraser.wait(30.0)  # the pass a new store owes at open: not the one the ending must owe
    assert _on_disk(world.store, NEEDLES[lang])  # the scan can see it
    if ending in ("end", "sub-task"):
        world.tasks.end_task("u1", task)
    elif ending.startswith("expir"):
        world.clock.advance(DAY - 10)
        world.tasks.touch("u1", "kept")
        world.clock.advance(20)
        if ending == "expiry":
            world.tasks.purge_expired()
        elif ending == "expiry-on-read":
            assert world.tasks.tool_selection("u1", task) == ()  # a read purges what of the task expired
        else:
            world.tasks.touch("u1", task)  # the same id starts over, without what the expired task held
    else:
        world.tasks.delete_namespace("u1")
    assert world.facts.list_facts("u1", scopes=(f"session:{doomed}",)) == []
    scopes = {f.scope for f in world.facts.list_facts("u1")}
    assert scopes == ({"global"} if ending == "namespace" else {"global", "session:kept"})
    left = {table: world.store.db.execute(f"SELECT DISTINCT task_id FROM {table}").fetchall()
            for table in ("facts_observed", "context_threads", "context_tools")}
    assert left == {"facts_observed": [] if ending == "namespace" else [("kept",)], "context_threads": [],
                    "context_tools": []}
    assert world.store.eraser.wait(30.0), "no erase pass after the delete"
    assert not _on_disk(world.store, NEEDLES[lang]), "the task's fact is still on disk"


@pytest.mark.parametrize("lang", sorted(MARKERS))
def test_a_tombstone_holds_no_text_of_the_deleted_fact(world: World, lang: str) -> None:
    world.facts.observe_conversation("u1", "t1", [(0, MARKERS[lang])])
    assert world.store.eraser.wait(30.0)  # the pass a new store owes at open: not the one the delete must owe
    assert _on_disk(world.store, NEEDLES[lang])  # the scan can see it
    world.facts.delete("u1", _one(world.facts.list_facts("u1")).id)
    assert world.rows("fact_tombstones") == 1
    assert world.store.eraser.wait(30.0)
    assert not _on_disk(world.store, NEEDLES[lang])
    world.restart()
    assert world.facts.observe_conversation("u1", "t9", [(0, MARKERS[lang])]) == {0: frozenset()}
    assert not _on_disk(world.store, NEEDLES[lang])


def test_a_namespace_delete_takes_its_tombstones_and_observed_messages(world: World) -> None:
    world.facts.observe_conversation("u1", "t1", [(0, "Never use tables.")])
    world.facts.observe_conversation("u2", "t1", [(0, "Never use tables.")])
    world.facts.delete("u1", _one(world.facts.list_facts("u1")).id)
    world.facts.delete_namespace("u1")
    assert world.store.db.execute("SELECT DISTINCT namespace FROM facts_observed").fetchall() == [("u2",)]
    assert world.rows("fact_tombstones") == 0
    assert world.facts.observe_conversation("u1", "t1", [(0, "Never use tables.")])[0] != frozenset()


@pytest.mark.parametrize("text", ["\x00\x00\x00", "", "   \n\t", "\x00 \x00\n", "\ud800 never use emojis",
                                  "？！。", "……"])
def test_a_message_of_nothing_is_ignored_not_an_error(world: World, text: str) -> None:
    stated = world.facts.observe_conversation("u1", "t1", [(0, text), (2, "Never use tables.")])
    assert stated[0] == frozenset() and len(stated[2]) == 1
    assert world.versions() == 1


@pytest.mark.parametrize("rule", ["Never use tables. ", "以后不要用表格。"])
def test_a_message_over_the_text_limit_is_not_read(world: World, rule: str) -> None:
    limits = dataclasses.replace(LimitsConfig(), max_text_chars=100)
    facts = FactMemory(world.store, world.rules, get_counter(), world.config.facts, world.clock, limits=limits)
    stated = facts.observe_conversation("u1", "t1", [(0, rule * 20), (1, rule)])
    assert stated[0] == frozenset() and len(stated[1]) == 1
    assert world.rows("facts_observed") == 1


@pytest.mark.parametrize(("task_id", "messages"), [
    ("t/1", [(0, "hi")]), ("", [(0, "hi")]), ("t1", "hi"), ("t1", [(True, "hi")]), ("t1", [(-1, "hi")]),
    ("t1", [(0, None)]), ("t1", [(0,)]), ("t1", [(0, "Never use tables."), ("1", "hi")]),
])
def test_bad_arguments_are_refused_before_anything_is_stored(world: World, task_id: str, messages: object) -> None:
    with pytest.raises(ValidationError):
        world.facts.observe_conversation("u1", task_id, messages)  # type: ignore[arg-type]
    assert world.versions() == 0 and world.rows("facts_observed") == 0


def _on_disk(store: Store, needle: str) -> bool:
    """Whether any file of the data folder holds the needle's UTF-8 bytes."""
    data = needle.encode("utf-8")
    return any(data in path.read_bytes() for path in store.root.rglob("*") if path.is_file())
