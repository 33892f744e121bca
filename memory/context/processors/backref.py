"""An item identical to one of an earlier result the agent still sees becomes a reference to that tool call."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from memory.context.processors.base import Processed

__all__ = ["back_reference"]

_ID_FIELDS = ("id", "doc_id", "url", "uuid")


def back_reference(text: str, earlier: Sequence[tuple[str, str]]) -> Processed | None:
    """`text` with each object identical to an item of an `earlier` (tool_call_id, result) as {"<id field>": ...,
    "same_as": tool_call_id}, the first of them that holds it, so that a search repeated in other words does not show
    the same papers twice; None when no item is replaced.

    Only identity counts: items that share an id but differ in any field (a search's hits reusing the ids m0, m1, ...
    for other paths and lines) are different items and stay whole.
    """
    parsed = _parse(text)
    if parsed is None:
        return None
    items, wrap = parsed
    seen: dict[str, str] = {}  # an earlier item, canonical -> the call whose result holds it
    for call_id, result in earlier:
        before = _parse(result)
        for item in before[0] if before is not None else ():
            if isinstance(item, dict):
                seen.setdefault(_canonical(item), call_id)
    new: list[Any] = []
    again: list[Any] = []
    by_call: Counter[str] = Counter()
    for item in items:
        call = seen.get(_canonical(item)) if isinstance(item, dict) else None
        if call is not None:
            reference = {**_ident(item), "same_as": call}
            if len(_canonical(reference)) < len(_canonical(item)):  # never a reference longer than the item
                again.append(reference)
                by_call[call] += 1
                continue
        new.append(item)
    if not again:
        return None
    # The new items first: a list cut to fit then shows what the model has not read yet.
    written = json.dumps(wrap([*new, *again]), ensure_ascii=False, separators=(",", ":"))
    calls = ", ".join(f"{call} ({count:,})" for call, count in by_call.items())
    left_out = (f"{len(again):,} item{'s' if len(again) > 1 else ''} identical to items of earlier results, replaced "
                f"by references to those results and moved after the new items: {calls}")
    return Processed("back_reference", written, left_out)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _parse(text: str) -> tuple[list[Any], Callable[[list[Any]], Any]] | None:
    """The items of a JSON list result and how to wrap a new list like it; None when it is no such result."""
    if not text.lstrip().startswith(("[", "{")):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(data, list):
        return data, lambda items: items
    if isinstance(data, dict):
        lists = [k for k, v in data.items() if isinstance(v, list)]
        if len(lists) == 1:
            key = lists[0]
            return data[key], lambda items: {**data, key: items}
    return None


def _ident(item: dict[str, Any]) -> dict[str, Any]:
    """The item's identifying field and value, if it has one."""
    for field in _ID_FIELDS:
        value = item.get(field)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return {field: value}
    return {}
