"""An HTML page: its visible text (scripts and styles out, blank runs folded), cut at a line end to the room."""

from __future__ import annotations

import html
import re

from memory.context.processors.base import Processed
from memory.context.processors.fit import fits, fitting
from memory.tokens import TokenCounter

__all__ = ["HtmlText"]

_USUAL = re.compile(r"<\s*(html|body|div|p|span|table|a|head)\b", re.IGNORECASE)
# Regular expressions, not an HTML parser: the standard library's parser is pure Python and slow on the megabyte
# pages tools return, and a browser ends a script at the first "</script" too. Each is read once over the page: a
# tag ends before the next "<" (else it is text), and what hides a part is closed by a search from where it opens.
_HIDING = re.compile(r"<(script|style|noscript|template)\b|<!--", re.IGNORECASE)
_BLOCK = re.compile(r"</?(p|div|br|li|tr|h[1-6]|section|article|table|ul|ol|header|footer|nav|title|pre|blockquote)"
                    r"\b[^<>]*>", re.IGNORECASE)
_TAG = re.compile(r"</?[a-zA-Z!][^<>]*>")
_MARKUP = "the page's markup (tags and link addresses), scripts and styles"


class HtmlText:
    """Markup → text; accepts only text that reads as HTML (a few of the usual tags)."""

    name = "html"

    def reduce(self, text: str, room: int, counter: TokenCounter) -> Processed | None:
        """The page's text, its first lines when all of it does not fit `room`."""
        if len(_USUAL.findall(text)) < 2:
            return None
        # Line breaks in the source are spaces on the page; the blocks break lines.
        flat = re.sub(r"\s+", " ", _unhidden(text))
        unmarked = html.unescape(_TAG.sub("", _BLOCK.sub("\n", flat)))
        visible = re.sub(r"\n{3,}", "\n\n", re.sub(r" *\n *", "\n", re.sub(r"[ \t]+", " ", unmarked))).strip()
        if not visible:
            return None
        if fits(visible, room, counter):
            return Processed(self.name, visible, _MARKUP)
        lines = visible.split("\n")
        total = len(lines)

        def note(shown: int) -> str:
            return f"[showing lines 1-{shown:,} of the page's {total:,} lines of text]"

        shown = fitting(lines, room - counter.count(note(total)) - 1, counter)
        reduced = "\n".join([note(shown), *lines[:shown]])
        while shown and counter.count(reduced) > room:  # the running count is close; the exact one decides
            shown -= 1
            reduced = "\n".join([note(shown), *lines[:shown]])
        if shown:
            return Processed(self.name, reduced, f"lines {shown + 1:,}-{total:,} of the page's {total:,} lines of "
                                                 f"text, and {_MARKUP}")
        # Not even the first line fits: its beginning, cut on a token boundary.
        head = f"[showing the beginning of line 1 of the page's {total:,} lines of text]"
        start = counter.head(lines[0], room - counter.count(head + "\n…") - 1)
        while start and counter.count(f"{head}\n{start}…") > room:
            start = start[:-1]
        rest = f" and lines 2-{total:,}" if total > 1 else ""
        return Processed(self.name, f"{head}\n{start}…",
                         f"the end of line 1{rest} of the page's {total:,} lines of text, and {_MARKUP}")


def _unhidden(page: str) -> str:
    """`page` without its scripts, styles, templates and comments; one never closed stays as it is (and so does
    every later one of its kind: none of them is closed either)."""
    parts: list[str] = []
    done = 0
    unclosed: set[str] = set()
    opening = _HIDING.search(page)
    while opening is not None:
        kind = (opening.group(1) or "--").lower()
        end = -1 if kind in unclosed else _close(page, kind, opening.end())
        if end == -1:
            unclosed.add(kind)
            opening = _HIDING.search(page, opening.end())
            continue
        parts += [page[done:opening.start()], " "]
        done = end
        opening = _HIDING.search(page, end)
    return "".join([*parts, page[done:]])


def _close(page: str, kind: str, start: int) -> int:
    """Where what opened as `kind` before `start` ends (just after its close), -1 when it is never closed."""
    if kind == "--":
        at = page.find("-->", start)
        return -1 if at == -1 else at + 3
    closing = re.compile(rf"</{kind}\s*>", re.IGNORECASE).search(page, start)
    return -1 if closing is None else closing.end()
