"""A tool result read into its values, ranked by use in the result's shape, and the most useful written to fit."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from memory.context.identifiers import identifiers

__all__ = ["DATUM", "DETAIL", "ID", "IDS", "MEASURE", "NUMBER", "SCAN_CHARS", "SHORT", "VALUE_CHARS", "Leaf", "Shape",
           "fitted", "shape_of"]

VALUE_CHARS = 40  # an argument's string value, and a JSON result's value taken whole
SCAN_CHARS = 4000  # identifiers deep in a long text result are rows of data, read through the span's reference
_MAX_VALUES = 400  # and so are the values deep in a long JSON result
_MAX_DEPTH = 64  # and those nested deeper than this
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
# Ranks, the most useful first; the line quotes the result's head when nothing ranks SHORT or better.
ID, DATUM, SHORT, MEASURE, NUMBER = 0, 1, 2, 3, 4
IDS, DETAIL = DATUM, NUMBER
_KIND_RANK = {"id": ID, "uuid": ID, "digest": ID, "email": ID, "url": ID, "path": ID, "code": DATUM,
              "quoted": DATUM, "date": DATUM, "version": SHORT, "time": MEASURE, "amount": MEASURE,
              "number": NUMBER}


@dataclass(frozen=True)
class Leaf:
    """One value as written, its rank, and the key it goes with inside an item (None: it speaks for itself)."""

    value: str
    rank: int
    label: str | None = None
    group: str = ""  # the top-level key that names it


# A result's shape: a leaf (its number), a list, or an object ((key, node) pairs; `keyed`: its keys are ids).
_Node = int | tuple[str, list[Any]]


@dataclass(frozen=True)
class Shape:
    """A result read: its leaves in document order, its tree (JSON), and how many items when it is a list."""

    leaves: tuple[Leaf, ...]
    tree: _Node | None  # None: a text result, its leaves in the order they came
    items: int | None  # a result that is a list: how many


def shape_of(text: str, called: str) -> Shape | None:
    """A result's leaves and shape (JSON) or identifiers (text); None for a bare JSON scalar."""
    if text[0] in "{[":
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to read: read as text
            data = None
        if isinstance(data, dict | list):
            leaves: list[Leaf] = []
            try:
                stated = set(_pairs(json.loads(called))) if called.strip() else set()
            except (ValueError, RecursionError):
                stated = set()
            tree = _walk(data, "", 0, leaves, stated, "")
            return Shape(tuple(leaves), tree, len(data) if isinstance(data, list) else None)
    elif text[0].isdigit() or text[0] == "-":
        try:
            if not isinstance(json.loads(text), dict | list):
                return None
        except ValueError:
            pass
    return Shape(tuple(_text_values(text[:SCAN_CHARS])), None, None)


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


def _text_values(text: str) -> Iterator[Leaf]:
    """A text's identifiers and upper-case codes (NO6JO3), in the order they came."""
    found: list[tuple[int, Leaf]] = []
    at = 0
    for ident in identifiers(text):  # in order of appearance: each is found on from the one before
        at = max(text.find(ident.text, at), at)
        found.append((at, Leaf(ident.text, _KIND_RANK.get(ident.kind, NUMBER))))
    known = {leaf.value for _, leaf in found}
    found += [(m.start(), Leaf(m.group(0), ID)) for m in _CODE_IN_TEXT.finditer(text) if m.group(0) not in known]
    return (leaf for _, leaf in sorted(found, key=lambda f: f[0]))


def _walk(value: Any, key: str, depth: int, leaves: list[Leaf], stated: set[tuple[str, str]],
          group: str) -> _Node | None:
    """The node of a JSON value, its leaves added to `leaves` in document order; None when it holds nothing."""
    if len(leaves) >= _MAX_VALUES or depth > _MAX_DEPTH or isinstance(value, bool) or value is None:
        return None
    if isinstance(value, dict):
        # An object keyed by ids (payment methods by their id): its keys are data, not field names.
        keyed = bool(value) and depth > 0 and all(_ID_LIKE.fullmatch(str(k)) and len(str(k)) <= VALUE_CHARS
                                                  for k in value)
        pairs: list[tuple[str, _Node]] = []
        for inner_key, inner in value.items():
            name = str(inner_key)
            if keyed:
                leaves.append(Leaf(name, ID, None, group))
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
    if isinstance(value, str) and len(text) > VALUE_CHARS:
        start = len(leaves)
        leaves += [Leaf(leaf.value, leaf.rank, None, group) for leaf in _text_values(text[:SCAN_CHARS])]
        return ("object", [("", n) for n in range(start, len(leaves))]) if len(leaves) > start else None
    rank = _rank(text, key, isinstance(value, str))
    leaves.append(Leaf(text, rank, key if depth > 1 and rank == NUMBER and key else None, group))
    return len(leaves) - 1


def _rank(text: str, key: str, string: bool) -> int:
    if _ID_KEY.search(key):
        return ID
    if not string:
        return NUMBER
    whole = identifiers(text) if _MAYBE_IDENTIFIER.search(text) else ()
    if len(whole) == 1 and whole[0].text == text:
        kind = whole[0].kind
        return SHORT if kind == "date" and len(text) > 10 else _KIND_RANK.get(kind, SHORT)  # a timestamp: SHORT
    if _ID_LIKE.fullmatch(text):
        return ID
    if _CAPITALS.fullmatch(text) or _PROPER.fullmatch(text) or (_NAME_KEY.search(key) and len(text) <= 30):
        return DATUM
    return SHORT


def fitted(shape: Shape, chars: int, upto: int) -> str:
    """The most useful leaves (ranked `upto` or better) whose rendering fits `chars`, in the result's shape."""
    # A result without ids gives what it has, and a text result its identifiers whatever they are (a number in
    # prose is a year or a count said, not one of a record's counters).
    upto = DETAIL if shape.tree is None else max(upto, min(leaf.rank for leaf in shape.leaves))
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


def _written(shape: Shape, chosen: set[int]) -> str:
    if shape.tree is None:
        return ", ".join(shape.leaves[i].value for i in sorted(chosen))
    body = _render(shape.tree, shape.leaves, chosen, top=True)
    return f"{shape.items} items: {body}" if shape.items is not None else body


def _render(node: _Node, leaves: Sequence[Leaf], chosen: set[int], *, top: bool = False) -> str:
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
