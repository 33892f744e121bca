"""Cutting text into token-sized pages that concatenate back to the text exactly."""

from __future__ import annotations

from memory.tokens import TokenCounter

__all__ = ["first_page", "page_ends"]

# Characters tried per token before widening the window: English runs ~4 per token, Chinese ~1.
_CHARS_PER_TOKEN = 4


def first_page(counter: TokenCounter, text: str, max_tokens: int) -> str:
    """The longest token-boundary prefix of `text` of at most `max_tokens` tokens (at least one character)."""
    return text[: _page_end(counter, text, 0, max_tokens)]


def page_ends(counter: TokenCounter, text: str, page_tokens: int) -> tuple[int, ...]:
    """Where each page of `text` ends (character offsets); page n is text[ends[n-2]:ends[n-1]], exactly."""
    ends: list[int] = []
    start = 0
    while start < len(text):
        start = _page_end(counter, text, start, page_tokens)
        ends.append(start)
    return tuple(ends)


def _page_end(counter: TokenCounter, text: str, start: int, max_tokens: int) -> int:
    # Only a window is encoded, widened until the cut falls inside it, so paging a long text costs time in
    # proportion to its length rather than its square. A single character needing more than max_tokens
    # tokens (an emoji on 1-token pages) is a page by itself, so paging always moves on.
    size = max_tokens * _CHARS_PER_TOKEN + 16
    while True:
        window = text[start : start + size]
        cut = counter.head(window, max_tokens)
        if len(cut) < len(window) or start + size >= len(text):
            return start + max(len(cut), 1)
        size *= 2
