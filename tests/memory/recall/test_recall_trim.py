"""Cutting a bullet at English and Chinese sentence boundaries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from memory.config import RecallConfig
from memory.recall.pack import pack
from memory.recall.render import TRIM_MARKER, make_line
from memory.recall.trim import Cuts, sentence_ends, trim_line
from memory.snippet import Snippet
from memory.text import query_terms
from memory.tokens import TokenCounter

MakeSnippet = Callable[..., Snippet]


@pytest.mark.parametrize(
    ("text", "cuts"),
    [
        ("One. Two! Three? Four", ["One.", "One. Two!", "One. Two! Three?"]),
        ("Version 3.5 is out. Upgrade now.", ["Version 3.5 is out."]),
        ('He said "stop." Then left.', ['He said "stop."']),
        (
            "我搬到了柏林。她喜欢茶！你呢？好；再见",
            [
                "我搬到了柏林。",
                "我搬到了柏林。她喜欢茶！",
                "我搬到了柏林。她喜欢茶！你呢？",
                "我搬到了柏林。她喜欢茶！你呢？好；",
            ],
        ),
        ("（她说：“好。”）然后走了。", ["（她说：“好。”）"]),
        # The chunker's splitter: abbreviations and initials do not end a sentence.
        ("Dr. J. Smith moved to Berlin, e.g. last May. She likes tea.", ["Dr. J. Smith moved to Berlin, e.g. last May."]),
        ("No boundary at all", []),
        ("Ends here.", []),
    ],
)
def test_sentence_ends(text: str, cuts: list[str]) -> None:
    assert [text[:end] for end in sentence_ends(text)] == cuts


@pytest.mark.parametrize(
    "text",
    [
        "The loader reads CSV files from the inbox. It validates every row against the schema. "
        "Rows that fail go to a quarantine table. A nightly job retries them and alerts the owner.",
        "加载器从收件箱读取CSV文件。它根据模式校验每一行。校验失败的行进入隔离表。夜间任务会重试并通知负责人。",
    ],
)
def test_trim_keeps_whole_sentences_within_space(snip: MakeSnippet, counter: TokenCounter, text: str) -> None:
    line = make_line(snip("task", "t1", text, metadata={"kind": "plan"}), counter)
    space = line.cost * 2 // 3
    cut = trim_line(line, space, counter, min_tokens=4, min_fill=0.3)
    assert cut is not None
    assert cut.trimmed and cut.cost <= space and cut.cost == counter.count(cut.text + "\n")
    assert cut.body.endswith(TRIM_MARKER)
    kept = cut.body[: -len(TRIM_MARKER)]
    assert text.startswith(kept) and kept[-1] in ".。"
    assert cut.text == "- [plan] " + cut.body


def test_trim_refuses_cuts_that_are_not_worth_it(snip: MakeSnippet, counter: TokenCounter) -> None:
    line = make_line(snip("experience", "e1", "Yes. " + "The rest is a very long sentence " * 20 + "."), counter)
    assert trim_line(line, line.cost - 1, counter, min_tokens=4, min_fill=0.0) is None  # "Yes." is too short
    assert trim_line(line, line.cost - 1, counter, min_tokens=1, min_fill=0.5) is None  # fills too little
    assert trim_line(line, line.cost - 1, counter, min_tokens=1, min_fill=0.0) is not None
    assert trim_line(line, 3, counter, min_tokens=1, min_fill=0.0) is None


def test_remembered_cuts_answer_as_fresh_ones(snip: MakeSnippet, counter: TokenCounter) -> None:
    text = "One short line. " + "Then a much longer sentence that goes on for a while. " * 3 + "第二句。第三句很长很长。"
    line = make_line(snip("experience", "e1", text), counter)
    cuts: Cuts = {}
    for space in range(line.cost + 2):
        for min_fill in (0.9, 0.5, 0.0):  # packing asks again at the same space with a lower fill
            fresh = trim_line(line, space, counter, min_tokens=3, min_fill=min_fill)
            remembered = trim_line(line, space, counter, min_tokens=3, min_fill=min_fill, cuts=cuts)
            assert remembered == fresh, (space, min_fill)
    assert len(cuts) == line.cost + 2  # one count per space, whatever the fill asked
    assert any(value is not None for value in cuts.values())


@pytest.mark.parametrize("query, chunk, answer", [
    ("发布后错误率超过多少要回滚",
     "发布流程分三步。先在预发环境跑完整套回归测试，再灰度百分之五的流量观察一小时。灰度期间由值班同学盯监控大盘。"
     "如果发布后错误率超过百分之二，立即回滚到上一个版本并通知负责人。回滚后要写事故复盘。",
     "如果发布后错误率超过百分之二，立即回滚到上一个版本并通知负责人。"),
    ("what error rate after a release means we roll back",
     "The release has three steps. First the full regression suite runs in staging. Then five percent of the "
     "traffic goes to the new version for an hour while the on-call engineer watches the dashboards. If the error "
     "rate after the release goes above two percent, roll back to the previous version and tell the owner. "
     "Write a post-mortem after any rollback.",
     "If the error rate after the release goes above two percent, roll back to the previous version and tell the "
     "owner."),
])
def test_a_cut_keeps_the_sentences_around_what_the_query_asks(counter: TokenCounter, query: str, chunk: str,
                                                              answer: str) -> None:
    snippet = Snippet(tier="experience", id="c1", text=chunk, score=0.9, tokens=counter.count(chunk))
    wanted = frozenset(query_terms(query))
    budget = counter.count(answer) + 30  # room for the answer's sentence and a little, not the sentences before it
    head = pack([snippet], budget, RecallConfig(), counter)
    assert answer not in "".join(item.text for item in head.items)  # the first sentences: the answer cut off
    around = pack([snippet], budget, RecallConfig(), counter, wanted=wanted)
    assert around.used_tokens <= budget and around.items[0].trimmed
    assert answer in around.items[0].text and around.items[0].text.startswith("[…] ")
    # Where the first sentences hold what the query asks, the cut is theirs, as without a query.
    first = chunk[:chunk.index(answer)]
    early = pack([replace(snippet, text=answer + first)], budget, RecallConfig(), counter, wanted=wanted)
    assert early.items[0].text.startswith(answer) and not early.items[0].text.startswith("[…]")
