"""ingest_text refuses what no store can hold before it chunks or embeds anything."""

from __future__ import annotations

import pytest

from memory.errors import ValidationError
from memory.service import Memory


@pytest.mark.parametrize("text", ["bad \ud800 surrogate", "坏的\udfff代理"], ids=["en", "zh"])
def test_lone_surrogate_is_a_validation_error_and_stores_nothing(memory: Memory, text: str) -> None:
    with pytest.raises(ValidationError, match="lone surrogate"):
        memory.add_document("ns", text)
    assert memory.experience.list_documents("ns") == []


@pytest.mark.parametrize("query", ["how does the loader retry?", "加载程序怎么重试？"])
def test_a_recall_from_a_namespace_that_holds_nothing_says_so(memory: Memory, query: str) -> None:
    memory.add_document("team", "The loader retries a failed batch twice.", doc_id="loader")
    misspelt = memory.recall("teams", query, 400)
    assert misspelt.items == () and len(misspelt.warnings) == 1
    assert "namespace 'teams' holds no facts, tasks or documents" in misspelt.warnings[0]
    assert not memory.recall("team", query, 400).warnings
