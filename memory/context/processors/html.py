"""An HTML page: its visible text, scripts and styles left out, blank runs folded."""

from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["HtmlText"]

_TAG = re.compile(r"<\s*(html|body|div|p|span|table|a|head)\b", re.IGNORECASE)
_BLOCKS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "table"}


class HtmlText:
    """Markup → text; accepts only text that reads as HTML (a few of the usual tags)."""

    name = "html"

    def reduce(self, text: str) -> str | None:
        if len(_TAG.findall(text)) < 2:
            return None
        parser = _Text()
        parser.feed(text)
        parser.close()
        folded = re.sub(r"\n\s*\n+", "\n\n", re.sub(r"[ \t]+", " ", "".join(parser.parts)))
        return folded.strip() or None


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "noscript"):
            self._skip += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "noscript") and self._skip:
            self._skip -= 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)
