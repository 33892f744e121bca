"""The prompt-ready block: one bullet line per snippet, grouped under compact section headers.

Every line of the block starts with "- " or "## " and ends with "\n". cl100k's pre-tokenizer always splits
right after a newline that precedes "-" or "#", so the block's token count is exactly the sum of `cost(line)`
over its lines: budgets are planned line by line, and fit() counts the whole block once to be sure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from memory.bullet import clean
from memory.snippet import Snippet
from memory.tokens import TokenCounter

__all__ = [
    "LEAD_MARKER",
    "RESTATE_HEADER",
    "SECTIONS",
    "TRIM_MARKER",
    "Line",
    "Section",
    "cost",
    "freshness",
    "make_line",
    "render",
    "section_of",
]

Section = Literal["pinned", "fact", "task", "experience"]

# Render order: pinned constraints first, then other facts, then task notes, then experience.
SECTIONS: dict[Section, str] = {
    "pinned": "## Constraints (always apply)",
    "fact": "## Facts",
    "task": "## Task notes",
    "experience": "## Relevant memory",
}
RESTATE_HEADER = "## Remember"
TRIM_MARKER = " […]"
LEAD_MARKER = "[…] "  # a cut that starts after the text's first sentence
_LOW_CONFIDENCE = "(low confidence) "


@dataclass(frozen=True)
class Line:
    """One snippet as a bullet: `body` is its (maybe trimmed) text, `cost` the tokens `text` adds to the block."""

    snippet: Snippet
    body: str
    text: str
    cost: int
    trimmed: bool = False
    low_confidence: bool = False


def cost(line: str, counter: TokenCounter) -> int:
    """Tokens that `line` (a header or a bullet) adds to the block, its closing newline included."""
    return counter.count(line + "\n")


def section_of(snippet: Snippet) -> Section:
    """The section a snippet is rendered under."""
    return "pinned" if snippet.pinned else snippet.tier


def make_line(
    snippet: Snippet, counter: TokenCounter, *, body: str | None = None, trimmed: bool = False,
    low_confidence: bool = False,
) -> Line:
    """The bullet for `snippet` (or for `body`, a trimmed version of its text), counted once."""
    head = "- " + _label(snippet) + (_LOW_CONFIDENCE if low_confidence else "")
    if body is None and snippet.body_tokens is not None:
        # The tier counted the whole text already (see memory.bullet.body_cost); only the short head is encoded here.
        body = clean(snippet.text)
        return Line(snippet, body, head + body, counter.count(head[:-1]) + snippet.body_tokens, trimmed,
                    low_confidence)
    body = clean(snippet.text) if body is None else body
    text = head + body
    return Line(snippet, body, text, cost(text, counter), trimmed, low_confidence)


def _label(snippet: Snippet) -> str:
    if snippet.pinned or snippet.tier == "fact":
        return ""
    if snippet.tier == "task":
        kind = clean(str(snippet.metadata.get("kind") or ""))
        return f"[{kind}] " if kind else ""
    who = clean(str(snippet.metadata.get("speaker") or snippet.metadata.get("title") or ""))
    moment = snippet.updated
    parts = [part for part in (f"{moment:%Y-%m-%d}" if moment else "", who) if part]
    return f"({', '.join(parts)}) " if parts else ""


def freshness(snippet: Snippet, now: datetime | None = None) -> str | None:
    """`updated 2026-05-01`, plus the age (`, 3 days ago`) when `now` is given; None without a valid date."""
    moment = snippet.updated
    if moment is None:
        return None
    tag = f"updated {moment:%Y-%m-%d}"
    if now is None:
        return tag
    today = (now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)).date()
    days = today.toordinal() - moment.date().toordinal()
    if days < 0:
        return tag  # clock skew: a date in the future has no meaningful age
    return f"{tag}, {_age(days)}"


def _age(days: int) -> str:
    if days == 0:
        return "today"
    if days < 60:
        count, unit = days, "day"
    elif days < 730:
        count, unit = days // 30, "month"
    else:
        count, unit = days // 365, "year"
    return f"{count} {unit}{'s' if count != 1 else ''} ago"


def render(blocks: Sequence[tuple[str, Sequence[Line]]]) -> str:
    """Headers and bullets, each ending in a newline; a block without lines is left out."""
    parts: list[str] = []
    for header, lines in blocks:
        if lines:
            parts.append(header + "\n")
            parts.extend(line.text + "\n" for line in lines)
    return "".join(parts)
