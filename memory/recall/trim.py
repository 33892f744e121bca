"""Cut a bullet at sentence boundaries (English and Chinese, as the chunker splits) so it fits a token space: its
first sentences, or, when the sentence that holds most of the query's terms lies beyond them, the sentences around
that one."""

from __future__ import annotations

from collections.abc import Set

from memory.recall.render import LEAD_MARKER, TRIM_MARKER, Line, make_line
from memory.text import terms
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
    cuts: Cuts | None = None, wanted: Set[str] = frozenset(),
) -> Line | None:
    """The best sentence-boundary cut of `line` costing at most `space`, or None when no cut is worth it: the
    longest run of its first sentences, unless the sentence with most of the query's terms (`wanted`) lies beyond
    it; then the run around that sentence (marked "[…] " in front).

    A cut is worth it when it keeps at least `min_tokens` of text and fills at least `min_fill` of `space`.
    `cuts` remembers the cut per line and space across calls of one packing (which asks again with a lower
    `min_fill` when space is left at the end, with the same `wanted`): the counting is done once.
    """
    key = (line.snippet.id, line.body, space)
    if cuts is not None and key in cuts:
        best = cuts[key]
    else:
        best = _longest_cut(line, space, counter, min_tokens)
        if wanted:
            best = _around_the_match(line, space, counter, min_tokens, wanted, best)
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


def _around_the_match(line: Line, space: int, counter: TokenCounter, min_tokens: int, wanted: Set[str],
                      head: Line | None) -> Line | None:
    """`head` unless the sentence holding most of `wanted` lies beyond it; then that sentence and as many of the
    ones after it, then before it, as fit (None when even that sentence alone does not)."""
    spans = sentence_spans(line.body)
    found = [len(wanted & set(terms(line.body[start:end]))) for start, end in spans]
    best = max(range(len(spans)), key=lambda i: (found[i], -i))
    kept = len(head.body) - len(TRIM_MARKER) if head is not None else 0
    if found[best] == 0 or spans[best][1] <= kept:
        return head
    first, last = best, best
    window = _window(line, spans, first, last, counter)
    if window.cost > space:
        return head
    # The sentences after it (what it goes on to say), then those before it, while they fit.
    while last + 1 < len(spans) and (wider := _window(line, spans, first, last + 1, counter)).cost <= space:
        window, last = wider, last + 1
    while first > 0 and (wider := _window(line, spans, first - 1, last, counter)).cost <= space:
        window, first = wider, first - 1
    text = window.body.removeprefix(LEAD_MARKER).removesuffix(TRIM_MARKER)
    return window if counter.count(text) >= min_tokens else head


def _window(line: Line, spans: list[tuple[int, int]], first: int, last: int, counter: TokenCounter) -> Line:
    start, end = spans[first][0], spans[last][1]
    body = (LEAD_MARKER if start > 0 else "") + line.body[start:end].strip() + (
        TRIM_MARKER if end < len(line.body.rstrip()) else "")
    return make_line(line.snippet, counter, body=body, trimmed=True, low_confidence=line.low_confidence)
