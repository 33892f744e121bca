"""Identifiers in conversation text, verbatim: what a summary of compacted turns must never paraphrase.

File paths, URLs, e-mail addresses, ids (hex digests, UUIDs, keys like `t-42/r3`, issue and ticket numbers, codes of
capitals and digits such as booking references),
versions, numbers with their unit or currency, dates and times, and quoted or back-ticked names, in English and
Chinese. Deterministic and model-free: compaction's *Key data* section (memory.context.summary) is built from it,
and its benchmark checks that every identifier of a compacted span survives in the summary or behind a reference.

Bounded time on any input. A few patterns (an e-mail's local part, a path, a number waiting for its unit, a dashed
id) read from each place they may start to the end of a run of identifier characters before failing, so a long run
costs the square of its length. Where every such run is short the patterns run as written; where one is long, each
alternative is tried only where it may start and, after a start where it fails, not again within the stretch where
it fails the same way (each stretch says why). Both find the same, start for start
(tests/memory/context/test_identifiers_speed.py checks it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

__all__ = ["Identifier", "identifiers", "values"]


@dataclass(frozen=True)
class Identifier:
    """One identifier: its kind and its text exactly as written."""

    kind: str
    text: str


@dataclass(frozen=True)
class _Way:
    """One alternative of a pattern as written (`alternative`) and how it is tried when a run is long: `tried`,
    searched for; or, for one that could read a long run again from every start in it, `tried` only at the
    positions `starts` gives, and after a start where it fails, not at those up to the end of `stretch` (matched
    there), where it fails as well."""

    alternative: str
    tried: re.Pattern[str]
    starts: Callable[[str], Iterator[int]] | None = None
    stretch: re.Pattern[str] | None = None


def _way(alternative: str, *, tried: str | None = None, starts: str | Callable[[str], Iterator[int]] | None = None,
         stretch: str | None = None) -> _Way:
    if isinstance(starts, str):
        where = re.compile(starts)

        def starts(text: str) -> Iterator[int]:
            return (m.start() for m in where.finditer(text))
    return _Way(alternative, re.compile(tried or alternative), starts,
                re.compile(stretch) if stretch is not None else None)


# A maximal run of [A-Za-z0-9_-] with a letter, up to its last digit after that letter (read once per run).
_ID_RUN = re.compile(r"(?<![A-Za-z0-9_-])[0-9_-]*+[A-Za-z][A-Za-z0-9_-]*\d")
_LETTER_START = re.compile(r"\b[A-Za-z]")


def _id_starts(text: str) -> Iterator[int]:
    """Where a dashed id may start: a word's first letter with a digit later in its run of [A-Za-z0-9_-] (the
    alternative's lookahead), found in one pass rather than by a lookahead reading the run again per start."""
    for run in _ID_RUN.finditer(text):
        yield from (m.start() for m in _LETTER_START.finditer(text, run.start(), run.end() - 1))


_UNIT = r"(?:元|块|美元|欧元|万|亿|%|％|(?:percent|dollars?|euros?|yuan|USD|EUR|CNY|RMB|GB|MB|KB|TB|ms|s|km|kg|mg)\b)"
_ID_WORDS = r"[A-Za-z][A-Za-z0-9]*(?:[-_/][A-Za-z0-9]+)+\b"

# Tried in this order; a span one pattern took is not read again by a later one (a URL's path is not a path). A
# kind given as ways is one whose alternatives could read a long run again from every start in it.
_PATTERNS: tuple[tuple[str, str | tuple[_Way, ...]], ...] = (
    ("url", r"\bhttps?://[^\s<>\"'）)\]，。；]+[^\s<>\"'）)\]，。；.,;:!?]"),
    # The local part runs to the end of its run of [\w.+-] ("@" is not in it): a later start in the run meets the
    # same "@" and domain.
    ("email", (_way(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b", starts=r"\b(?=[\w.+-])", stretch=r"[\w.+-]+"),)),
    ("path", (
        # Fails only after reading one segment at most, and a start inside it fails at once.
        _way(r"(?<![\w/])(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?"),
        # A later start in the same chain of segments can end only in a segment this start could end in.
        _way(r"\b[\w.-]+(?:/[\w.@+-]+)+\.\w{1,8}\b", starts=r"\b(?=[\w.-])", stretch=r"[\w.-]+(?:/[\w.@+-]+)*"),
        _way(r"\b[A-Za-z]:\\(?:[\w .-]+\\)*[\w .-]+"),
    )),
    ("uuid", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
    ("digest", r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b"),
    ("code", r"`([^`\n]{1,120})`"),
    ("quoted", r"\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”|「([^」\n]{1,80})」|《([^》\n]{1,80})》"),
    ("date", r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
             r"|\d{4}年\d{1,2}月(?:\d{1,2}日)?|\d{1,2}月\d{1,2}日"),
    ("time", r"(?i:\b\d{1,2}:\d{2}(?::\d{2})?\s?(?:[ap]\.?m\.?)?\b)"),
    ("amount", (
        _way(r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?[kKmM]\b)?"),
        # No unit begins with a digit or a comma, so the number runs to the end of its run of [\d,] (possessive:
        # never given back) and a later start in the run meets the same unit, or none.
        _way(r"\d[\d,]*+(?:\.\d+)?\s?" + _UNIT, starts=r"\d", stretch=r"[\d,]+"),
    )),
    ("version", r"\bv?\d+\.\d+(?:\.\d+)*(?:[-+][\w.]+)?\b"),
    ("id", (
        # A later start in the same chain of words has the same rest of the chain to end in, less of it.
        _way(r"\b(?=[A-Za-z0-9_-]*\d)" + _ID_WORDS, tried=r"\b" + _ID_WORDS, starts=_id_starts,
             stretch=r"[A-Za-z0-9]+(?:[-_/][A-Za-z0-9]+)*"),
        _way(r"#\d+\b"),
        _way(r"\b[A-Z]{2,}-\d+\b"),
        # A code of capitals and digits (a booking reference, a flight or order number: NO6JO3, HAT001, ZX48213):
        # one start per word, so a long run is read once.
        _way(r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,}\b"),
    )),
    ("number", r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w.])"),
)
_COMPILED = tuple((kind, re.compile(p if isinstance(p, str) else "|".join(w.alternative for w in p)),
                   () if isinstance(p, str) else p) for kind, p in _PATTERNS)

# A pattern cannot match a text holding none of its characters: skipping it there is most of the speed on prose.
_NEEDS: dict[str, tuple[str, ...]] = {
    "url": ("://",), "email": ("@",), "path": ("/", "\\"), "uuid": ("-",), "code": ("`",),
    "quoted": ("\"", "“", "「", "《"), "date": ("-", "年", "月"), "time": (":",), "version": (".",),
}
# The characters a start of the ways' patterns reads before failing: a pattern as written costs at most the length
# of the longest run of them per character, and runs longer than this take the ways.
_LONG_RUN = re.compile(r"[\w.+@/,#~-]{100,}")


def identifiers(text: str) -> tuple[Identifier, ...]:
    """The identifiers of `text` in order of appearance, each once (the first kind that claims it wins)."""
    claimed = bytearray(len(text))  # 1 where an earlier pattern took the character
    found: list[tuple[int, Identifier]] = []
    long_run = _LONG_RUN.search(text) is not None
    for kind, pattern, ways in _COMPILED:
        needs = _NEEDS.get(kind)
        if needs is not None and not any(n in text for n in needs):
            continue
        for match in _matches(ways, text) if ways and long_run else pattern.finditer(text):
            start, end = match.span()
            if any(claimed[start:end]):
                continue
            value = next((g for g in match.groups() if g), None) if match.groups() else None
            shown = (value or match.group(0)).strip()
            if kind in ("number", "amount"):
                shown = shown.rstrip(",")  # "1," or "$304," ends a clause, not a number
            if not shown or (kind == "number" and len(shown) < 2):
                continue  # a lone digit ("step 2") says too little to be worth keeping verbatim
            claimed[start:end] = b"\x01" * (end - start)
            found.append((start, Identifier(kind, shown)))
    seen: set[str] = set()
    out = []
    for _, ident in sorted(found, key=lambda f: f[0]):
        if ident.text not in seen:
            seen.add(ident.text)
            out.append(ident)
    return tuple(out)


_WORDS = re.compile(r"[\w.@+/:-]+")
_CODE = re.compile(r"[A-Z]{2,6}")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")
_LONG_NUMBER = 5  # digits: a shorter bare number is a count, an amount or a year, not a value to match on


def values(text: str) -> tuple[str, ...]:
    """The value-like words of `text` in order, a rougher cut than identifiers() to tell which values two texts
    share in one linear pass: codes of capitals (ORD, USA), words with a letter and a digit or an "@" (HAT271,
    user_42, a@b.io), and numbers of _LONG_NUMBER digits or more (dates, phone and order numbers); not field names
    (payment_methods), nor counts."""
    words = (w.rstrip(".,:;") for w in _WORDS.findall(text))
    return tuple(w for w in words if _CODE.fullmatch(w) or "@" in w or (_DIGIT.search(w) is not None and (
        _LETTER.search(w) is not None or len(_DIGIT.findall(w)) >= _LONG_NUMBER)))


def _matches(ways: Sequence[_Way], text: str) -> Iterator[re.Match[str]]:
    """What `finditer` of the ways' alternation finds: the leftmost start where one matches, the first way there,
    then on after the match (no way matches the empty string)."""
    finders = [_finder(way, text) for way in ways]
    found = [find(0) for find in finders]
    while True:
        live = [(m.start(), i, m) for i, m in enumerate(found) if m is not None]
        if not live:
            return
        _, _, match = min(live, key=lambda f: f[:2])
        yield match
        for i, m in enumerate(found):
            if m is not None and m.start() < match.end():
                found[i] = finders[i](match.end())


def _finder(way: _Way, text: str) -> Callable[[int], re.Match[str] | None]:
    """The way's leftmost match at or after a position (asked with positions past the last match it gave)."""
    if way.starts is None or way.stretch is None:
        return lambda floor: way.tried.search(text, floor)
    starts, stretch = way.starts(text), way.stretch
    dead = 0  # the way fails at every start before this one

    def find(floor: int) -> re.Match[str] | None:
        nonlocal dead
        for start in starts:
            if start < max(floor, dead):
                continue
            match = way.tried.match(text, start)
            if match is not None:
                return match
            failed = stretch.match(text, start)
            dead = max(start + 1, failed.end() if failed is not None else 0)
        return None
    return find
