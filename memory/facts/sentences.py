"""Prepare a message for matching and split it into sentences and clauses, keeping character offsets."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "Prepared",
    "Quote",
    "Span",
    "find_quotes",
    "fold_width",
    "has_cjk",
    "prepare",
    "split_at",
    "split_clauses",
    "split_sentences",
]

# Full-width punctuation and letters become ASCII one character for one character, so offsets
# into the prepared text are offsets into the original message too.
_WIDTH = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}
_WIDTH.update({ord("\u3000"): ord(" "), ord("“"): ord('"'), ord("”"): ord('"'), ord("‘"): ord("'"),
               ord("’"): ord("'")})

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_QUOTES = re.compile(
    r"""(?<![A-Za-z0-9_])"(?P<a>[^"\n]{1,300})"|「(?P<b>[^」\n]{1,300})」|『(?P<c>[^』\n]{1,300})』"""
    r"""|《(?P<e>[^》\n]{1,300})》|“(?P<f>[^”\n]{1,300})”"""
    r"""|(?<![\w'])'(?P<d>(?:[^'\n]|'(?=\w)){1,300}?)'(?![\w])"""
)
_SENTENCE_END = re.compile(r"[!?;。\n…]+|\.(?=\s|$)")
_ABBREVIATION = re.compile(r"\b(?:e\.g|i\.e|etc|vs|mr|mrs|ms|dr|st|approx|incl|u\.s)$", re.IGNORECASE)
# A dash between words ("Plain text only — my client mangles markdown", "assistant manager- it's like") ends a
# clause as a comma does; a hyphen inside a word ("long-distance") does not.
_CLAUSE_BREAK = re.compile(r"(?<!\d),|,(?!\d)|(?<!\d):|:(?!\d)|\s*(?:—|–|--)\s*|\s+-\s+|(?<=[^\W\d_])-\s+")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class Span:
    """A half-open [start, end) range of character offsets into the message."""

    start: int
    end: int


@dataclass(frozen=True)
class Prepared:
    """The message with punctuation folded and code blanked out, plus where the code was."""

    text: str
    code: tuple[Span, ...]


@dataclass(frozen=True)
class Quote:
    """A quoted passage: the span including its quote marks and the span of its content."""

    outer: Span
    inner: Span


def has_cjk(text: str) -> bool:
    """True when the text contains Chinese characters."""
    return _CJK.search(text) is not None


def fold_width(text: str) -> str:
    """Map full-width punctuation, letters and curly quotes to ASCII, one character for one."""
    return text.translate(_WIDTH)


def prepare(message: str, code_line: re.Pattern[str] | None) -> Prepared:
    """Fold full-width punctuation and blank out fenced code, code-looking lines and backticks."""
    text = fold_width(message)
    code: list[Span] = []
    for match in _FENCE.finditer(text):
        code.append(Span(match.start(), match.end()))
    text = _FENCE.sub(lambda m: _blank(m.group(0)), text)
    if code_line is not None:
        offset = 0
        lines = text.split("\n")
        for index, line in enumerate(lines):
            if line.strip() and code_line.search(line):
                code.append(Span(offset, offset + len(line)))
                lines[index] = " " * len(line)
            offset += len(line) + 1
        text = "\n".join(lines)
    # Inline code keeps its content ("don't use `eval`" names eval) but loses the backticks.
    text = _INLINE_CODE.sub(lambda m: " " + m.group(1) + " ", text)
    return Prepared(text=text, code=tuple(sorted(code, key=lambda s: s.start)))


def find_quotes(text: str) -> list[Quote]:
    """Every quoted passage in the prepared text, in order."""
    quotes: list[Quote] = []
    for match in _QUOTES.finditer(text):
        group = next(name for name in "abcdef" if match.group(name) is not None)
        quotes.append(Quote(Span(match.start(), match.end()), Span(match.start(group), match.end(group))))
    return quotes


def split_sentences(text: str) -> list[Span]:
    """Split on sentence punctuation and newlines; each span keeps its closing mark."""
    spans: list[Span] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        # The longest abbreviation and the character before it, not the whole sentence so far (a run of them).
        if match.group(0) == "." and _ABBREVIATION.search(text[max(start, match.start() - 8):match.start()]):
            continue
        spans.append(Span(start, match.end()))
        start = match.end()
    spans.append(Span(start, len(text)))
    return [s for s in (_trim(text, span) for span in spans) if s.end > s.start]


def split_clauses(text: str, span: Span) -> list[Span]:
    """Split one sentence on commas and colons that are not inside numbers (2,000 or 5:30)."""
    spans: list[Span] = []
    start = span.start
    for match in _CLAUSE_BREAK.finditer(text, span.start, span.end):
        spans.append(Span(start, match.start()))
        start = match.end()
    spans.append(Span(start, span.end))
    return [s for s in (_trim(text, part) for part in spans) if s.end > s.start]


def split_at(text: str, span: Span, breaks: Iterable[re.Pattern[str] | None]) -> list[Span]:
    """Split a span where any of the patterns matches inside it, dropping the matched text."""
    found = (m for pattern in breaks if pattern is not None for m in pattern.finditer(text, span.start, span.end))
    cuts = sorted((m.start(), m.end()) for m in found if span.start < m.start() and m.end() < span.end)
    spans: list[Span] = []
    start = span.start
    for cut_start, cut_end in cuts:
        if cut_start >= start:  # a match overlapping the previous one is not a second cut
            spans.append(Span(start, cut_start))
            start = cut_end
    spans.append(Span(start, span.end))
    return [s for s in (_trim(text, part) for part in spans) if s.end > s.start]


def _trim(text: str, span: Span) -> Span:
    start, end = span.start, span.end
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end)


def _blank(chunk: str) -> str:
    return "".join("\n" if ch == "\n" else " " for ch in chunk)
