"""Facts read from recorded conversation turns are recalled when relevant, not pinned into every recall."""

from __future__ import annotations

import pytest

from memory import Memory
from memory.experience import MemoryTurn


@pytest.mark.parametrize("text", ["Do not use single quotes.", "以后不要用Python 2的语法。"])
def test_a_request_in_a_recorded_conversation_is_kept_unpinned(memory: Memory, text: str) -> None:
    _, stored = memory.remember("history", [MemoryTurn(text=text, speaker="user", timestamp="2023-05-01T10:00:00Z")])
    facts = memory.facts.list_facts("history")
    assert stored == len(facts) >= 1
    assert not any(f.pinned for f in facts)
    # Said to the memory itself, the same words are a standing constraint.
    told = memory.facts.observe("told", text)
    assert told.stored and all(f.pinned for f in told.stored)


def test_an_unrelated_question_is_not_crowded_by_a_recorded_request(memory: Memory) -> None:
    memory.remember("history", [
        MemoryTurn(text="Do not use single quotes.", speaker="user", timestamp="2023-05-01T10:00:00Z"),
        MemoryTurn(text="I adopted a cat named Miso last spring.", speaker="user", timestamp="2023-05-02T10:00:00Z"),
    ])
    answer = memory.recall("history", "What is my cat called?", 200)
    assert not any(item.snippet.pinned for item in answer.items)
    assert any("Miso" in item.snippet.text for item in answer.items)
