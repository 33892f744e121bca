"""Every sentence of a message ends in one outcome, and a constraint found alone is found when joined to another."""

from __future__ import annotations

import re

import pytest

from memory.config import load_config
from memory.facts import guards
from memory.facts.extract import Clause, extract
from memory.facts.memory import FactMemory
from memory.facts.rules import RuleSet, load_rules
from memory.service import Memory
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock

_SENTENCE = re.compile(r"[^.!?。！？]+[.!?。！？]*")


@pytest.fixture()
def facts(store: Store) -> FactMemory:
    return FactMemory(store, load_rules(), get_counter(), load_config().facts, ManualClock(tick=60))


def triples(clause: Clause) -> list[tuple[str, str, str]]:
    return [(f.kind, f.key, f.value) for f in clause.facts]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


@pytest.mark.parametrize(
    ("message", "stored"),
    [
        ("The weather is nice today. Never use emojis.", {"Never use emojis."}),
        ("Hi there! The weather is nice today. Never use emojis. Can you help me? I live in Oslo.",
         {"Never use emojis.", "I live in Oslo."}),
        ("今天天气很好。以后不要用表情符号。我刚下班。回答要简洁。", {"以后不要用表情符号。", "回答要简洁。"}),
        ("Thanks! 用中文回答。The weather is nice. 预算是多少？Keep it brief.", {"用中文回答。", "Keep it brief."}),
        ("Ok. Thanks. Lovely.", set()),
    ],
    ids=["reproduction", "five-en", "four-zh", "mixed", "nothing"],
)
def test_one_outcome_per_sentence_and_ignored_texts_are_the_sentences(
    rules: RuleSet, message: str, stored: set[str]
) -> None:
    clauses = extract(message, rules).clauses
    assert [c.text for c in clauses] == sentences(message)
    assert {c.text for c in clauses if c.facts} == stored
    ignored = extract(message, rules).ignored
    assert [i.text for i in ignored] == [s for s in sentences(message) if s not in stored]
    assert all(i.reason for i in ignored)


@pytest.mark.parametrize(
    ("message", "reasons"),
    [
        ("The weather is nice today. Should I avoid Python 2? Never use tabs. Never use tabs!",
         [guards.NO_FACT, guards.QUESTION, None, guards.REPEATED]),
        ("今天天气很好。预算是多少？不要用递归。", [guards.NO_FACT, guards.QUESTION, None]),
        ('He said "never use globals". Imagine the budget were $500.', [guards.QUOTED, guards.HYPOTHETICAL]),
        ('"Never use globals." Reply in English.', [guards.QUOTED, None]),
        ("Look at this:\n```\nx = 1\n```\nNever use tabs.", [guards.NO_FACT, guards.CODE, None]),
    ],
    ids=["en", "zh", "quoted-and-hypothetical", "quote-alone", "code"],
)
def test_each_ignored_sentence_says_why(rules: RuleSet, message: str, reasons: list[str | None]) -> None:
    assert [c.reason for c in extract(message, rules).clauses] == reasons


# Clauses with a fact alone, clauses without one, and the joins between them.
_EN_FACTS = ["I prefer answers in bullet points", "I live in Berlin", "you must reply in English",
             "my deadline is Friday"]
_EN_PLAIN = ["I had a long day", "the weather is nice today", "we had a long week"]
_ZH_FACTS = ["我喜欢简洁的回答", "我的预算是500元", "你不要用表情符号", "请用中文回答"]
_ZH_PLAIN = ["我刚下班", "我今天很累"]


def _pairs(found: list[str], plain: list[str], joins: list[str], end: str) -> list[tuple[str, str, str, bool]]:
    return [(f, p, join, fact_first) for f in found for p in plain for join in joins for fact_first in (True, False)
            if fact_first or not join.strip(" ,，").startswith(("以及", "还有"))] + [(f, "", "", True) for f in found]


@pytest.mark.parametrize(
    ("fact", "plain", "join", "fact_first"),
    _pairs(_EN_FACTS, _EN_PLAIN, [" and ", ", and ", " but "], ".")
    + _pairs(_ZH_FACTS, _ZH_PLAIN, ["并且", "而且", "以及", "还有", "，", "，并且"], "。"),
)
def test_a_fact_found_alone_is_found_when_joined_to_a_clause_without_one(
    rules: RuleSet, fact: str, plain: str, join: str, fact_first: bool
) -> None:
    end = "。" if re.search(r"[\u4e00-\u9fff]", fact) else "."
    alone = extract(fact + end, rules).clauses
    assert len(alone) == 1 and alone[0].facts, f"{fact!r} alone should yield a fact"
    if not plain:
        return
    message = (fact + join + plain if fact_first else plain + join + fact) + end
    clauses = extract(message, rules).clauses
    assert [triples(c) for c in clauses if c.facts] == [triples(alone[0])], message
    (ignored,) = [c for c in clauses if not c.facts]
    assert ignored.text.rstrip(".。") == plain and ignored.reason == guards.NO_FACT
    assert len(clauses) == 2


@pytest.mark.parametrize(
    ("message", "outcomes"),
    [
        ("Never use emojis, the weather is nice, and reply in English.",
         [("Never use emojis", True), ("the weather is nice", False), ("and reply in English.", True)]),
        ("Never use emojis and the weather is nice and I prefer answers in bullet points.",
         [("Never use emojis", True), ("the weather is nice", False), ("I prefer answers in bullet points.", True)]),
        ("用中文回答，今天天气不错，不要用表情。", [("用中文回答", True), ("今天天气不错", False), ("不要用表情。", True)]),
        ("我住在上海，我刚下班以及我喜欢简洁的回答。",
         [("我住在上海", True), ("我刚下班", False), ("我喜欢简洁的回答。", True)]),
        ("Never use emojis 并且我刚下班，还有我喜欢简洁的回答。",
         [("Never use emojis", True), ("我刚下班", False), ("我喜欢简洁的回答。", True)]),
    ],
    ids=["en-commas", "en-ands", "zh-commas", "zh-yiji", "mixed"],
)
def test_a_clause_without_a_fact_between_two_with_facts(
    rules: RuleSet, message: str, outcomes: list[tuple[str, bool]]
) -> None:
    assert [(c.text, bool(c.facts)) for c in extract(message, rules).clauses] == outcomes


@pytest.mark.parametrize(
    ("message", "value"),
    [
        ("Don't use tabs and spaces.", "tabs and spaces"),
        ("Never mix tabs and spaces.", "mix tabs and spaces"),
        ("不要用emoji以及感叹号。", "emoji以及感叹号"),
    ],
)
def test_a_conjunction_without_a_new_subject_still_joins_one_object(rules: RuleSet, message: str, value: str) -> None:
    (clause,) = extract(message, rules).clauses
    assert [f.value for f in clause.facts] == [value]


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("My budget is under $500. The weather is nice.", "Actually my budget is $800 now. Never use tabs.",
         "Never use tabs."),
        ("预算不超过500元。今天天气很好。", "预算改成800元吧。不要用递归。", "不要用递归。"),
    ],
    ids=["en", "zh"],
)
def test_stored_superseded_and_already_known_outcomes(facts: FactMemory, first: str, second: str,
                                                      same: str) -> None:
    one = facts.observe("u1", first)
    assert [o.outcome for o in one.outcomes] == ["stored", "ignored"]
    assert one.outcomes[0].facts == (one.stored[0].id,)
    assert one.ignored == ((sentences(first)[1], guards.NO_FACT),)
    two = facts.observe("u1", second)
    assert [(o.text, o.outcome) for o in two.outcomes] == [(sentences(second)[0], "superseded"), (same, "stored")]
    assert two.outcomes[0].supersedes == (one.stored[0].id,) == tuple(r.id for r in two.superseded)
    assert two.ignored == ()
    three = facts.observe("u1", same + " " + sentences(first)[1])
    (known, plain) = three.outcomes
    assert known.outcome == "ignored" and known.reason is not None
    assert known.reason.startswith("already known: same value as ") and known.facts == (two.stored[1].id,)
    assert plain.outcome == "ignored" and plain.reason == guards.NO_FACT
    assert three.stored == () and len(three.ignored) == 2


@pytest.mark.parametrize("text", ["???", "。"])
def test_a_message_without_words_is_one_ignored_outcome(facts: FactMemory, text: str) -> None:
    change = facts.observe("u1", text)
    assert [(o.text, o.outcome, o.reason) for o in change.outcomes] == [(text, "ignored", guards.NO_FACT)]


def test_nul_characters_never_reach_a_stored_fact_through_the_library(memory: Memory) -> None:
    change = memory.facts.observe("nul", "Never use\x00 emojis. 预算不超过\x00500元。")
    assert change.stored and all("\x00" not in f.value and "\x00" not in f.text for f in change.stored)
    pinned = memory.facts.pin("nul", text="Always\x00 answer in English.")
    assert all("\x00" not in f.text for f in pinned.stored)
    assert "\x00" not in memory.recall("nul", "emojis budget English", 300).rendered
