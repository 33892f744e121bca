"""Budgets for different things are different facts; a correction that names no thing corrects the budget stated
last (issue 20: "my rent budget is $800" used to supersede "预算不超过500元"), in English and Chinese, over the
real store."""

from __future__ import annotations

import pytest

from memory.facts.extract import extract
from memory.facts.memory import FactMemory
from memory.facts.qualify import budget_subject
from memory.facts.rules import load_rules
from tests.memory.facts.test_fact_memory import facts, store  # noqa: F401 - fixtures

RULES = load_rules()


@pytest.mark.parametrize(("text", "key"), [
    ("My maximum monthly rent budget is $800.", "limit:budget for rent"),
    ("My wedding budget is 20k.", "limit:budget for wedding"),
    ("My budget is around $500-$700 for flights and accommodations.", "limit:budget for flight and accommodation"),
    ("I can go to $300 for the hotel.", "limit:budget for hotel"),
    ("My budget is under $500.", "limit:budget"),
    ("I can spend at most 300 dollars on this.", "limit:budget"),
    ("The max I can spend per month is $40.", "limit:budget"),
    ("我这次旅行的预算是3000元。", "limit:budget for旅行"),
    ("月租预算不超过4000元。", "limit:budget for月租"),
    ("顺便说一下，预算不超过500元。", "limit:budget"),
    ("每月预算两千。", "limit:budget"),
])
def test_a_budget_is_keyed_by_what_it_is_for(text: str, key: str) -> None:
    found = [f for f in extract(text, RULES).facts if f.kind == "limit"]
    assert [f.key for f in found] == [key], found


@pytest.mark.parametrize("clause", ["my total budget", "the budget for it", "budget for now", "我的预算", "总预算"])
def test_words_that_name_no_thing_leave_the_plain_budget(clause: str) -> None:
    assert budget_subject(clause) == "budget"


def test_budgets_for_different_things_do_not_replace_each_other(facts: FactMemory) -> None:  # noqa: F811
    facts.observe("ns", "顺便说一下，预算不超过500元。")
    facts.observe("ns", "My maximum monthly rent budget is $800.")
    facts.observe("ns", "My budget is around $500-$700 for flights and accommodations.")
    held = {f.key: f.value for f in facts.list_facts("ns")}
    assert held == {"limit:budget": "500 CNY", "limit:budget for rent": "800 USD",
                    "limit:budget for flight and accommodation": "500-700 USD"}


@pytest.mark.parametrize(("said", "correction", "key", "value"), [
    (["My budget for the trip is 1200 dollars."], "Actually, scratch that, I can go up to 1500 dollars now.",
     "limit:budget for trip", "1500 USD"),
    (["My budget is 1200 dollars."], "Actually, make that 1500 dollars.", "limit:budget", "1500 USD"),
    (["预算不超过500元。", "月租预算不超过4000元。"], "算了，改成4500元吧。", "limit:budget for月租", "4500 CNY"),
])
def test_a_correction_naming_no_thing_supersedes_the_budget_stated_last(
        facts: FactMemory, said: list[str], correction: str, key: str, value: str) -> None:  # noqa: F811
    for text in said:
        facts.observe("ns", text)
    before = {f.key: f for f in facts.list_facts("ns")}
    change = facts.observe("ns", correction)
    assert [(r.key, r.value) for r in change.stored] == [(key, value)]
    assert [r.id for r in change.superseded] == [before[key].id]
    others = {k: f.value for k, f in before.items() if k != key}
    assert {f.key: f.value for f in facts.list_facts("ns") if f.key != key} == others


def test_a_plain_budget_without_a_correction_does_not_take_over_a_named_one(facts: FactMemory) -> None:  # noqa: F811
    facts.observe("ns", "My maximum monthly rent budget is $800.")
    facts.observe("ns", "My budget is under $500.")
    assert {f.key: f.value for f in facts.list_facts("ns")} == {"limit:budget for rent": "800 USD",
                                                          "limit:budget": "500 USD"}


def test_a_budget_for_one_thing_is_not_a_standing_constraint(facts: FactMemory) -> None:  # noqa: F811
    """A plain budget is pinned like every limit; one for a named thing is kept and recalled when relevant, not
    put in every context (a long conversation states many)."""
    facts.observe("ns", "My budget is under $500.")
    facts.observe("ns", "My maximum monthly rent budget is $800.")
    pinned = {f.key: f.pinned for f in facts.list_facts("ns")}
    assert pinned == {"limit:budget": True, "limit:budget for rent": False}


@pytest.mark.parametrize(("text", "value"), [
    ("My budget is around $300-$400.", "300-400 USD"),
    ("My budget is 300-400 dollars.", "300-400 USD"),
    ("预算300到500元。", "300-500 CNY"),
    ("My budget is under $500.", "500 USD"),
])
def test_a_budget_range_keeps_both_ends(text: str, value: str) -> None:
    (fact,) = extract(text, RULES).facts
    assert (fact.key, fact.value) == ("limit:budget", value)


@pytest.mark.parametrize("text", ["My headphones budget is $300.", "Raise the headphone budget to $450.",
                                  "I can spend $300 on the headphones."])
def test_a_thing_is_one_key_before_or_after_the_money(text: str) -> None:
    assert [f.key for f in extract(text, RULES).facts] == ["limit:budget for headphone"]
