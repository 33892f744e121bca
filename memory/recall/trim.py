"""Cut a bullet at a sentence boundary (English and Chinese, as the chunker splits) so it fits a token space."""

from __future__ import annotations

from memory.recall.render import TRIM_MARKER, Line, make_line
from memory.text.sentences import sentence_spans
from memory.tokens import TokenCounter

__all__ = ["Cuts", "sentence_ends", "trim_line"]

# The longest cut found per (snippet id, body, space), kept by a caller across trim_line calls.
Cuts = dict[tuple[str, str, int], Line | None]


def sentence_ends(text: str) -> list[int]:
    """Offsets just after each sentence end inside `text`, its very end excluded (closing quotes included)."""
    return [end for _, end in sentence_spans(text)[:-1]]


def trim_line(
    line: Line, space: int, counter: TokenCounter, *, min_tokens: int, min_fill: float,
    cuts: Cuts | None = None,
) -> Line | None:
    """The longest sentence-boundary cut of `line` costing at most `space`, or None when no cut is worth it.

    A cut is worth it when it keeps at least `min_tokens` of text and fills at least `min_fill` of `space`.
    `cuts` remembers the longest cut per line and space across calls (packing asks again with a lower
    `min_fill` when space is left at the end): the counting is done once.
    """
    key = (line.snippet.id, line.body, space)
    if cuts is not None and key in cuts:
        best = cuts[key]
    else:
        best = _longest_cut(line, space, counter, min_tokens)
        if cuts is not None:
            cuts[key] = best
    if best is None or best.cost < min_fill * space:
        return None
    return best


def _longest_cut(line: Line, space: int, counter: TokenCounter, min_tokens: int) -> Line | None:
    """The longest cut costing at most `space` that keeps at least `min_tokens` of text (None: no such cut)."""
    ends = sentence_ends(line.body)
    best: Line | None = None
    low, high = 0, len(ends) - 1
    # Binary search counts O(log n) prefixes; every accepted cut was counted exactly, so the result
    # fits even where prefix counts are not monotone.
    while low <= high:
        middle = (low + high) // 2
        cut = make_line(
            line.snippet, counter, body=line.body[: ends[middle]] + TRIM_MARKER, trimmed=True,
            low_confidence=line.low_confidence,
        )
        if cut.cost <= space:
            best, low = cut, middle + 1
        else:
            high = middle - 1
    if best is None or counter.count(best.body[: -len(TRIM_MARKER)]) < min_tokens:
        return None
    return best
