"""Split English and Chinese text into sentences, keeping each sentence's exact text and position."""

from __future__ import annotations

import re

__all__ = ["sentence_spans", "split_sentences"]

# A run of terminators plus the closing quotes or brackets that belong to the sentence they end.
_END_RUN = re.compile(r"(?:\.{2,}|…+|[.!?;。！？；]+)[\"'”’」』）)\]】》〉]*")
_CJK_ENDS = frozenset("。！？；")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_TOKEN_BEFORE = re.compile(r"(\S+)$")

# Abbreviations (lower case, final dot dropped) that almost never end a sentence, even before a capital.
# fmt: off
_NEVER_END = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "sr", "st", "mt", "gen", "col", "capt", "lt", "sgt", "gov", "sen", "rep",
    "rev", "hon", "vs", "e.g", "i.e", "cf", "viz", "approx", "fig", "figs", "eq", "eqs", "ref", "refs", "sec",
    "ch", "vol", "pp", "no", "nos", "art", "dept", "est", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
    "sep", "sept", "oct", "nov", "dec",
})
# fmt: on
# Of those, the ones that are also ordinary words: only an abbreviation when a number follows ("No. 5").
_BEFORE_NUMBER = frozenset({"no", "nos", "art", "sec", "ch", "vol", "pp", "mar"})


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped; joined with the whitespace between them they give back `text`."""
    return [text[start:end] for start, end in sentence_spans(text)]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each sentence in `text`, in order, excluding surrounding whitespace."""
    spans: list[tuple[int, int]] = []
    block_start = 0
    for blank in _BLANK_LINE.finditer(text):
        spans.extend(_block_spans(text, block_start, blank.start()))
        block_start = blank.end()
    spans.extend(_block_spans(text, block_start, len(text)))
    return spans


def _block_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    sentence_start = start
    for match in _END_RUN.finditer(text, start, end):
        cut = match.end()
        if _ends_sentence(text, match, end, sentence_start):
            spans.append(_trim(text, sentence_start, cut))
            sentence_start = cut
    spans.append(_trim(text, sentence_start, end))
    return [(s, e) for s, e in spans if e > s]


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _ends_sentence(text: str, match: re.Match[str], limit: int, sentence_start: int) -> bool:
    run = match.group()
    if any(ch in _CJK_ENDS for ch in run):
        return True  # Chinese puts no space after a full stop, so the mark alone ends the sentence
    cut = match.end()
    following = text[cut] if cut < limit else ""
    if following and not following.isspace() and not _is_cjk(following):
        return False  # "3.14", "example.com", "e.g.," and "?q=1" keep going
    terminators = run.rstrip("\"'”’」』）)]】》〉")
    if terminators[-1] in "!?;":
        return True
    next_char = _next_visible(text, cut, limit)
    if next_char.islower():
        return False  # a lower-case continuation means the dot was not a full stop ("approx. five", "Wait... what")
    if terminators != ".":
        return True
    token = _TOKEN_BEFORE.search(text, max(0, match.start() - 40), match.start())
    word = token.group(1).lstrip("(\"'“‘[").lower() if token else ""
    if word in _NEVER_END and (word not in _BEFORE_NUMBER or next_char.isdigit()):
        return False
    if len(word) == 1 and word.isalpha():
        return False  # an initial, as in "J. Smith"
    # A number opening the sentence is a list marker, as in "1. Install".
    opens_sentence = token is not None and not text[sentence_start : token.start()].strip()
    return not (word.isdigit() and len(word) <= 3 and opens_sentence)


def _next_visible(text: str, index: int, limit: int) -> str:
    while index < limit and text[index].isspace():
        index += 1
    while index < limit and text[index] in "\"'“‘(［[（「『《":
        index += 1
    return text[index] if index < limit else ""


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return (
        0x3400 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0x3000 <= code <= 0x303F
        or 0xFF00 <= code <= 0xFFEF
        or 0x20000 <= code <= 0x2FFFF
    )
