"""Exact and near duplicates, in English and Chinese."""

from __future__ import annotations

import random
import re
import string
import unicodedata
from collections.abc import Callable

import pytest

from memory.recall.dedupe import dedupe, features, normalise, overlap
from memory.snippet import Snippet

MakeSnippet = Callable[..., Snippet]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Never use Python 2 syntax.", "never use  PYTHON 2 syntax!"),
        ("预算不超过500元。", "预算不超过５００元"),  # full-width digits are the same number
    ],
)
def test_normalise_ignores_case_punctuation_and_width(a: str, b: str) -> None:
    assert normalise(a) == normalise(b)


def test_normalise_takes_the_same_words_on_every_path(seed: int) -> None:
    # Pure ASCII text takes a translate-table path; it must give what the general NFKC + casefold + \w+ rule
    # gives (the rule every other text goes through), punctuation, digits and underscores included.
    def rule(text: str) -> str:
        return " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold()))

    rng = random.Random(seed)
    alphabet = string.printable + "ÀéßİΣ中文ＡＢ１２　—…"
    texts = ["", "  ", "snake_case and CamelCase42!", "tab\tnew\nline", "a-b.c/d", "__", "x" * 50]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(2000)]
    for text in texts:
        assert normalise(text) == rule(text), repr(text)
        assert features(normalise(text)) >= frozenset(w for w in rule(text).split() if w.isascii()), repr(text)


def test_features_split_chinese_into_bigrams() -> None:
    assert features(normalise("不要用Python 2")) == {"不要", "要用", "python", "2"}
    assert features(normalise("I moved to Berlin")) == {"i", "moved", "to", "berlin"}
    assert overlap(frozenset(), frozenset({"a"})) == 0.0


def test_keeps_higher_score_then_newer(snip: MakeSnippet) -> None:
    kept, dropped = dedupe(
        [
            snip("experience", "e1", "I moved to Berlin last May.", 0.4),
            snip("experience", "e2", "i moved to berlin last may", 0.9),
            snip("experience", "e3", "She prefers tea.", 0.5, updated_at="2024-01-01T00:00:00Z"),
            snip("experience", "e4", "She prefers tea!", 0.5, updated_at="2025-01-01T00:00:00Z"),
        ]
    )
    assert sorted(s.id for s in kept) == ["e2", "e4"] and dropped == 2


def test_near_duplicates_by_word_overlap(snip: MakeSnippet) -> None:
    long = "the nightly loader reads csv files from the inbox and validates every row against the schema"
    kept, dropped = dedupe(
        [
            snip("experience", "e1", long, 0.8),
            snip("experience", "e2", long + " today", 0.7),
            snip("experience", "e3", "the loader writes parquet files", 0.6),
            snip("experience", "e4", "我们的加载器每天晚上从收件箱读取CSV文件并校验每一行", 0.6),
            snip("experience", "e5", "我们的加载器每天晚上从收件箱读取CSV文件并校验每一行数据", 0.5),
        ]
    )
    assert [s.id for s in kept] == ["e1", "e3", "e4"] and dropped == 2


def test_pinned_wins_and_repeated_ids_count_once(snip: MakeSnippet) -> None:
    kept, dropped = dedupe(
        [
            snip("experience", "e1", "以后不要用Python 2的语法。", 0.9),
            snip("fact", "f1", "以后不要用Python 2的语法", 0.3, pinned=True),
            snip("task", "t1", "Write the loader.", 0.5),
            snip("task", "t1", "Write the loader, then the parser.", 0.5),
        ]
    )
    assert [s.id for s in kept] == ["f1", "t1"] and dropped == 2
