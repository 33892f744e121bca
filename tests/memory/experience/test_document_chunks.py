"""ExperienceMemory.chunks: one document's stored chunks in reading order, with their token counts."""

from __future__ import annotations

import pytest

from memory.errors import NotFoundError
from memory.experience import ExperienceMemory, MemoryTurn
from memory.tokens import get_counter
from tests.memory.experience.conftest import CHINESE, ENGLISH, add


def test_chunks_come_in_reading_order_with_their_token_counts(experience: ExperienceMemory) -> None:
    add(experience, "u1", "mixed", ENGLISH["loader"], CHINESE["railway"], ENGLISH["garden"])
    chunks = experience.chunks("u1", "mixed")
    assert [c.ordinal for c in chunks] == [0, 1, 2]
    assert [c.text for c in chunks] == [ENGLISH["loader"], CHINESE["railway"], ENGLISH["garden"]]
    counter = get_counter()
    assert [c.tokens for c in chunks] == [counter.count(c.text) for c in chunks]
    assert sum(c.tokens for c in chunks) == experience.get_document("u1", "mixed").tokens
    assert {c.doc_id for c in chunks} == {"mixed"}


def test_a_conversation_turn_is_one_chunk(experience: ExperienceMemory) -> None:
    [stored] = experience.add_memories("u1", [MemoryTurn("我们每天早上都在河边散步。", speaker="小王")])
    [chunk] = experience.chunks("u1", stored.doc_id)
    assert chunk.text == "我们每天早上都在河边散步。" and chunk.tokens > 0


@pytest.mark.parametrize(("namespace", "doc_id"), [("u1", "nope"), ("u2", "doc")])
def test_an_unknown_document_or_another_namespaces_is_not_found(experience: ExperienceMemory, namespace: str,
                                                                doc_id: str) -> None:
    add(experience, "u1", "doc", ENGLISH["cache"])
    with pytest.raises(NotFoundError, match="list_documents shows the ids"):
        experience.chunks(namespace, doc_id)
