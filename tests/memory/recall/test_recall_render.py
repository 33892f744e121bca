"""Bullets, labels, freshness tags and the block layout."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memory.bullet import body_cost, clean
from memory.recall.render import SECTIONS, freshness, make_line, render
from memory.snippet import Snippet
from memory.tokens import TokenCounter

MakeSnippet = Callable[..., Snippet]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  Never use\n\tPython 2 syntax.  ", "Never use Python 2 syntax."),
        ("以后不要用\r\nPython 2的语法。", "以后不要用 Python 2的语法。"),
        ("\n \t ", ""),
    ],
)
def test_clean_collapses_whitespace(text: str, expected: str) -> None:
    assert clean(text) == expected


def test_lines_carry_tier_labels(snip: MakeSnippet, counter: TokenCounter) -> None:
    pinned = make_line(snip("fact", "f1", "Never use Python 2 syntax.", 1.0, pinned=True), counter)
    task = make_line(snip("task", "t1", "Write the loader.", metadata={"kind": "plan"}), counter)
    said = snip("experience", "e1", "我去年五月搬到了柏林。", updated_at="2023-06-01T10:00:00Z",
                metadata={"speaker": "Anna"})
    assert pinned.text == "- Never use Python 2 syntax."
    assert task.text == "- [plan] Write the loader."
    assert make_line(said, counter).text == "- (2023-06-01, Anna) 我去年五月搬到了柏林。"
    assert make_line(said, counter, low_confidence=True).text.startswith("- (2023-06-01, Anna) (low confidence) ")
    assert pinned.cost == counter.count(pinned.text + "\n")


def test_experience_without_date_or_speaker_has_no_label(snip: MakeSnippet, counter: TokenCounter) -> None:
    assert make_line(snip("experience", "e1", "Tea, not coffee."), counter).text == "- Tea, not coffee."


@pytest.mark.parametrize(
    ("updated_at", "now", "expected"),
    [
        ("2026-05-01T08:00:00Z", None, "updated 2026-05-01"),
        ("2026-05-01", datetime(2026, 5, 4, tzinfo=UTC), "updated 2026-05-01, 3 days ago"),
        ("2026-05-01T23:00:00Z", datetime(2026, 5, 1, 23, 30), "updated 2026-05-01, today"),
        ("2026-05-01T00:00:00Z", datetime(2026, 5, 2, tzinfo=UTC), "updated 2026-05-01, 1 day ago"),
        ("2025-01-01T00:00:00Z", datetime(2026, 1, 1, tzinfo=UTC), "updated 2025-01-01, 12 months ago"),
        ("2020-01-01T00:00:00+08:00", datetime(2026, 1, 1, tzinfo=UTC), "updated 2019-12-31, 6 years ago"),
        ("2027-01-01T00:00:00Z", datetime(2026, 1, 1, tzinfo=UTC), "updated 2027-01-01"),
        (None, None, None),
        ("next tuesday", None, None),
    ],
)
def test_freshness(snip: MakeSnippet, updated_at: str | None, now: datetime | None, expected: str | None) -> None:
    assert freshness(snip("fact", "f1", "x", updated_at=updated_at), now) == expected


def test_render_leaves_out_empty_sections(snip: MakeSnippet, counter: TokenCounter) -> None:
    line = make_line(snip("task", "t1", "Write the loader."), counter)
    blocks = [(SECTIONS["pinned"], []), (SECTIONS["task"], [line]), (SECTIONS["experience"], [])]
    assert render(blocks) == "## Task notes\n- Write the loader.\n"
    assert render([]) == ""


_PIECES = ["Anna", "moved", "to", "Berlin", "2023", "12345", "3.5", "e.g.", "don't", "it's", "C++", "(", ")", "[", "]",
           "-", "—", "…", "“quoted”", "'", "\"", "$", "%", "#", "@", "\t", "\n", "\n\n", "  ", "\u00a0", "\u200b",
           "é", "ß", "ﬁ", "😀", "١٢٣", "北京", "饺子", "预算不超过500元", "。", "，", "！", "「", "」", "；", "：",
           "python2", "x86_64", "http://a.b/c?d=e", "```", "->", "::", "'s", "'ll", "Ω"]


def _random_text(rng: random.Random) -> str:
    glue = ["", " ", "\n"]
    return "".join(rng.choice(_PIECES) + rng.choice(glue) for _ in range(rng.randint(1, 14)))


def test_a_stored_body_cost_gives_the_bullet_its_exact_count(counter: TokenCounter, seed: int) -> None:
    """cost(head + body) == count(head without its space) + body_cost(text), for any text and any head."""
    rng = random.Random(seed)
    checked = 0
    for _ in range(3000):
        text = _random_text(rng)
        if not clean(text):
            continue
        metadata = {"speaker": _random_text(rng)} if rng.random() < 0.5 else {}
        tier = rng.choice(["experience", "task", "fact"])
        if tier == "task":
            metadata = {"kind": rng.choice(["plan", "tool result", "", "注意"])}
        updated = rng.choice([None, "2023-05-07T10:00:00Z", "not a date"])
        base = Snippet(tier=tier, id="s", text=text, score=0.5, tokens=counter.count(text), updated_at=updated,
                       metadata=metadata, pinned=rng.random() < 0.1)
        stored = replace(base, body_tokens=body_cost(text, counter))
        for low in (False, True):
            counted, reused = make_line(base, counter, low_confidence=low), make_line(stored, counter, low_confidence=low)
            assert reused.text == counted.text
            assert reused.cost == counted.cost == counter.count(counted.text + "\n"), repr(counted.text)
            checked += 1
    assert checked > 5000
