"""The same item seen again: in a JSON list result, an object whose id an earlier result already showed becomes a
back-reference to that result, so a search repeated with other words does not bring the same papers twice.
The list keeps its new items first and its back-references after them."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["BackReferences"]

_ID_FIELDS = ("id", "doc_id", "url", "uuid")


class BackReferences:
    """Remembers the ids of the items of the results it has read, in conversation order."""

    name = "back_reference"

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}  # item id -> where it was first shown

    def reduce(self, text: str, where: str) -> str | None:
        """`text` with the items seen before as {"id": ..., "seen_in": where} (or their url, ...); None when none
        repeats."""
        if not text.lstrip().startswith(("[", "{")):
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return None
        items, wrap = _items(data)
        if items is None:
            return None
        new: list[Any] = []
        again: list[Any] = []
        for item in items:
            ident = _ident(item)
            name = f"{ident[0]}={ident[1]}" if ident is not None else None
            if ident is not None and name in self.seen:
                again.append({ident[0]: ident[1], "seen_in": self.seen[name]})
                continue
            if name is not None:
                self.seen[name] = where
            new.append(item)
        if not again:
            return None
        # The new items first: a shortened list then shows what the model has not read yet.
        return json.dumps(wrap([*new, *again]), ensure_ascii=False)


def _ident(item: Any) -> tuple[str, str | int] | None:
    """The item's identifying field and value, if it has one."""
    if not isinstance(item, dict):
        return None
    for field in _ID_FIELDS:
        value = item.get(field)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return field, value
    return None


def _items(data: Any) -> tuple[list[Any] | None, Any]:
    if isinstance(data, list):
        return data, lambda items: items
    if isinstance(data, dict):
        lists = [k for k, v in data.items() if isinstance(v, list)]
        if len(lists) == 1:
            key = lists[0]
            return data[key], lambda items: {**data, key: items}
    return None, None
