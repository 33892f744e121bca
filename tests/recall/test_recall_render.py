"""Bullets, labels, freshness tags and the block layout."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memory.recall.model import Snippet
from memory.recall.render import SECTIONS, clean, freshness, make_line, render
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
