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
