"""Every text path answers in time linear in its input: a megabyte of each pathological shape (runs of digits,
nested brackets, unclosed markup, quotes, slashes, separators, CJK) is read within seconds, where the patterns and
parsers that read a run again from every place in it took minutes to hours. The bounds are generous (a linear path
takes a small part of them on a loaded machine); what they catch is a quadratic path."""

from __future__ import annotations

import time
from collections.abc import Callable

import jieba
import pytest

from ingest.loaders.html import html_to_text
from memory.context.identifiers import identifiers
from memory.context.processors.registry import PROCESSORS, process
from memory.experience.freshness import asks_about_time
from memory.facts.extract import extract
from memory.facts.rules import load_rules
from memory.facts.tagger import reads, shipped_tagger
from memory.text import analyze
from memory.tokens import TokenCounter

MB = 1_000_000
SHAPES: dict[str, Callable[[int], str]] = {
    "digits": lambda n: "7" * n,
    "brackets": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "processing instructions": lambda n: "<?" * (n // 2),
    "declarations": lambda n: "<!" * (n // 2),
    "cdata": lambda n: "<![CDATA[" * (n // 9),
    "unclosed tags": lambda n: "<p><div>" + "<a" * (n // 2),
    "scripts": lambda n: "<script>" * (n // 8),
    "comments": lambda n: "<!--" * (n // 4),
    "quotes": lambda n: '"' * n,
    "slashes": lambda n: "/" * n,
    "spaces": lambda n: "x" + " " * n + "y",
    "separators": lambda n: ", " * (n // 2),
    "abbreviations": lambda n: "e.g. " * (n // 5),
    "dashed ids": lambda n: "a-1" * (n // 3),
    "addresses": lambda n: "a@a." * (n // 4),
    "amounts": lambda n: "$1 " * (n // 3),
    "cjk": lambda n: "中" * n,
    "cjk with digits": lambda n: "第1年" * (n // 3),
}
_RULES = load_rules()


def _seconds(read: Callable[[str], object], text: str) -> float:
    started = time.perf_counter()
    read(text)
    return time.perf_counter() - started


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_megabyte_of_each_shape_is_read_in_seconds_by_every_path(shape: str, counter: TokenCounter) -> None:
    text = SHAPES[shape](MB)
    paths: dict[str, Callable[[str], object]] = {
        "identifiers (compaction)": identifiers,
        "html_to_text (ingest)": html_to_text,
        "fact extraction": lambda t: extract(t, _RULES),
        "span tagger, on the clauses it reads": lambda t: [shipped_tagger().tag(c.text) for c in
                                                           extract(t, _RULES).clauses if reads(c)],
        "token count": counter.count,
        **{f"processor {p.name}": (lambda t, p=p: process("tool", t, 400, counter, PROCESSORS, {"tool": p.name}))
           for p in PROCESSORS},
    }
    slow = {name: round(s, 1) for name, read in paths.items() if (s := _seconds(read, text)) > 10}
    assert not slow, f"{shape}: over 10 s for a megabyte: {slow}"


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(SHAPES))
def test_queries_and_lexical_terms_are_read_in_linear_time(shape: str) -> None:
    # A query is at most limits.max_query_chars (20,000); the lexical analysis reads every document, and jieba's
    # own rate is some 100 KB a second, so it is given a quarter of a megabyte.
    query = SHAPES[shape](20_000)
    assert _seconds(asks_about_time, query) < 1 and _seconds(analyze.query_terms, query) < 2
    assert _seconds(analyze.terms, SHAPES[shape](MB // 4)) < 10


@pytest.mark.parametrize("clause", [
    "".join(chr(0x4E00 + i) for i in range(20_000)),  # every character a word of its own
    " ".join(f"w{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676 % 26)}x" for i in range(4_000)),
])
def test_the_span_tagger_reads_a_long_clause_in_linear_time(clause: str) -> None:
    # The clause's words are features of every token: read once per clause, not once per token (which took
    # tens of seconds for the first clause here).
    assert _seconds(shipped_tagger().tag, clause) < 3


def test_a_long_chinese_run_gives_jieba_s_own_terms() -> None:
    # A run longer than one part, broken by punctuation as prose is: cut where jieba breaks anyway, its terms are
    # those of jieba over the whole run.
    run = "，".join(["我们明天下午在北京大学图书馆讨论机器学习模型的部署方案"] * 40) + "。"
    assert len(run) > 4 * analyze._BLOCK_CHARS
    whole = [w for token in jieba.cut_for_search(run) for w in analyze._WORD.findall(token)]
    assert list(analyze._pieces(run)) == whole
    assert analyze.terms("中" * 300_000)  # one block past the limit still gives terms


def test_time_words_are_found_as_before() -> None:
    for query in ("2023年我们去了哪里", "上次是3月的什么时候", "x12日", "When did we meet", "what happened in 1998"):
        assert asks_about_time(query), query
    for query in ("我们讨论了什么", "7" * 20_000, "a reply to 42 people"):
        assert not asks_about_time(query), query[:20]


@pytest.mark.parametrize("said, found", [
    ("Never use tabs in the output." + " " * 50_000 + "Keep the budget under 500 dollars.", 2),
    ("以后不要用表格。" + " " * 50_000 + "预算不超过500元。", 2),
])
def test_a_message_with_long_runs_is_read_and_fast(said: str, found: int) -> None:
    started = time.perf_counter()
    extraction = extract(said, _RULES)
    assert time.perf_counter() - started < 5
    assert len(extraction.facts) == found, extraction


@pytest.mark.parametrize("head", ["Never use tabs in the output.", "以后不要用表格。"])
def test_a_message_is_read_up_to_its_limit_and_the_rest_is_accounted_for(head: str) -> None:
    said = head + "\n" + "Some pasted material of no consequence. " * 2_000 + "\nAlways answer in French."
    extraction = extract(said, _RULES)
    assert [f.kind for f in extraction.facts] == ["prohibition"] or len(extraction.facts) == 1
    unread = extraction.ignored[-1]
    assert "beyond the first 20,000 characters" in unread.reason and "characters)" in unread.text
    assert not any("French" in f.text for f in extraction.facts)


def test_unclosed_markup_is_text_and_closed_markup_is_read() -> None:
    page = ("<html><head><title>T</title></head><body><!-- a <b>hidden</b> note --><p>a &lt; b and a < c</p>"
            "<script>if (a<b) {}</script><p>2 <3 and <unclosed")  # a page cut short: no ">" after it
    text = html_to_text(page)
    assert "hidden" not in text and "if (a" not in text
    assert "a < b and a < c" in text and "2 <3 and <unclosed" in text
