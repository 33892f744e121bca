"""Token-room arithmetic the processors share: whether a text fits, and how many lines do by a running count."""

from __future__ import annotations

from collections.abc import Iterable

from memory.tokens import TokenCounter

__all__ = ["CHARS_PER_TOKEN", "fits", "fitting", "line_tokens"]

# Tool output rarely runs past this many characters per token: a text longer than the room times this is taken not
# to fit without being counted (counting megabytes takes long; at worst a text is reduced that would have fitted).
CHARS_PER_TOKEN = 8


def fits(text: str, room: int, counter: TokenCounter) -> bool:
    """Whether `text` takes at most `room` tokens (a text past CHARS_PER_TOKEN characters a token is not counted)."""
    return len(text) <= max(room, 1) * CHARS_PER_TOKEN and counter.count(text) <= room


def line_tokens(line: str, counter: TokenCounter) -> int:
    """The tokens `line` adds to a text with its line break: counted with it, since the tokenizer may join them."""
    return counter.count(line + "\n")


def fitting(lines: Iterable[str], room: int, counter: TokenCounter) -> int:
    """How many of `lines`, from the first, fit `room` tokens when joined by line breaks (a close estimate: the
    caller checks the text it makes with an exact count)."""
    used = shown = 0
    for line in lines:
        used += line_tokens(line, counter)
        if used > room:
            break
        shown += 1
    return shown
