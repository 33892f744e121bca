"""The repair step: when the whole block counts over budget, lines go in a fixed order of importance."""

from __future__ import annotations

from collections.abc import Callable

from memory.recall.fit import Block, fit
from memory.recall.render import RESTATE_HEADER, SECTIONS, make_line, render
from memory.snippet import Snippet
from memory.tokens import TokenCounter

MakeSnippet = Callable[..., Snippet]


def blocks_of(snip: MakeSnippet, counter: TokenCounter) -> list[Block]:
    pinned = make_line(snip("fact", "f1", "以后不要用Python 2的语法。", 1.0, pinned=True), counter)
    task = make_line(snip("task", "t1", "Write the loader first.", 0.9), counter)
    low = make_line(snip("experience", "e1", "Anna moved to Berlin.", 0.3), counter)
    high = make_line(snip("experience", "e2", "她喜欢喝茶。", 0.8), counter)
    return [
        (SECTIONS["pinned"], [pinned]),
        (SECTIONS["fact"], []),
        (SECTIONS["task"], [task]),
        (SECTIONS["experience"], [high, low]),
        (RESTATE_HEADER, [pinned]),
    ]


def ids(blocks: list[Block]) -> list[list[str]]:
    return [[line.snippet.id for line in lines] for _, lines in blocks]


def test_a_block_that_fits_is_kept_whole(snip: MakeSnippet, counter: TokenCounter) -> None:
    blocks = blocks_of(snip, counter)
    rendered, used, kept = fit(blocks, 10_000, counter)
    assert rendered == render(blocks) and used == counter.count(rendered) and kept == blocks


def test_drops_restated_then_lowest_then_pinned(snip: MakeSnippet, counter: TokenCounter) -> None:
    blocks = blocks_of(snip, counter)
    used = counter.count(render(blocks))
    assert ids(fit(blocks, used - 1, counter)[2]) == [["f1"], [], ["t1"], ["e2", "e1"], []]
    without_restated = counter.count(render(blocks[:4]))
    assert ids(fit(blocks, without_restated - 1, counter)[2]) == [["f1"], [], ["t1"], ["e2"], []]
    pinned_only = counter.count(render(blocks[:1]))
    assert ids(fit(blocks, pinned_only, counter)[2]) == [["f1"], [], [], [], []]
    rendered, used, kept = fit(blocks, pinned_only - 1, counter)
    assert (rendered, used) == ("", 0) and ids(kept) == [[], [], [], [], []]
