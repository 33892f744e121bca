"""A long log: its first and last lines and every error line between, with a count of what was left out."""

from __future__ import annotations

import re

__all__ = ["LogLines"]

# A log line starts with a date, a time or a level; prose and code do not, so they are never cut as a log.
_LOG_LINE = re.compile(r"^\s*\[?(\d{4}-\d{2}-\d{2}|\d{2}:\d{2}:\d{2}|(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\b)")
_ERROR = re.compile(r"\b(error|exception|traceback|fatal|failed|panic|critical)\b|错误|异常|失败", re.IGNORECASE)


class LogLines:
    """More than head + tail lines, most of them log lines → head, the error lines in between, tail."""

    name = "logs"

    def __init__(self, head: int = 20, tail: int = 20, errors: int = 50) -> None:
        self.head = head
        self.tail = tail
        self.errors = errors

    def reduce(self, text: str) -> str | None:
        lines = text.splitlines()
        if len(lines) <= self.head + self.tail or sum(1 for line in lines if _LOG_LINE.match(line)) * 2 < len(lines):
            return None
        middle = lines[self.head:len(lines) - self.tail]
        errors = [line for line in middle if _ERROR.search(line)][:self.errors]
        left_out = len(middle) - len(errors)
        return "\n".join([*lines[:self.head], f"[… {left_out} lines left out; the error lines among them follow]",
                          *errors, "[…]", *lines[-self.tail:]])
