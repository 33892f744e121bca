"""A standing constraint is stored and pinned; one said for this request only is returned, kept only for a task."""

from __future__ import annotations

import pytest

from memory.config import load_config
from memory.facts.extract import extract
from memory.facts.memory import FactMemory
from memory.facts.rules import RuleSet
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock


@pytest.fixture()
def facts(store: Store, rules: RuleSet) -> FactMemory:
    return FactMemory(store, rules, get_counter(), load_config().facts, ManualClock(tick=60))


@pytest.mark.parametrize(
    ("text", "lifetime"),
    [
        ("Never use tables.", "standing"),
        ("From now on, keep answers under 200 words.", "standing"),
        ("For this task: no tables. Keep it under 200 words.", "request"),
        ("Give me three examples, under 100 words.", "request"),
        ("Write me a short poem, no more than 4 sentences.", "request"),
        ("以后都不要用表格。", "standing"),
        ("这次不要用表格，最多三句话。", "request"),
        ("帮我写一段摘要，不超过100字。", "request"),
    ],
)
def test_lifetime_of_each_constraint(rules: RuleSet, text: str, lifetime: str) -> None:
    found = extract(text, rules).facts
    assert found, text
    assert {f.lifetime for f in found} == {lifetime}, [(f.key, f.lifetime) for f in found]


@pytest.mark.parametrize("text", ["I live in Berlin, this time for good.", "这次我搬到了上海，我住在上海。"])
def test_who_the_user_is_always_stands(rules: RuleSet, text: str) -> None:
    found = [f for f in extract(text, rules).facts if f.kind == "profile"]
    assert found and all(f.lifetime == "standing" for f in found)


@pytest.mark.parametrize("text", ["For this task, don't use tables.", "这次不要用表格。"])
def test_a_request_only_constraint_is_returned_not_stored(facts: FactMemory, text: str) -> None:
    change = facts.observe("u1", text)
    assert not change.stored and not facts.list_facts("u1")
    assert [f.kind for f in change.this_turn] == ["prohibition"]
    assert [o.outcome for o in change.outcomes] == ["request"]
    assert "task_id" in (change.outcomes[0].reason or "")


@pytest.mark.parametrize("text", ["For this task, don't use tables.", "这次不要用表格。"])
def test_with_a_task_it_is_kept_for_that_task_only(facts: FactMemory, text: str) -> None:
    change = facts.observe("u1", text, task_id="t7")
    assert [r.scope for r in change.stored] == ["session:t7"]
    assert change.stored[0].pinned  # it binds every answer of the task
    assert facts.list_facts("u1", scopes=("global",)) == []
    assert [f.key for f in change.this_turn] == [change.stored[0].key]


def test_a_standing_rule_in_the_same_message_is_stored_globally(facts: FactMemory) -> None:
    change = facts.observe("u1", "Never use emojis. Write me a haiku about rain without commas, in 3 lines max.",
                           task_id="t1")
    scopes = {r.key: r.scope for r in change.stored}
    assert scopes["prohibition:emojis"] == "global"
    assert all(scope == "session:t1" for key, scope in scopes.items() if key != "prohibition:emojis")
