"""FactMemory.preview: observe's answer for a message, computed and rolled back, so nothing is stored."""

from __future__ import annotations

import pytest

from memory.errors import ValidationError
from memory.facts.records import FactChange
from memory.service import Memory


def _shape(change: FactChange) -> list[tuple[str, str, str | None]]:
    return [(o.text, o.outcome, o.reason) for o in change.outcomes]


def _stored(change: FactChange) -> list[tuple[str, str, bool]]:
    return [(f.key, f.value, f.pinned) for f in change.stored]


@pytest.mark.parametrize("message", [
    "Never use Python 2 syntax. The weather is nice today.",
    "以后不要用Python 2的语法，预算不超过500元。",
    "I prefer dark roast coffee. Can you help me?",
])
def test_preview_answers_what_observe_then_stores(memory: Memory, message: str) -> None:
    previewed = memory.facts.preview("u1", message)
    assert memory.facts.list_facts("u1") == []
    assert memory.store.db.execute("SELECT count(*) FROM facts").fetchone()[0] == 0
    observed = memory.facts.observe("u1", message)
    assert _shape(previewed) == _shape(observed)
    assert _stored(previewed) == _stored(observed)
    assert previewed.ignored == observed.ignored


def test_preview_sees_known_and_superseded_facts_without_changing_them(memory: Memory) -> None:
    memory.facts.observe("u1", "以后不要用Python 2的语法，预算不超过500元。")
    before = memory.facts.list_facts("u1")
    change = memory.facts.preview("u1", "以后不要用Python 2的语法。预算不超过800元。")
    outcomes = {o.text: (o.outcome, o.reason or "") for o in change.outcomes}
    assert outcomes["以后不要用Python 2的语法。"][0] == "ignored"
    assert outcomes["以后不要用Python 2的语法。"][1].startswith("already known: same value as")
    assert outcomes["预算不超过800元。"][0] == "superseded"
    assert [(f.key, f.value) for f in change.superseded] == [("limit:budget", "500 CNY")]
    assert memory.facts.list_facts("u1") == before
    assert [f.value for f in memory.facts.list_facts("u1") if f.key == "limit:budget"] == ["500 CNY"]


def test_a_request_only_constraint_is_previewed_for_the_task_but_not_kept(memory: Memory) -> None:
    change = memory.facts.preview("u1", "Write a 300-word summary without commas.", task_id="t-1")
    assert change.this_turn and all(f.scope == "session:t-1" for f in change.stored)
    assert memory.facts.list_facts("u1") == []


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"text": "   "}, "text must be a non-empty string"),
    ({"text": "Never use tabs.", "scope": "everywhere"}, "scope must be"),
    ({"text": "Never use tabs.", "task_id": "a b"}, "task_id must be"),
])
def test_preview_checks_its_input_as_observe_does(memory: Memory, kwargs: dict[str, str], match: str) -> None:
    text = kwargs.pop("text")
    with pytest.raises(ValidationError, match=match):
        memory.facts.preview("u1", text, **kwargs)


def test_the_store_takes_writes_after_a_preview(memory: Memory) -> None:
    memory.facts.preview("u1", "Never use Python 2 syntax.")
    stored = memory.facts.observe("u1", "Never use Python 2 syntax.").stored
    assert [f.version for f in stored] == [1]
    assert [f.id for f in memory.facts.list_facts("u1")] == [stored[0].id]
