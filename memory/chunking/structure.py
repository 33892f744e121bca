"""Read markdown-style structure: sections under a heading path, made of paragraphs, list items, code and tables."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Block", "BlockKind", "Section", "parse_sections"]

BlockKind = Literal["paragraph", "list_item", "code", "table"]

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+•]|\d{1,3}[.)、])[ \t]+\S")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*$")


@dataclass(frozen=True)
class Block:
    """One structural unit of a section; `text` is exactly `document[start:end]`."""

    kind: BlockKind
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Section:
    """The blocks under one heading path (the empty path holds what comes before the first heading)."""

    heading: tuple[str, ...]
    blocks: tuple[Block, ...]

    @property
    def start(self) -> int:
        """Offset of the first block."""
        return self.blocks[0].start

    @property
    def end(self) -> int:
        """Offset just past the last block."""
        return self.blocks[-1].end


def parse_sections(text: str) -> list[Section]:
    """Sections of `text` in order; heading lines themselves belong to no block, empty sections are dropped."""
    return _Parser(text).run()


class _Parser:
    """A line scanner that keeps the offset of every line, so blocks stay exact slices of the input."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.sections: list[Section] = []
        self.path: list[tuple[int, str]] = []
        self.blocks: list[Block] = []
        self.open_kind: BlockKind | None = None
        self.open_lines: list[tuple[int, int]] = []  # (start, end) of each line of the open block
        self.fence: str | None = None

    def run(self) -> list[Section]:
        offset = 0
        for raw in self.text.splitlines(keepends=True):
            line = raw.rstrip("\r\n")
            self._line(line, offset, offset + len(line))
            offset += len(raw)
        self._flush()
        self._close_section()
        return self.sections

    def _line(self, line: str, start: int, end: int) -> None:
        if self.fence is not None:
            self.open_lines.append((start, end))
            if line.strip().startswith(self.fence) and not line.strip().strip(self.fence[0]):
                self.fence = None
                self._flush()
            return
        if not line.strip():
            self._flush()
            return
        fence = _FENCE.match(line)
        if fence:
            self._flush()
            self.fence = fence.group(1)
            self._open("code", start, end)
            return
        heading = _ATX.match(line)
        if heading:
            self._flush()
            self._heading(len(heading.group(1)), heading.group(2) or "")
            return
        if self._setext(line):
            return
        if _BREAK.match(line) and self.open_kind is None:
            return
        if line.lstrip().startswith("|") or (self.open_kind == "table" and "|" in line):
            if self.open_kind != "table":
                self._flush()
                self._open("table", start, end)
            else:
                self.open_lines.append((start, end))
            return
        if _TABLE_RULE.match(line) and self.open_kind == "paragraph" and len(self.open_lines) == 1:
            self.open_kind = "table"  # a pipe table written without leading pipes
            self.open_lines.append((start, end))
            return
        if _LIST_ITEM.match(line):
            self._flush()
            self._open("list_item", start, end)
            return
        if self.open_kind in (None, "table"):
            self._flush()
            self._open("paragraph", start, end)
            return
        self.open_lines.append((start, end))

    def _setext(self, line: str) -> bool:
        """Turn a one-line paragraph underlined with === or --- into a heading."""
        underline = _SETEXT.match(line)
        if not underline or self.open_kind != "paragraph" or len(self.open_lines) != 1:
            return False
        start, end = self.open_lines[0]
        self.open_kind, self.open_lines = None, []
        self._heading(1 if underline.group(1)[0] == "=" else 2, self.text[start:end].strip())
        return True

    def _heading(self, level: int, title: str) -> None:
        self._close_section()
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        self.path.append((level, title.strip()))

    def _open(self, kind: BlockKind, start: int, end: int) -> None:
        self.open_kind = kind
        self.open_lines = [(start, end)]

    def _flush(self) -> None:
        if self.open_kind is None:
            return
        start, end = self.open_lines[0][0], self.open_lines[-1][1]
        while end > start and self.text[end - 1].isspace():
            end -= 1
        while start < end and self.text[start] in " \t":
            start += 1
        if end > start:
            self.blocks.append(Block(self.open_kind, self.text[start:end], start, end))
        self.open_kind, self.open_lines = None, []

    def _close_section(self) -> None:
        if self.blocks:
            self.sections.append(Section(tuple(title for _, title in self.path), tuple(self.blocks)))
        self.blocks = []
