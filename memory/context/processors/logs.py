"""A long log: its first and last lines and the error lines between, as many as fit the room, the cuts counted."""

from __future__ import annotations

import bisect
import re

from memory.context.processors.base import Processed
from memory.context.processors.fit import fits, line_tokens
from memory.tokens import TokenCounter

__all__ = ["LogLines"]

# A log line starts with a date, a time or a level; prose and code do not, so they are never cut as a log.
_LOG_LINE = re.compile(r"^\s*\[?(\d{4}-\d{2}-\d{2}|\d{2}:\d{2}:\d{2}|(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\b)")
_ERROR = re.compile(r"\b(error|exception|traceback|fatal|failed|panic|critical)\b|错误|异常|失败", re.IGNORECASE)
_FIRST = 3  # head and tail lines taken before the error lines; the room left after those goes to more of both


class LogLines:
    """Lines most of which are log lines → head, the error lines in between, tail; longer head and tail with room."""

    name = "logs"

    def reduce(self, text: str, room: int, counter: TokenCounter) -> Processed | None:
        """The lines that fit `room`; None when `text` is no log or already fits."""
        lines = text.splitlines()
        if len(lines) < 3 or sum(1 for line in lines if _LOG_LINE.match(line)) * 2 < len(lines):
            return None
        if fits(text, room, counter):
            return None
        total = len(lines)
        errors = [i for i, line in enumerate(lines) if _ERROR.search(line)]
        widest = _note(total, total, total, total, total, total)
        picked = _Pick(lines, errors, counter, room - counter.count(widest) - 1, counter.count(_gap(total)) + 1)
        picked.ends(_FIRST)
        for i in errors:
            if picked.head <= i < total - picked.tail and not picked.error(i):
                break
        picked.ends(total)
        reduced, left_out = picked.write()
        while counter.count(reduced) > room and picked.drop():  # the running count is close; the exact one decides
            reduced, left_out = picked.write()
        return Processed(self.name, reduced, left_out)


class _Pick:
    """The lines chosen so far and the tokens left for more, by a running count."""

    def __init__(self, lines: list[str], errors: list[int], counter: TokenCounter, budget: int, gap: int) -> None:
        self.lines = lines
        self.all_errors = errors  # the indexes of every error line, in order
        self.counter = counter
        self.left = budget
        self.gap = gap  # the tokens of a gap marker: each error line taken may open one
        self.head = self.tail = 0
        self.errors: dict[int, None] = {}  # the error lines taken, in order

    def _take(self, i: int, extra: int = 0) -> bool:
        if i in self.errors:
            return True
        cost = line_tokens(self.lines[i], self.counter) + extra
        if cost > self.left:
            return False
        self.left -= cost
        return True

    def ends(self, most: int) -> None:
        """Lengthen head and tail by turns, up to `most` lines each, while they fit."""
        total = len(self.lines)
        while self.head + self.tail < total:
            if self.tail < self.head and self.tail < most:
                if not self._take(total - 1 - self.tail):
                    return
                self.tail += 1
            elif self.head < most:
                if not self._take(self.head):
                    return
                self.head += 1
            else:
                return

    def error(self, i: int) -> bool:
        """Take error line `i` if it fits."""
        if not self._take(i, self.gap):
            return False
        self.errors[i] = None
        return True

    def drop(self) -> bool:
        """Give up one line (from the longer end, else the last error line); False when none is left."""
        if self.head or self.tail:
            if self.head >= self.tail:
                self.head -= 1
            else:
                self.tail -= 1
        elif self.errors:
            self.errors.popitem()
        else:
            return False
        return True

    def write(self) -> tuple[str, str]:
        """The log as picked, with a marker for each run of lines left out, and what it leaves out."""
        total, head, tail = len(self.lines), self.head, self.tail
        end = total - tail
        shown = sorted({*range(head), *range(end, total), *self.errors})
        between = bisect.bisect_left(self.all_errors, end) - bisect.bisect_left(self.all_errors, head)
        taken = sum(1 for i in self.errors if head <= i < end)
        out = [_note(len(shown), total, head, tail, taken, between)]
        last = -1
        for i in shown:
            if i > last + 1:
                out.append(_gap(i - last - 1))
            out.append(self.lines[i])
            last = i
        if last < total - 1:
            out.append(_gap(total - 1 - last))
        but = f" but the {taken:,} error lines shown" if taken else ""
        errors = f"{between - taken:,} error lines among them" if between > taken else "none of them an error line"
        left_out = f"{total - len(shown):,} of the {total:,} lines (lines {head + 1:,}-{end:,}{but}), {errors}"
        return "\n".join(out), left_out


def _note(shown: int, total: int, head: int, tail: int, taken: int, errors: int) -> str:
    return (f"[showing {shown:,} of {total:,} lines: the first {head:,}, the last {tail:,} and {taken:,} of the "
            f"{errors:,} error lines between]")


def _gap(lines: int) -> str:
    return f"[… {lines:,} lines]"
