"""One line per tool call of a compacted span: the tool, its arguments and what it found, so that an agent working
from the summary does not make the calls again; and what else a summary takes from calls (printed, retried).

A line reads `name {arguments} → finding`: the arguments as compact JSON with long values cut, the finding short
and deterministic. It is the result's first error line when the result reports errors (and how many lines do),
else the values a next call may need, the most useful that fit: ids (values with letters and digits, values of
keys named like ids, the keys of an object keyed by ids), then codes, names and dates, other short values, times
and amounts, numbers. A JSON result keeps its shape: top-level keys name what they hold, lists are written item by
item (`[a b; c d]`; a result that is a list `N items: a b; c d`), a number in an item goes with its key, and an
item's value the call's arguments state under the same key is left out. A text result gives its identifiers of
any kind (memory.context.identifiers) in order; with no id, code or name, its first line; "(empty)" when empty.
The same call made again (the same tool and arguments) is one line, at its last call, with its count and latest
finding. Reading a result into its values, and writing those that fit, is memory.context.findings' job.
"""


from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from memory.context.findings import DATUM, DETAIL, ID, IDS, SCAN_CHARS, SHORT, VALUE_CHARS, fitted, shape_of
from memory.context.messages import Message, ToolCall

__all__ = ["DETAIL", "IDS", "call_lines", "informative", "printed", "retried", "shorten"]

_ARGUMENT_CHARS = 120
_LIST_ITEMS = 5
_FINDING_CHARS = 160
_LINE_CHARS = 120  # an error line or a first line quoted
# Lines that say something failed: log levels, exception names, a line that begins with "error" or "failed" (not a
# JSON key such as "failed": 0), a JSON "error" field that holds something, and their Chinese words.
_ERROR = re.compile(
    r"\b(?:ERROR|FATAL|CRITICAL|PANIC)\b|\b[A-Z]\w*(?:Error|Exception)\b|Traceback \(most recent call last\)"
    r"|^[^\w\"']*(?i:error|fatal|failed|failure|exception)\b(?![\"'])|\"error\"\s*:\s*+(?!null|false|\"\"|\[\]|\{\})"
    r"|错误|失败|异常|报错",
    re.MULTILINE)
# A tool result that reports its own failure: its call, tried again later, says nothing the retry does not.
_FAILED_RESULT = re.compile(
    r"\b(error|exception|traceback|failed|failure|not found|timed? ?out|denied|invalid)\b|错误|失败|异常|超时",
    re.IGNORECASE)
_FAILURE_HEAD = 300  # a failure shows in the first characters of a result, not deep in its data
_NO_DATA = re.compile(r'\(empty\)|\(no result\)|"|\d+ lines, first: "')


def call_lines(messages: Sequence[Message],
               forms: Sequence[tuple[int, int]] = ((_FINDING_CHARS, DETAIL),)) -> list[tuple[str, ...]]:
    """The tool calls of `messages` (a span, its calls answered within it) as lines, in call order, each written
    once per form (chars, upto): its finding within about `chars` characters, of the values ranked `upto` or better
    (IDS: ids, codes, names and dates; DETAIL: everything)."""
    results = _answers(messages)
    # (name, arguments) -> (times made, the last call, the index of its message)
    calls: dict[tuple[str, str], tuple[int, ToolCall, int]] = {}
    for message in messages:
        for call in message.tool_calls:
            key = (call.name, _same(call.arguments))
            times = calls.pop(key, (0,))[0]
            calls[key] = (times + 1, call, message.index)  # re-inserted: the line goes where the call was made last
    lines = []
    for times, call, made in calls.values():
        answer = results.get((made, call.id))
        found = ("(no result)",) * len(forms) if answer is None else _findings(answer.content, call.arguments, forms)
        head = f"{call.name} {_arguments(call.arguments)}{f' ×{times}' if times > 1 else ''} → "
        lines.append(tuple(head + f for f in found))
    return lines


def _answers(messages: Sequence[Message]) -> dict[tuple[int, str], Message]:
    """Each call's answer by the index of the message that made the call and its id (an id may come again later)."""
    out: dict[tuple[int, str], Message] = {}
    made = -1
    for message in messages:
        if message.tool_calls:
            made = message.index
        elif message.role == "tool" and message.tool_call_id is not None:
            out[(made, message.tool_call_id)] = message
    return out


def retried(messages: Sequence[Message], later: Sequence[Message]) -> tuple[set[int], list[str]]:
    """The messages of the calls in `messages` whose results failed and whose tool was called again afterwards (in
    `messages` or `later`), and a note per such call."""
    everything = [*messages, *later]
    calls_at: dict[str, list[int]] = {}
    for position, message in enumerate(everything):
        for call in message.tool_calls:
            calls_at.setdefault(call.name, []).append(position)
    results = _answers(messages)
    gone: set[int] = set()
    notes = []
    for position, message in enumerate(messages):
        if not message.tool_calls:
            continue
        answers = [results.get((message.index, c.id)) for c in message.tool_calls]
        if not all(a is not None and _FAILED_RESULT.search(a.content[:_FAILURE_HEAD]) for a in answers):
            continue
        if all(any(p > position for p in calls_at.get(c.name, ())) for c in message.tool_calls):
            gone.add(message.index)
            gone |= {a.index for a in answers if a is not None}
            notes.append(f"messages[{message.index}]: {', '.join(c.name for c in message.tool_calls)}")
    return gone, notes


def _same(raw: str) -> str:
    """The arguments in one spelling whatever their order and spacing, to tell the same call made again."""
    try:
        return json.dumps(json.loads(raw), sort_keys=True, ensure_ascii=False)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads: the text as it came
        return raw.strip()


def _arguments(raw: str) -> str:
    """A call's arguments as compact JSON, long values cut."""
    try:
        return _cut(json.dumps(_shortened(json.loads(raw) if raw.strip() else {}), ensure_ascii=False),
                    _ARGUMENT_CHARS)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than Python reads: the text as it came
        return _cut(" ".join(raw.split()), _ARGUMENT_CHARS)


def _findings(result: str, called: str, forms: Sequence[tuple[int, int]]) -> tuple[str, ...]:
    """What a tool result found, in each form (chars, upto): in about `chars` characters, of its values ranked
    `upto` or better (`called`: the call's arguments, whose values an item need not repeat)."""
    text = result.strip()
    if not text:
        return ("(empty)",) * len(forms)
    first = _ERROR.search(text)
    if first is not None:
        lines, line, at, last = 0, 0, 0, -1
        for match in _ERROR.finditer(text):
            line += text.count("\n", at, match.start())  # counted on from the last match: one pass
            at = match.start()
            lines, last = (lines + 1, line) if line != last else (lines, last)
        word = first.group(0) if first.group(0).isupper() else "error"
        said = f'"{_line(text, first.start())}"'
        return (f"1 {word} line: {said}" if lines == 1 else f"{lines} {word} lines, first: {said}",) * len(forms)
    shape = shape_of(text, called)
    if shape is None or not any(leaf.rank <= SHORT for leaf in shape.leaves):
        lines = text.count("\n") + 1
        if (shape is not None and shape.tree is not None) or lines == 1:
            return (f'"{_cut(" ".join(text[:SCAN_CHARS].split()), _LINE_CHARS)}"',) * len(forms)
        return (f'{lines} lines, first: "{_line(text, 0)}"',) * len(forms)
    return tuple(fitted(shape, chars, upto) for chars, upto in forms)


def shorten(line: str, part: int) -> str | None:
    """A call line with its finding cut to about 1/`part` of its length, at a separator, marked "…"; None when
    nothing of it would be left."""
    head, arrow, found = line.partition(" → ")
    keep = len(found) // part
    at = max(found.rfind("; ", 0, keep), found.rfind(", ", 0, keep), found.rfind(" ", 0, keep))
    return f"{head}{arrow}{found[:at]} …" if arrow and at > 0 else None


def informative(line: str) -> bool:
    """Whether a call line's finding holds values or an error, not only nothing or a quote of the result's head."""
    return _NO_DATA.match(line, line.find(" → ") + 3) is None if " → " in line else False


def printed(result: str) -> tuple[str, ...]:
    """The ids, codes, names and dates a tool result printed (what a later call may take from it), in the order
    they came; of a result that is a list (a listing, a search's hits) its ids only."""
    text = result.strip()
    shape = shape_of(text, "") if text else None
    worst = DATUM if shape is not None and shape.items is None else ID  # a listing's items' names are options
    return tuple(dict.fromkeys(leaf.value for leaf in shape.leaves if leaf.rank <= worst)) if shape else ()


def _line(text: str, at: int) -> str:
    """The line of `text` holding position `at`, spaces folded, cut to _LINE_CHARS."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return _cut(" ".join(text[start:end if end >= 0 else len(text)].split()), _LINE_CHARS)


def _shortened(value: Any) -> Any:
    if isinstance(value, str):
        return _cut(value, VALUE_CHARS)
    if isinstance(value, list):
        return [_shortened(v) for v in value[:_LIST_ITEMS]] + (["…"] if len(value) > _LIST_ITEMS else [])
    if isinstance(value, dict):
        return {k: _shortened(v) for k, v in value.items()}
    return value


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "…"
