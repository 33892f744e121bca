"""identifiers() in bounded time on hostile input (long runs that made its patterns read a run again from every
start in it), finding exactly what it finds on ordinary text."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.context.identifiers import identifiers, values
from tests.memory.context.test_identifiers import CASES

SIZE = 100_000
HOSTILE = {
    "digits": "1" * SIZE,
    "a-": "a-" * (SIZE // 2),
    "a/": "a/" * (SIZE // 2),
    "x@": "x@" * (SIZE // 2),
    "1,": "1," * (SIZE // 2),
    "a.": "a." * (SIZE // 2),
    "a--1 run": "a--" * (SIZE // 3) + "1",
    "path chain": "a/b" * (SIZE // 3) + ".c@",
    "local part": "a.b-c+" * (SIZE // 6) + "@",
    "Chinese and digits": "订单号12345数据2026年" * (SIZE // 14),
    "base64": "QmFzZTY0/+aGVsbG8=" * (SIZE // 18),
}
# A hang detector, not a speed target: patterns that read a run again from every start in it never finish these.
BOUND_S = 2.0
# A run of identifier characters long enough that the bounded search is taken, and that holds no identifier.
LONG_RUN = "\n" + "~" * 120


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_input_finishes_in_bounded_time(name: str) -> None:
    started = time.perf_counter()
    identifiers(HOSTILE[name])
    took = time.perf_counter() - started
    print(f"{name}: {len(HOSTILE[name])} characters in {took:.3f} s")
    assert took < BOUND_S


@pytest.mark.parametrize("name", list(HOSTILE))
def test_values_of_hostile_input_finish_in_bounded_time(name: str) -> None:
    started = time.perf_counter()
    values(HOSTILE[name])
    assert time.perf_counter() - started < BOUND_S


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_the_bounded_search_finds_the_same_as_the_patterns(text: str, expected: set[tuple[str, str]]) -> None:
    assert identifiers(text + LONG_RUN) == identifiers(text)
    assert {(i.kind, i.text) for i in identifiers(text + LONG_RUN)} == expected


@pytest.mark.parametrize("text", [
    "mail a.b@c.de or x+y@mail.example.org, not a@b",
    "a@b.c+d@e.f and ..lead@x.io, x@y@b.co",
    "logs at /var/log/app.log, ./run.sh, ~/x/y and a/b/c.txt or C:\\Users\\li\\a.txt",
    "a-b--1 a-b-1中 foo_bar__2 t-42/r3 JIRA-1183 #77 AB-12x",
    "1,000,000元 $1,200.50 340 ms 12,34,USD 5 seconds 3.5% 7 km",
])
def test_the_bounded_search_agrees_on_edge_cases(text: str) -> None:
    assert identifiers(text + LONG_RUN) == identifiers(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(
    [*"a1 /.-_:@#$,+~`\"元年月x\\AZf\n", "http://", "C:\\", "ms", "@b.c", "a-", "-1", "v1."]), max_size=40))
def test_the_bounded_search_agrees_on_any_short_text(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert identifiers(text + LONG_RUN) == identifiers(text)
