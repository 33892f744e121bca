"""The same item seen again: in a JSON list result, an object whose id an earlier result already showed becomes a
back-reference to that result, so a search repeated with other words does not bring the same papers twice.
The list keeps its new items first and its back-references after them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["BackReferences"]

_ID_FIELDS = ("id", "doc_id", "url", "uuid")


class BackReferences:
    """Remembers the ids of the items of the results it has read, in conversation order.

    `known` maps a result's text to its items' ids (None: not a JSON list), kept across turns by the caller: the
    same results come back every turn, and most of them repeat nothing, so they need not be parsed again.
    """

    name = "back_reference"

    def __init__(self, known: dict[str, tuple[str | None, ...] | None] | None = None,
                 written: dict[tuple[str, tuple[str | None, ...]], str] | None = None) -> None:
        self.seen: dict[str, str] = {}  # item id -> where it was first shown
        self._known = {} if known is None else known
        self._written = {} if written is None else written  # (text, where its items were seen) -> the result

    def reduce(self, text: str, where: str) -> str | None:
        """`text` with the items seen before as {"id": ..., "seen_in": where} (or their url, ...); None when none
        repeats."""
        if text in self._known:
            names = self._known[text]
        else:
            parsed = _parse(text)
            names = None if parsed is None else tuple(_name(item) for item in parsed[0])
            if len(self._known) >= _KNOWN_SIZE:
                self._known.clear()
            self._known[text] = names
        if names is None:
            return None
        if not any(name is not None and name in self.seen for name in names):
            for name in names:
                if name is not None:
                    self.seen.setdefault(name, where)
            return None
        origins = tuple(self.seen.get(name) if name is not None else None for name in names)
        memo = (text, origins)
        if memo in self._written:
            for name in names:
                if name is not None:
                    self.seen.setdefault(name, where)
            return self._written[memo]
        parsed = _parse(text)
        if parsed is None:  # it parsed when its names were taken; kept for the type checker
            return None
        items, wrap = parsed
        new: list[Any] = []
        again: list[Any] = []
        for item, name in zip(items, names, strict=True):
            ident = _ident(item)
            if ident is not None and name is not None and name in self.seen:
                again.append({ident[0]: ident[1], "seen_in": self.seen[name]})
                continue
            if name is not None:
                self.seen[name] = where
            new.append(item)
        # The new items first: a shortened list then shows what the model has not read yet.
        written = json.dumps(wrap([*new, *again]), ensure_ascii=False)
        if len(self._written) >= _KNOWN_SIZE:
            self._written.clear()
        self._written[memo] = written
        return written


_KNOWN_SIZE = 20_000


def _parse(text: str) -> tuple[list[Any], Callable[[list[Any]], Any]] | None:
    """The items of a JSON list result and how to wrap a new list like it; None when it is no such result."""
    if not text.lstrip().startswith(("[", "{")):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if isinstance(data, list):
        return data, lambda items: items
    if isinstance(data, dict):
        lists = [k for k, v in data.items() if isinstance(v, list)]
        if len(lists) == 1:
            key = lists[0]
            return data[key], lambda items: {**data, key: items}
    return None


def _name(item: Any) -> str | None:
    ident = _ident(item)
    return None if ident is None else f"{ident[0]}={ident[1]}"


def _ident(item: Any) -> tuple[str, str | int] | None:
    """The item's identifying field and value, if it has one."""
    if not isinstance(item, dict):
        return None
    for field in _ID_FIELDS:
        value = item.get(field)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return field, value
    return None
