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
    ("I live in Toronto and work night shifts.", "profile:location", "Toronto"),
    ("I live in Bosnia and Herzegovina.", "profile:location", "Bosnia and Herzegovina"),
    ("We moved to Trinidad and Tobago last year.", "profile:location", "Trinidad and Tobago"),
    ("I live in Berlin, Germany.", "profile:location", "Berlin, Germany"),
])
def test_values_are_whole_and_places_stop_at_a_new_verb(text: str, key: str, value: str) -> None:
    assert [(f.key, f.value) for f in extract(text, RULES).facts] == [(key, value)]
