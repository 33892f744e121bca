"""Cut a span that is too long for one chunk: on token boundaries for prose, on line boundaries for code."""

from __future__ import annotations

import math

from memory.tokens import TokenCounter

__all__ = ["cut_lines", "cut_tokens"]

# Characters after which a forced cut reads least badly, latest first within the allowed piece.
_SOFT_BREAKS = frozenset(" \t\n,，、：:;；)）")


def cut_tokens(text: str, start: int, end: int, counter: TokenCounter, limit: int) -> list[tuple[int, int]]:
    """Spans covering text[start:end] in near-equal pieces of at most `limit` tokens each."""
    total = counter.count(text[start:end])
    if total <= limit:
        return [(start, end)]
    size = math.ceil(total / math.ceil(total / limit))  # equal pieces rather than a full run and a stub
    spans: list[tuple[int, int]] = []
    while start < end:
        rest = text[start:end]
        head = counter.head(rest, size)
        if len(head) >= len(rest):
            spans.append((start, end))
            break
        if not head or not rest.startswith(head):
            head = rest[:1]  # a single character over the size, or a decode that is not a prefix
        cut = _soft_cut(head)
        spans.append((start, start + cut))
        start += cut
        while start < end and text[start].isspace():
            start += 1
    return spans


def cut_lines(text: str, start: int, end: int, counter: TokenCounter, limit: int) -> list[tuple[int, int]]:
    """Spans covering text[start:end], whole lines packed up to `limit` tokens; an overlong line is cut on tokens."""
    lines: list[tuple[int, int]] = []
    line_start = start
    while line_start < end:
        newline = text.find("\n", line_start, end)
        line_end = end if newline < 0 else newline
        lines.append((line_start, line_end))
        line_start = line_end + 1
    spans: list[tuple[int, int]] = []
    piece_start: int | None = None
    piece_end = start
    for line_start, line_end in lines:
        if counter.count(text[line_start:line_end]) > limit:
            if piece_start is not None:
                spans.append((piece_start, piece_end))
                piece_start = None
            spans.extend(cut_tokens(text, line_start, line_end, counter, limit))
            continue
        if piece_start is not None and counter.count(text[piece_start:line_end]) <= limit:
            piece_end = line_end
            continue
        if piece_start is not None:
            spans.append((piece_start, piece_end))
        piece_start, piece_end = line_start, line_end
    if piece_start is not None:
        spans.append((piece_start, piece_end))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _soft_cut(head: str) -> int:
    """Length of `head` shortened to just after its last soft break, if one lies in its second half."""
    for index in range(len(head) - 1, len(head) // 2, -1):
        if head[index] in _SOFT_BREAKS:
            return index + 1
    return len(head)
