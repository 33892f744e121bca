"""Sentence splitting for English, Chinese and mixed text."""

from __future__ import annotations

import itertools
import re

import pytest

from memory.text.sentences import sentence_spans, split_sentences


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "The cat sat. The dog ran! Did it? Yes; it did.",
            ["The cat sat.", "The dog ran!", "Did it?", "Yes;", "it did."],
        ),
        (
            "Dr. Smith paid 3.14 dollars, e.g. at 5 p.m. today. Then he left.",
            ["Dr. Smith paid 3.14 dollars, e.g. at 5 p.m. today.", "Then he left."],
        ),
        (
            "See https://example.com/a.b?q=1 for details. It works.",
            ["See https://example.com/a.b?q=1 for details.", "It works."],
        ),
        (
            "Wait... what happened? I waited... Then it came.",
            ["Wait... what happened?", "I waited...", "Then it came."],
        ),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        (
            "J. R. R. Tolkien wrote it. See Fig. 3 and No. 5 below. I said no. Fine.",
            ["J. R. R. Tolkien wrote it.", "See Fig. 3 and No. 5 below.", "I said no.", "Fine."],
        ),
        (
            "1. Install the tool. 2. Run it. I counted to 3. Then stopped.",
            ["1. Install the tool.", "2. Run it.", "I counted to 3.", "Then stopped."],
        ),
        (
            "Smith et al. found it, i.e. the effect. Version 2.0.1 is out.",
            ["Smith et al. found it, i.e. the effect.", "Version 2.0.1 is out."],
        ),
    ],
)
def test_english(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("今天天气很好。我们去公园吧！你觉得呢？", ["今天天气很好。", "我们去公园吧！", "你觉得呢？"]),
        ("他说：“我不去。”然后走了。", ["他说：“我不去。”", "然后走了。"]),
        ("好的；走吧……真的吗？！当然。", ["好的；", "走吧……", "真的吗？！", "当然。"]),
        ("圆周率约为3.14，网址是example.com。下一句。", ["圆周率约为3.14，网址是example.com。", "下一句。"]),
    ],
)
def test_chinese(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_mixed_languages() -> None:
    text = "我在用Python 3.12写代码。It works well, e.g. on Linux. 这很好!然后呢?"
    assert split_sentences(text) == ["我在用Python 3.12写代码。", "It works well, e.g. on Linux.", "这很好!", "然后呢?"]


def test_blank_line_ends_a_sentence_without_punctuation() -> None:
    assert split_sentences("A heading without a stop\n\nBody text here,\nwrapped over lines\n\nLast") == [
        "A heading without a stop",
        "Body text here,\nwrapped over lines",
        "Last",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "  Leading space. Trailing space.  \n\n\n Next paragraph!  ",
        "第一句。  第二句！\n\n第三段？",
        "",
        "   \n\n  ",
        "No terminator at all",
    ],
)
def test_spans_are_exact_and_cover_the_text(text: str) -> None:
    spans = sentence_spans(text)
    sentences = [text[start:end] for start, end in spans]
    assert sentences == split_sentences(text)
    assert all(s == s.strip() and s for s in sentences)
    assert _squash("".join(sentences)) == _squash(text)
    assert all(end <= next_start for (_, end), (next_start, _) in itertools.pairwise(spans))
