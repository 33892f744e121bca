"""Any JSON value cut to a token room: every key and identifier kept, lists cut to what fits, prose shortened."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Any

from memory.context.processors.base import Processed
from memory.context.processors.fit import CHARS_PER_TOKEN
from memory.tokens import TokenCounter

__all__ = ["JsonValue"]

_PROSE_CHARS = 200  # a prose string longer than this is cut to about this length
_TIGHT_PROSE_CHARS = 40  # and to this when the room cannot hold the short lists otherwise: ids go after prose
# Prose has spaces, or is written in a script without them; identifiers, codes, paths and URLs have neither.
_PROSE = re.compile(r"\s|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_SPACE = re.compile(r"\s")
# A list taking at most this share of the room (a profile's reservation ids, a row's tags) stays whole while the
# long lists beside it are cut: it costs little, and its ids are what the agent acts on.
_SHORT_SHARE = 20


class JsonValue:
    """A JSON object or list → the same value, compact, with its lists cut to the items that fit the room."""

    name = "json"

    def reduce(self, text: str, room: int, counter: TokenCounter) -> Processed | None:
        """The whole value when it fits compact; else the first of the steps below that fits, else the smallest."""
        stripped = text.strip()
        if not stripped.startswith(("{", "[")):
            return None
        try:
            data = json.loads(stripped)
            fit = _Fit(data, room, counter, max(room, 1) * CHARS_PER_TOKEN)
            if _within(data, fit.limit):  # else it cannot fit, and writing out all of a long value takes time
                whole = _dumps(data)
                if counter.count(whole) <= room:
                    return None if whole == stripped else Processed(self.name, whole, "")
            found = fit.steps()
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the interpreter follows
            return None
        return Processed(self.name, found.text, found.left_out)


@dataclass(frozen=True)
class _Fit:
    """The renderings of one value tried against one room."""

    data: Any
    room: int
    counter: TokenCounter
    limit: int  # characters: a rendering past them is taken not to fit

    def steps(self) -> _Rendering:
        """Each step gives up more, in the order the agent needs things least: prose first, then the items of long
        lists, then short lists; the first that fits is kept, else the smallest form."""
        for prose in (_PROSE_CHARS, _TIGHT_PROSE_CHARS):
            whole = self.fitting(sys.maxsize, 0, prose)
            if whole is not None:
                return whole
        short = self.limit // _SHORT_SHARE
        for prose, keep in ((_PROSE_CHARS, short), (_TIGHT_PROSE_CHARS, short), (_TIGHT_PROSE_CHARS, 0)):
            found = self.longest(keep, prose)
            if self.counter.count(found.text) <= self.room:
                break
        return found

    def fitting(self, cap: int, short: int, prose: int) -> _Rendering | None:
        """The rendering (see _Rendering) if it fits the room."""
        try:
            attempt = _render(self.data, cap, short, prose, self.limit)
        except _TooLong:
            return None
        return attempt if self.counter.count(attempt.text) <= self.room else None

    def longest(self, short: int, prose: int) -> _Rendering:
        """The value with its lists longer than `short` characters cut to one length, the longest that fits (else
        cut to none: the smallest form).

        One length for all keeps nested lists in step with the list holding them; it is found by doubling, then by
        halving the gap, and each try renders only the items it keeps.
        """
        best = _render(self.data, 0, short, prose, None)
        if not best.lists or self.counter.count(best.text) > self.room:
            return best
        cap = 1
        while (attempt := self.fitting(cap, short, prose)) is not None:
            best = attempt
            if not attempt.lists:
                return best
            cap *= 2
        low, high = cap // 2, cap
        while high - low > 1:
            middle = (low + high) // 2
            attempt = self.fitting(middle, short, prose)
            if attempt is None:
                high = middle
            else:
                low, best = middle, attempt
        return best


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


class _TooLong(Exception):
    """A rendering passed its character limit."""


class _Rendering:
    """A value with its lists cut to `cap` items (but those within `short` characters) and its prose to `prose`
    characters."""

    def __init__(self, cap: int, short: int, prose: int, limit: int | None) -> None:
        self.cap = cap
        self.short = short
        self.prose_chars = prose
        self.limit = limit
        self.size = 0  # the characters written so far, about
        self.lists: dict[str, list[int]] = {}  # where lists were cut -> the length of each list cut there
        self.prose: Counter[str] = Counter()  # field -> how many of its values were shortened
        self.text = ""
        self.left_out = ""

    def value(self, value: Any, path: str, key: str) -> Any:
        if isinstance(value, dict):
            out = {}
            for name, item in value.items():
                self.size += len(name) + 4
                out[name] = self.value(item, f"{path}.{name}" if path else name, name)
            return out
        if isinstance(value, list):
            kept = value
            if len(value) > self.cap and not _within(value, self.short):
                self.lists.setdefault(path, []).append(len(value))
                kept = value[:self.cap]
            self.size += 2
            return [self.value(item, path + "[]", key) for item in kept]
        if isinstance(value, str):
            if len(value) > _PROSE_CHARS and _PROSE.search(value):
                value = _shorten(value, self.prose_chars)
                self.prose[key] += 1
            self.size += len(value) + 3
        else:
            self.size += 5
        if self.limit is not None and self.size > self.limit:
            raise _TooLong
        return value

    def describe(self) -> tuple[list[str], list[str]]:
        """What the rendering shows of each thing it cut, and what it leaves out of it."""
        shown, left = [], []
        cap = self.cap
        for path, lengths in self.lists.items():
            of = f" of {path}" if path else ""
            if len(lengths) == 1:
                total = lengths[0]
                if cap:
                    shown.append(f"showing items 1-{cap:,} of {total:,}{of}" if cap > 1 else
                                 f"showing item 1 of {total:,}{of}")
                    left.append(f"items {cap + 1:,}-{total:,} of {total:,}{of}")
                else:
                    shown.append(f"showing none of the {total:,} items{of}")
                    left.append(f"all {total:,} items{of}")
            else:
                missing = sum(lengths) - cap * len(lengths)
                shown.append(f"{len(lengths):,} {path} lists cut to their first {cap:,} items "
                             f"({missing:,} items not shown)")
                left.append(f"{missing:,} items past the first {cap:,} of {len(lengths):,} {path} lists")
        if self.prose:
            fields = ", ".join(name or "list items" for name in self.prose)
            count = sum(self.prose.values())
            shown.append(f"long text fields cut: {fields}")
            left.append(f"the end of {count:,} long text field{'s' if count > 1 else ''} ({fields})")
        return shown, left


def _render(data: Any, cap: int, short: int, prose: int, limit: int | None) -> _Rendering:
    """`data` rendered as _Rendering describes; raises _TooLong past `limit` characters."""
    rendering = _Rendering(cap, short, prose, limit)
    body = _dumps(rendering.value(data, "", ""))
    shown, left = rendering.describe()
    rendering.text = f"[{'; '.join(shown)}]\n{body}" if shown else body
    rendering.left_out = "; ".join(left)
    return rendering


def _within(value: Any, chars: int) -> bool:
    """Whether `value` written compact takes at most about `chars` characters (it stops counting past them)."""
    left = chars
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            left -= 2 + sum(len(k) + 4 for k in item)
            if left >= 0:
                pending.extend(item.values())
        elif isinstance(item, list):
            left -= 2 + len(item)
            if left >= 0:
                pending.extend(item)
        else:
            left -= len(item) + 3 if isinstance(item, str) else 5
        if left < 0:
            return False
    return True


def _shorten(prose: str, chars: int) -> str:
    """The first `chars` characters, back to the last space when one is near the end, and "…"."""
    cut = prose[:chars]
    spaces = [m.start() for m in _SPACE.finditer(cut, chars * 4 // 5)]
    return (cut[:spaces[-1]] if spaces else cut).rstrip() + "…"
