"""recall's filters argument: a mapping of known keys with the right types, else a clear ValidationError."""

from __future__ import annotations

import pytest

from memory.errors import ValidationError
from memory.experience import SearchFilters
from memory.recall.engine import parse_filters


def test_known_filters_become_search_filters() -> None:
    parsed = parse_filters({"project": "p", "tags": "red", "kind": "memory", "updated_from": "2026-01-01"})
    assert parsed == SearchFilters(project="p", tags=("red",), kind="memory", updated_from="2026-01-01")
    assert parse_filters(None) == SearchFilters()


@pytest.mark.parametrize(("filters", "words"), [
    ({"colour": "red"}, "unknown filter colour"),
    ({"tags": 5}, "filters.tags must be a list of strings"),
    ({"tags": ["ok", 3]}, "filters.tags must be a list of strings"),
    ({"project": 7}, "filters.project must be a string"),
    ({"kind": "photo"}, "filters.kind must be 'document' or 'memory'"),
])
def test_bad_filters_are_named(filters: dict[str, object], words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        parse_filters(filters)
