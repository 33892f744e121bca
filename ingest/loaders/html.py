"""HTML files, rewritten as markdown-style text so headings, list items, code and tables survive chunking."""

from __future__ import annotations

import re
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path

from ingest.loaders.base import LoadedDocument, check_text, file_mtime, read_text
from memory.clock import parse_iso
from memory.errors import ValidationError

__all__ = ["html_to_text", "load_html"]

# Not the page's text: code, styles, embedded objects, and the site's navigation (the same links on every page of
# a site, which would otherwise be a chunk of their own in each).
_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "iframe", "object", "canvas", "head", "nav"})
# fmt: off
_BLOCKS = frozenset({
    "p", "div", "section", "article", "header", "footer", "main", "aside", "nav", "blockquote", "figure",
    "figcaption", "dd", "dt", "dl", "address", "details", "summary", "form", "fieldset", "hr", "body", "html",
    "center",
})
# fmt: on
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
# <meta> names that date the content, most specific first.
_DATE_METAS = (
    "article:modified_time",
    "og:updated_time",
    "last-modified",
    "dcterms.modified",
    "dc.date.modified",
    "date",
    "dc.date",
    "dcterms.date",
    "article:published_time",
)
_SPACES = re.compile(r"[ \t\r\f\v]+")


def load_html(path: Path, max_chars: int | None = None, name: str | None = None) -> list[LoadedDocument]:
    """One document: visible text as markdown-style lines; <title> (or the first <h1>) is the title."""
    name = name or str(path)
    parser = _converted(read_text(path, max_chars, name))
    text = parser.text()
    if not text.strip():
        raise ValidationError(
            f"{name} has no visible text outside scripts and styles; expected an HTML page with content"
        )
    check_text(name, text, max_chars)
    updated_at = _content_date(parser.metas) or file_mtime(path)
    return [LoadedDocument(path.name, parser.title(), str(path), text, "document", updated_at)]


def html_to_text(html: str) -> str:
    """Markdown-style text of an HTML string (the same conversion load_html uses)."""
    return _converted(html).text()


def _converted(page: str) -> _Converter:
    parser = _Converter()
    parser.feed(_defused(page))
    parser.close()
    return parser


# What closes markup that begins with "<" and the text after it: the standard library's parser reads from each such
# "<" to its end, so one that never ends is read again from every "<" after it.
_ENDS = (("<!--", "-->"), ("<![CDATA[", "]]>"), ("<", ">"))


def _defused(page: str) -> str:
    """`page` with each "<" that opens markup never closed written as "&lt;" (text, as a browser shows it), so the
    parser reads the page once. Each close is looked for once: a later start reuses the close found after it."""
    found: dict[str, int] = {}

    def close(end: str, start: int) -> int:
        at = found.get(end)
        if at is None or (at != -1 and at < start):
            at = found[end] = page.find(end, start)
        return at

    parts: list[str] = []
    done = 0
    opening = page.find("<")
    while opening != -1:
        begin, end = next((b, e) for b, e in _ENDS if page.startswith(b, opening))
        if close(end, opening + len(begin)) == -1:
            parts += [page[done:opening], "&lt;"]
            done = opening + 1
        opening = page.find("<", opening + 1)
    return "".join([*parts, page[done:]]) if parts else page


def _content_date(metas: dict[str, str]) -> datetime | None:
    for name in _DATE_METAS:
        if metas.get(name):
            try:
                return parse_iso(metas[name], name)
            except ValidationError:
                continue  # an unparseable date in a meta tag falls back to the file time
    return None


class _Converter(HTMLParser):
    """Collects blocks of visible text; each block becomes one markdown-style paragraph."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.inline: list[str] = []
        self.prefix = ""
        self.skip_depth = 0
        self.lists: list[list[int]] = []  # per open list: [is_ordered, items so far]
        self.pre_depth = 0
        self.pre: list[str] = []
        self.rows: list[str] = []
        self.cells: list[str] | None = None
        self.cell: list[str] | None = None
        self.in_title = False
        self.title_parts: list[str] = []
        self.first_h1: str | None = None
        self.metas: dict[str, str] = {}

    def text(self) -> str:
        self._flush()
        self._flush_table()
        return "\n\n".join(self.blocks)

    def title(self) -> str | None:
        title = _SPACES.sub(" ", " ".join(self.title_parts)).strip()
        return title or self.first_h1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            values = {k.lower(): v or "" for k, v in attrs}
            name = (values.get("name") or values.get("property") or values.get("http-equiv") or "").lower()
            if name and values.get("content"):
                self.metas.setdefault(name, values["content"])
            return
        if tag == "title":
            self.in_title = True
        if tag in _SKIP:
            self.skip_depth += 1
            return
        if self.skip_depth:
            return
        if tag == "br":
            self._data("\n")
        elif tag == "pre":
            self._flush()
            self.pre_depth += 1
        elif tag in _HEADINGS:
            self._flush()
            self.prefix = "#" * _HEADINGS[tag] + " "
        elif tag in ("ul", "ol"):
            self._flush()
            self.lists.append([tag == "ol", 0])
        elif tag == "li":
            self._flush()
            depth = max(len(self.lists) - 1, 0)
            ordered, count = self.lists[-1] if self.lists else (False, 0)
            if self.lists:
                self.lists[-1][1] = count + 1
            self.prefix = "  " * depth + (f"{count + 1}. " if ordered else "- ")
        elif tag == "tr":
            self._flush()
            self.cells = []
        elif tag in ("td", "th"):
            self.cell = []
        elif tag in _BLOCKS:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIP:
            self.skip_depth = max(self.skip_depth - 1, 0)
            return
        if self.skip_depth:
            return
        if tag == "pre" and self.pre_depth:
            self.pre_depth -= 1
            code = "".join(self.pre).strip("\n")
            self.pre = []
            if code.strip():
                self.blocks.append(f"```\n{code}\n```")
        elif tag in _HEADINGS:
            if tag == "h1" and self.first_h1 is None:
                self.first_h1 = _SPACES.sub(" ", "".join(self.inline)).strip() or None
            self._flush()
            self.prefix = ""
        elif tag in ("ul", "ol"):
            self._flush()
            if self.lists:
                self.lists.pop()
        elif tag in ("td", "th") and self.cell is not None and self.cells is not None:
            self.cells.append(_SPACES.sub(" ", "".join(self.cell).replace("\n", " ")).strip().replace("|", "\\|"))
            self.cell = None
        elif tag == "tr" and self.cells is not None:
            if any(self.cells):
                self.rows.append("| " + " | ".join(self.cells) + " |")
            self.cells = None
        elif tag == "table":
            self._flush_table()
        elif tag == "li":
            self._flush()
            self.prefix = ""
        elif tag in _BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
            return
        if self.skip_depth:
            return
        if self.pre_depth:
            self.pre.append(data)
        elif self.cell is not None:
            self.cell.append(data)
        else:
            self._data(data.replace("\n", " "))

    def _data(self, data: str) -> None:
        self.inline.append(data)

    def _flush(self) -> None:
        text = "\n".join(_SPACES.sub(" ", line).strip() for line in "".join(self.inline).split("\n"))
        text = re.sub(r"\n{2,}", "\n", text).strip()
        if text:
            self.blocks.append(self.prefix + text)
            self.prefix = ""
        # With nothing to emit the prefix waits: <li><p>text</p></li> is still a list item.
        self.inline = []

    def _flush_table(self) -> None:
        if self.rows:
            self.blocks.append("\n".join(self.rows))
        self.rows = []
