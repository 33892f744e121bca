"""Values whole and places alone (issue 20): "Friday the 14th" is not "Friday", and "I live in Toronto and work
night shifts" gives the place, not "Toronto and work night shifts"; place names with "and" stay whole."""

from __future__ import annotations

import pytest

from memory.facts.extract import extract
from memory.facts.rules import load_rules

RULES = load_rules()


@pytest.mark.parametrize(("text", "key", "value"), [
    ("My deadline is Friday the 14th.", "limit:deadline", "Friday the 14th"),
    ("The deadline is Friday, March 14.", "limit:deadline", "Friday, March 14"),
    ("My deadline is Friday.", "limit:deadline", "Friday"),
    ("Deadline: March 5th.", "limit:deadline", "March 5"),
    ("I live in Bosnia and Herzegovina.", "profile:location", "Bosnia and Herzegovina"),
    ("We moved to Trinidad and Tobago last year.", "profile:location", "Trinidad and Tobago"),
    ("I live in Berlin, Germany.", "profile:location", "Berlin, Germany"),
])
def test_values_are_whole_and_places_stop_at_a_new_verb(text: str, key: str, value: str) -> None:
    assert [(f.key, f.value) for f in extract(text, RULES).facts] == [(key, value)]


@pytest.mark.parametrize(("text", "facts"), [
    ("I live in Toronto and work night shifts.", [("profile:location", "Toronto"), ("profile:schedule", "night shifts")]),
    ("我住在深圳，平时上夜班。", [("profile:location", "深圳"), ("profile:schedule", "夜班")]),
    ("I'm allergic to peanuts and shellfish.", [("prohibition:peanuts", "peanuts"), ("prohibition:shellfish", "shellfish")]),
    ("我对花生和芒果过敏。", [("prohibition:花生", "花生"), ("prohibition:芒果", "芒果")]),
    ("We deploy on Kubernetes 1.29 and Python 3.12 only.",
     [("requirement:kubernetes", "Kubernetes 1.29"), ("requirement:python", "Python 3.12")]),
    ("Write a 300-word summary of this article without commas.", [("limit:words", "300 words"), ("prohibition:commas", "commas")]),
])
def test_a_conjunction_or_list_gives_one_fact_each(text: str, facts: list[tuple[str, str]]) -> None:
    assert [(f.key, f.value) for f in extract(text, RULES).facts] == facts


@pytest.mark.parametrize(("text", "facts"), [
    ("I'm allergic to peanuts.", [("prohibition:peanuts", "peanuts")]),
    ("我对海鲜过敏。", [("prohibition:海鲜", "海鲜")]),
    ("我是素食者。", [("requirement:diet", "vegetarian")]),
    ("Use metric units, not imperial.", [("format:units", "metric")]),
    ("Format all dates as YYYY-MM-DD.", [("format:date", "YYYY-MM-DD")]),
    ("Could you not use bullet points?", [("prohibition:bullet points", "bullet points")]),
    ("It would be great if you used British spelling.", [("format:spelling", "British")]),
    ("The max I can spend per month is $40.", [("limit:budget", "40 USD")]),
    ("请一直用英文回复我，我在练习英语。", [("format:language", "English")]),
    ("回答的时候请先给结论再解释。", [("format:order", "conclusion first")]),
    ("我们公司用的是 Java 17，别用更新的语法。",
     [("requirement:java", "Java 17"), ("prohibition:比java 17更新语法", "比 Java 17 更新的语法")]),
])
def test_the_everyday_sentences_a_new_user_tried(text: str, facts: list[tuple[str, str]]) -> None:
    """The sentences issue 20 opened with, each of which found nothing or the wrong thing before it."""
    assert [(f.key, f.value) for f in extract(text, RULES).facts] == facts
