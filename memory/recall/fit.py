"""Make the rendered block fit its budget exactly: count the whole string, drop the lowest line while over."""

from __future__ import annotations

from collections.abc import Sequence

from memory.recall.render import SECTIONS, Line, render
from memory.snippet import Snippet
from memory.tokens import TokenCounter

__all__ = ["Block", "fit", "rank"]

Block = tuple[str, list[Line]]


def rank(snippet: Snippet) -> tuple[float, str]:
    """Sort key: higher score first, ties broken by id."""
    return (-snippet.score, snippet.id)


def fit(blocks: Sequence[Block], budget: int, counter: TokenCounter) -> tuple[str, int, list[Block]]:
    """The rendered block, its exact count and the blocks kept, dropping the lowest line while over budget.

    `blocks` are the SECTIONS blocks in order, optionally followed by one block restating constraints.
    """
    kept = list(blocks)
    # Counts are not additive across concatenation in general, so only the count of the whole string is trusted.
    while True:
        rendered = render(kept)
        used = counter.count(rendered)
        if used <= budget:
            return rendered, used, kept
        kept = _drop_lowest(kept)


def _drop_lowest(blocks: list[Block]) -> list[Block]:
    # Restated constraints go first, then the lowest ranked unpinned line; pinned lines only when nothing else is.
    if len(blocks) > len(SECTIONS) and blocks[-1][1]:
        choices = [len(blocks) - 1]
    else:
        choices = [index for index in range(1, len(SECTIONS)) if blocks[index][1]] or [0]
    target = max(choices, key=lambda index: max(rank(line.snippet) for line in blocks[index][1]))
    header, lines = blocks[target]
    victim = max(lines, key=lambda line: rank(line.snippet))
    return [
        (header, [line for line in lines if line is not victim]) if index == target else block
        for index, block in enumerate(blocks)
    ]
