"""A JSON list of results: the first items, each with its scalar fields only, and a line saying how many there were."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["JsonList"]


class JsonList:
    """`[{...}, {...}, ...]` (or `{"results": [...]}`-like objects with one list) → the first `shown` items."""

    name = "json_list"

    def __init__(self, shown: int = 5, field_chars: int = 300) -> None:
        self.shown = shown
        self.field_chars = field_chars

    def reduce(self, text: str) -> str | None:
        try:
            data = json.loads(text)
        except ValueError:
            return None
        items = _the_list(data)
        if items is None or len(items) <= self.shown:
            return None
        kept = [self._item(item) for item in items[:self.shown]]
        lines = [json.dumps(item, ensure_ascii=False, sort_keys=True) for item in kept]
        return f"{len(items)} results, {len(kept)} shown:\n" + "\n".join(lines)

    def _item(self, item: Any) -> Any:
        """Scalars as they are (long strings cut); nested lists and objects left out: the fields that matter."""
        if not isinstance(item, dict):
            return item
        kept: dict[str, Any] = {}
        for key, value in item.items():
            if isinstance(value, str):
                kept[key] = value if len(value) <= self.field_chars else value[:self.field_chars] + "…"
            elif value is None or isinstance(value, bool | int | float):
                kept[key] = value
        return kept


def _the_list(data: Any) -> list[Any] | None:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        return lists[0] if len(lists) == 1 else None
    return None
