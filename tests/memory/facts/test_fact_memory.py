"""Fact memory over the real store: versions, supersede, pin/unpin, history, hard delete, recall snippets."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.config import load_config
from memory.embedding import MINILM
from memory.errors import NotFoundError, ValidationError
from memory.facts.memory import FactMemory
from memory.facts.rules import load_rules
from memory.store import Store, open_store
from memory.tokens import get_counter
from tests.conftest import ManualClock


@pytest.fixture()
def store(tmp_path: Path) -> Iterator[Store]:
    config = load_config().replace("service", data_dir=str(tmp_path))
    opened = open_store(config, MINILM)
    yield opened
    opened.close()


@pytest.fixture()
def facts(store: Store) -> FactMemory:
    clock = ManualClock(tick=60)  # a minute later at every reading: each version has its own time
    return FactMemory(store, load_rules(), get_counter(), load_config().facts, clock)


@pytest.mark.parametrize(
    ("first", "second", "value_part"),
    [
        ("My budget is under $500.", "Actually my budget is $800 now.", "800"),
        ("预算不超过500元。", "预算改成800元吧。", "800"),
    ],
)
def test_a_later_statement_supersedes_and_keeps_history(facts: FactMemory, first: str, second: str,
                                                        value_part: str) -> None:
    one = facts.observe("u1", first)
    assert len(one.stored) == 1
    two = facts.observe("u1", second)
    assert len(two.stored) == 1 and len(two.superseded) == 1
    assert two.superseded[0].id == one.stored[0].id
    current = facts.list_facts("u1")
    assert len(current) == 1
    assert value_part in current[0].value
    history = facts.history("u1", one.stored[0].id)
    assert [f.version for f in history] == [1, 2]
    assert history[0].superseded_by == history[1].id


def test_repeating_a_fact_changes_nothing(facts: FactMemory) -> None:
    facts.observe("u1", "Never use Python 2 syntax.")
    again = facts.observe("u1", "Never use Python 2 syntax.")
    assert again.stored == () and "already known" in again.ignored[0][1]
    assert len(facts.list_facts("u1")) == 1


def test_questions_store_nothing_and_say_why(facts: FactMemory) -> None:
    change = facts.observe("u1", "Should I avoid Python 2?")
    assert change.stored == ()
    assert change.ignored
    assert facts.list_facts("u1") == []


def test_constraints_are_pinned_automatically_preferences_not(facts: FactMemory) -> None:
    facts.observe("u1", "不要用Python 2的语法。")
    facts.observe("u1", "I prefer dark mode.")
    by_kind = {f.kind: f.pinned for f in facts.list_facts("u1")}
    assert by_kind.get("prohibition") is True
    assert by_kind.get("preference") is False


def test_pin_free_text_and_key_value(facts: FactMemory) -> None:
    text = facts.pin("u1", text="The staging database is read-only on Fridays.")
    assert text.stored[0].pinned
    kv = facts.pin("u1", key="Output Dir", value="/srv/out")
    assert kv.stored[0].key == "output dir" and kv.stored[0].pinned
    with pytest.raises(ValidationError):
        facts.pin("u1")
    with pytest.raises(ValidationError):
        facts.pin("u1", text="x", key="k", value="v")


def test_unpin_is_a_new_version(facts: FactMemory) -> None:
    first = facts.pin("u1", text="只分析A列和B列。").stored[0]
    unpinned = facts.set_pinned("u1", first.id, pinned=False)
    assert not unpinned.pinned and unpinned.version == first.version + 1
    assert [f.pinned for f in facts.history("u1", first.id)] == [True, False]
    assert facts.set_pinned("u1", unpinned.id, pinned=False) == unpinned


def test_hard_delete_removes_every_version(facts: FactMemory, store: Store) -> None:
    one = facts.observe("u1", "My budget is under $500.").stored[0]
    facts.observe("u1", "Actually my budget is $800 now.")
    assert facts.delete("u1", one.id) == 2
    assert store.db.execute("SELECT count(*) FROM facts").fetchone()[0] == 0
    with pytest.raises(NotFoundError):
        facts.history("u1", one.id)


def test_namespaces_are_separate(facts: FactMemory) -> None:
    one = facts.observe("alice", "Never use tabs.").stored[0]
    facts.observe("bob", "Never use tabs.")
    with pytest.raises(NotFoundError):
        facts.delete("bob", one.id)
    assert facts.delete_namespace("alice") == 1
    assert len(facts.list_facts("bob")) == 1


def test_scopes_keep_their_own_versions(facts: FactMemory) -> None:
    facts.observe("u1", "My budget is under $500.", scope="project:etl")
    facts.observe("u1", "My budget is under $900.")
    assert len(facts.list_facts("u1")) == 2
    assert len(facts.list_facts("u1", scopes=("project:etl",))) == 1
    with pytest.raises(ValidationError):
        facts.observe("u1", "x", scope="team")


def test_snippets_pinned_first_and_unpinned_by_mention(facts: FactMemory) -> None:
    facts.observe("u1", "Never use Python 2 syntax.")
    facts.observe("u1", "I prefer dark mode.")
    snippets = {s.metadata["kind"]: s for s in facts.snippets("u1", "which colour mode should the UI use?",
                                                              ("global",))}
    assert snippets["prohibition"].score == 1.0 and snippets["prohibition"].pinned
    assert snippets["preference"].score < 1.0
    unrelated = {s.metadata["kind"]: s for s in facts.snippets("u1", "weather in Paris", ("global",))}
    assert unrelated["preference"].score < snippets["preference"].score
    assert all(s.tokens == get_counter().count(s.text) for s in snippets.values())
