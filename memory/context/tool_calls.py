"""One line per tool call of a compacted span: the tool, its arguments and what it found, so that an agent working
from the summary does not make the calls again; and what else a summary takes from calls (printed, retried).

A line reads `name {arguments} → finding`: the arguments as compact JSON with long values cut, the finding short
and deterministic. It is the result's first error line when the result reports errors (and how many lines do),
else the values a next call may need, the most useful that fit: ids (values with letters and digits, values of
keys named like ids, the keys of an object keyed by ids), then codes, names and dates, other short values, times
and amounts, numbers. A JSON result keeps its shape: top-level keys name what they hold, lists are written item by
item (`[a b; c d]`; a result that is a list `N items: a b; c d`), a number in an item goes with its key, and an
item's value the call's arguments state under the same key is left out. A text result gives its identifiers
(memory.context.identifiers) in order; with no id, code or name, its first line; "(empty)" when there is nothing.
The same call made again (the same tool and arguments) is one line, at its last call, with its count and latest
finding.
"""


from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from memory.context.identifiers import identifiers
from memory.context.messages import Message, ToolCall

__all__ = ["DETAIL", "IDS", "call_lines", "informative", "printed", "retried", "shorten"]

_ARGUMENT_CHARS = 120
_VALUE_CHARS = 40  # an argument's string value, and a JSON result's value taken whole
_LIST_ITEMS = 5
_FINDING_CHARS = 160
_LINE_CHARS = 120  # an error line or a first line quoted
_SCAN_CHARS = 4000  # identifiers deep in a long text result are rows of data, read through the span's reference
_MAX_VALUES = 400  # and so are the values deep in a long JSON result
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
# A code as written in data: letters and digits in one token (NO6JO3, HAT001, mia_li_3668, credit_card_4421).
_ID_LIKE = re.compile(r"(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[A-Za-z0-9][\w.:/#@+-]*")
_CODE_IN_TEXT = re.compile(r"\b(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{4,}\b")
_CAPITALS = re.compile(r"[A-Z]{2,6}")
_PROPER = re.compile(r"[A-Z][a-z]+(?:[ '-][A-Z][a-z]+){0,2}")  # a name as written: Sophia, New York
# Keys whose values identify something whatever they look like: id, user_id, userId, flight_number, 订单号.
_ID_KEY = re.compile(r"(?i:(?:^|[_\s.-])(?:id|ids|uuid|no|number|code|key|ref|sku)$)"
                     r"|[a-z](?:Id|ID|No|Number|Code|Ref)$|号$|编号|代码")
# What every kind of identifier holds (memory.context.identifiers): a text without any is none, and is not read.
_MAYBE_IDENTIFIER = re.compile(r"[\d/\\@`\"“「《]")
_NAME_KEY = re.compile(r"name|名|人$", re.IGNORECASE)
# Ranks, the most useful first; the line quotes the result's head when nothing ranks _SHORT or better.
_ID, _DATUM, _SHORT, _MEASURE, _NUMBER = 0, 1, 2, 3, 4
IDS, DETAIL = _DATUM, _NUMBER
_NO_DATA = re.compile(r'\(empty\)|\(no result\)|"|\d+ lines, first: "')
_KIND_RANK = {"id": _ID, "uuid": _ID, "digest": _ID, "email": _ID, "url": _ID, "path": _ID, "code": _DATUM,
              "quoted": _DATUM, "date": _DATUM, "version": _SHORT, "time": _MEASURE, "amount": _MEASURE,
              "number": _NUMBER}


def call_lines(messages: Sequence[Message],
               forms: Sequence[tuple[int, int]] = ((_FINDING_CHARS, DETAIL),)) -> list[tuple[str, ...]]:
    """The tool calls of `messages` (a span, its calls answered within it) as lines, in call order, each written
    once per form (chars, upto): its finding within about `chars` characters, of the values ranked `upto` or better
    (IDS: ids, codes, names and dates; DETAIL: everything)."""
    results = {m.tool_call_id: m.content for m in messages if m.role == "tool"}
    calls: dict[tuple[str, str], tuple[int, ToolCall]] = {}  # (name, arguments) -> (times made, the last call)
    for message in messages:
        for call in message.tool_calls:
            key = (call.name, _same(call.arguments))
            times = calls.pop(key, (0, call))[0]
            calls[key] = (times + 1, call)  # re-inserted: the line goes where the call was made last
    lines = []
    for times, call in calls.values():
        result = results.get(call.id)
        found = ("(no result)",) * len(forms) if result is None else _findings(result, call.arguments, forms)
        head = f"{call.name} {_arguments(call.arguments)}{f' ×{times}' if times > 1 else ''} → "
        lines.append(tuple(head + f for f in found))
    return lines


def retried(messages: Sequence[Message], later: Sequence[Message]) -> tuple[set[int], list[str]]:
    """The messages of the calls in `messages` whose results failed and whose tool was called again afterwards (in
    `messages` or `later`), and a note per such call."""
    everything = [*messages, *later]
    calls_at: dict[str, list[int]] = {}
    for position, message in enumerate(everything):
        for call in message.tool_calls:
            calls_at.setdefault(call.name, []).append(position)
    results = {m.tool_call_id: m for m in messages if m.role == "tool"}
    gone: set[int] = set()
    notes = []
    for position, message in enumerate(messages):
        if not message.tool_calls:
            continue
        answers = [results.get(c.id) for c in message.tool_calls]
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
    except ValueError:
        return raw.strip()


def _arguments(raw: str) -> str:
    """A call's arguments as compact JSON, long values cut."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return _cut(" ".join(raw.split()), _ARGUMENT_CHARS)
    return _cut(json.dumps(_shortened(value), ensure_ascii=False), _ARGUMENT_CHARS)


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
    shape = _shape(text, called)
    if shape is None or not any(leaf.rank <= _SHORT for leaf in shape.leaves):
        lines = text.count("\n") + 1
        if (shape is not None and shape.tree is not None) or lines == 1:
            return (f'"{_cut(" ".join(text[:_SCAN_CHARS].split()), _LINE_CHARS)}"',) * len(forms)
        return (f'{lines} lines, first: "{_line(text, 0)}"',) * len(forms)
    return tuple(_fitted(shape, chars, upto) for chars, upto in forms)


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
    they came: of a result that is a list (a listing, a search's hits) its ids only; none when it reports an
    error."""
    text = result.strip()
    if not text or _ERROR.search(text) is not None:
        return ()
    shape = _shape(text, "")
    worst = _DATUM if shape is not None and shape.items is None else _ID  # a listing's items' names are options
    return tuple(dict.fromkeys(leaf.value for leaf in shape.leaves if leaf.rank <= worst)) if shape else ()


def _line(text: str, at: int) -> str:
    """The line of `text` holding position `at`, spaces folded, cut to _LINE_CHARS."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return _cut(" ".join(text[start:end if end >= 0 else len(text)].split()), _LINE_CHARS)


@dataclass(frozen=True)
class _Leaf:
    """One value as written, its rank, and the key it goes with inside an item (None: it speaks for itself)."""

    value: str
    rank: int
    label: str | None = None
    group: str = ""  # the top-level key that names it


# A result's shape: a leaf (its number), a list, or an object ((key, node) pairs; `keyed`: its keys are ids).
_Node = int | tuple[str, list[Any]]


@dataclass(frozen=True)
class _Shape:
    leaves: tuple[_Leaf, ...]
    tree: _Node | None  # None: a text result, its leaves in the order they came
    items: int | None  # a result that is a list: how many


def _shape(text: str, called: str) -> _Shape | None:
    """A result's leaves and shape (JSON) or identifiers (text); None for a bare JSON scalar."""
    if text[0] in "{[":
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict | list):
            leaves: list[_Leaf] = []
            try:
                stated = set(_pairs(json.loads(called))) if called.strip() else set()
            except ValueError:
                stated = set()
            tree = _walk(data, "", 0, leaves, stated, "")
            return _Shape(tuple(leaves), tree, len(data) if isinstance(data, list) else None)
    elif text[0].isdigit() or text[0] == "-":
        try:
            if not isinstance(json.loads(text), dict | list):
                return None
        except ValueError:
            pass
    return _Shape(tuple(_text_values(text[:_SCAN_CHARS])), None, None)


def _pairs(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """The (key, value) pairs of the scalars in a call's arguments."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _pairs(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _pairs(v, key)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield key, str(value)


def _text_values(text: str) -> Iterator[_Leaf]:
    """A text's identifiers and upper-case codes (NO6JO3), in the order they came."""
    found: list[tuple[int, _Leaf]] = []
    at = 0
    for ident in identifiers(text):  # in order of appearance: each is found on from the one before
        at = max(text.find(ident.text, at), at)
        found.append((at, _Leaf(ident.text, _KIND_RANK.get(ident.kind, _NUMBER))))
    known = {leaf.value for _, leaf in found}
    found += [(m.start(), _Leaf(m.group(0), _ID)) for m in _CODE_IN_TEXT.finditer(text) if m.group(0) not in known]
    return (leaf for _, leaf in sorted(found, key=lambda f: f[0]))


def _walk(value: Any, key: str, depth: int, leaves: list[_Leaf], stated: set[tuple[str, str]],
          group: str) -> _Node | None:
    """The node of a JSON value, its leaves added to `leaves` in document order; None when it holds nothing."""
    if len(leaves) >= _MAX_VALUES or isinstance(value, bool) or value is None:
        return None
    if isinstance(value, dict):
        # An object keyed by ids (payment methods by their id): its keys are data, not field names.
        keyed = bool(value) and depth > 0 and all(_ID_LIKE.fullmatch(str(k)) and len(str(k)) <= _VALUE_CHARS
                                                  for k in value)
        pairs: list[tuple[str, _Node]] = []
        for inner_key, inner in value.items():
            name = str(inner_key)
            if keyed:
                leaves.append(_Leaf(name, _ID, None, group))
                at = len(leaves) - 1
                entry = _walk(inner, name, depth + 1, leaves, stated | {("", name)}, group)
                pairs.append((name, ("entry", [at, *(() if entry is None else (entry,))])))
                continue
            node = _walk(inner, name, depth + 1, leaves, stated, name if depth == 0 else group)
            if node is not None:
                pairs.append((name, node))
        return ("keyed" if keyed else "object", pairs) if pairs else None
    if isinstance(value, list):
        nodes = [n for n in (_walk(v, key, depth + 1, leaves, stated, group) for v in value) if n is not None]
        return ("list", nodes) if nodes else None
    text = " ".join(str(value).split()) if not isinstance(value, int | float) else json.dumps(value)
    if not text or (depth > 1 and ((key, text) in stated or ("", text) in stated)):
        return None  # an item repeating the call's arguments (or its entry's own id) says nothing new
    if isinstance(value, str) and len(text) > _VALUE_CHARS:
        start = len(leaves)
        leaves += [_Leaf(leaf.value, leaf.rank, None, group) for leaf in _text_values(text[:_SCAN_CHARS])]
        return ("object", [("", n) for n in range(start, len(leaves))]) if len(leaves) > start else None
    rank = _rank(text, key, isinstance(value, str))
    leaves.append(_Leaf(text, rank, key if depth > 1 and rank == _NUMBER and key else None, group))
    return len(leaves) - 1


def _rank(text: str, key: str, string: bool) -> int:
    if _ID_KEY.search(key):
        return _ID
    if not string:
        return _NUMBER
    whole = identifiers(text) if _MAYBE_IDENTIFIER.search(text) else ()
    if len(whole) == 1 and whole[0].text == text:
        kind = whole[0].kind
        return _SHORT if kind == "date" and len(text) > 10 else _KIND_RANK.get(kind, _SHORT)  # a timestamp: _SHORT
    if _ID_LIKE.fullmatch(text):
        return _ID
    if _CAPITALS.fullmatch(text) or _PROPER.fullmatch(text) or (_NAME_KEY.search(key) and len(text) <= 30):
        return _DATUM
    return _SHORT


def _fitted(shape: _Shape, chars: int, upto: int) -> str:
    """The most useful leaves (ranked `upto` or better) whose rendering fits `chars`, in the result's shape."""
    upto = max(upto, min(leaf.rank for leaf in shape.leaves))  # a result without ids gives what it has
    order = sorted((i for i, leaf in enumerate(shape.leaves) if leaf.rank <= upto),
                   key=lambda i: (shape.leaves[i].rank, i))
    chosen: set[int] = set()
    opened: set[str] = set()
    spent = 0
    for i in order:
        leaf = shape.leaves[i]
        cost = len(leaf.value) + 2 + (len(leaf.label) + 1 if leaf.label else 0)
        cost += len(leaf.group) + 1 if leaf.group not in opened else 0
        if spent + cost <= chars:
            chosen.add(i)
            opened.add(leaf.group)
            spent += cost
    chosen = chosen or set(order[:1])
    text = _written(shape, chosen)
    picked = [i for i in order if i in chosen]
    while len(text) > chars and len(picked) > 1:  # the containers' marks were not counted: the least useful go
        chosen.discard(picked.pop())
        text = _written(shape, chosen)
    return text


def _written(shape: _Shape, chosen: set[int]) -> str:
    if shape.tree is None:
        return ", ".join(shape.leaves[i].value for i in sorted(chosen))
    body = _render(shape.tree, shape.leaves, chosen, top=True)
    return f"{shape.items} items: {body}" if shape.items is not None else body


def _render(node: _Node, leaves: Sequence[_Leaf], chosen: set[int], *, top: bool = False) -> str:
    """A node's chosen leaves: an object's top-level keys name their values ("key a b; key c"), a list's items are
    separated by "; " and bracketed below the top, a list of plain values is written "a, b"."""
    if isinstance(node, int):
        leaf = leaves[node]
        return "" if node not in chosen else f"{leaf.label} {leaf.value}" if leaf.label else leaf.value
    kind, children = node
    if kind == "list":
        parts = [p for p in (_render(c, leaves, chosen) for c in children) if p]
        plain = all(isinstance(c, int) for c in children)
        joined = (", " if plain else "; ").join(parts)
        return joined if top or plain or not joined else f"[{joined}]"
    if kind == "entry":
        return " ".join(p for p in (_render(c, leaves, chosen) for c in children) if p)
    parts = []
    for key, child in children:
        body = _render(child, leaves, chosen)
        if body:
            parts.append(f"{key} {body}" if top and key else body)
    if kind == "keyed":
        return f"[{'; '.join(parts)}]" if parts else ""
    return ("; " if top else " ").join(parts)


def _shortened(value: Any) -> Any:
    if isinstance(value, str):
        return _cut(value, _VALUE_CHARS)
    if isinstance(value, list):
        return [_shortened(v) for v in value[:_LIST_ITEMS]] + (["…"] if len(value) > _LIST_ITEMS else [])
    if isinstance(value, dict):
        return {k: _shortened(v) for k, v in value.items()}
    return value


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "…"
