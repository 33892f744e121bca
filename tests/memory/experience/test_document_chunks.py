"""ExperienceMemory.chunks: one document's stored chunks in reading order, with their token counts."""

from __future__ import annotations

import pytest

from memory.errors import NotFoundError, ValidationError
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
    with pytest.raises(NotFoundError, match="list of documents shows the ids"):
        experience.chunks(namespace, doc_id)


def test_documents_and_turns_are_listed_a_page_at_a_time(experience: ExperienceMemory) -> None:
    add(experience, "u1", "loader.md", ENGLISH["loader"])
    add(experience, "u1", "铁路.md", CHINESE["railway"])
    experience.add_memories("u1", [MemoryTurn(f"第{i}次散步很愉快。", speaker="小王") for i in range(5)])
    every = experience.list_documents("u1")
    turns = [d for d in every if d.kind == "memory"]
    assert experience.count_documents("u1") == {"document": 2, "memory": 5}
    assert experience.list_documents("u1", kind="memory", limit=2) == turns[:2]
    assert experience.list_documents("u1", kind="memory", limit=2, offset=4) == turns[4:]
    assert experience.list_documents("u1", kind="memory", offset=5) == []
    assert {d.doc_id for d in experience.list_documents("u1", kind="document")} == {"loader.md", "铁路.md"}
    assert experience.list_documents("u1", limit=0) == [] and experience.count_documents("u2") == {
        "document": 0, "memory": 0}


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"kind": "turn"}, "kind must be 'document' or 'memory'"),
    ({"limit": -1}, "limit must be a whole number"),
    ({"offset": -3}, "offset must be a whole number"),
    ({"offset": True}, "offset must be a whole number"),
])
def test_a_bad_page_of_the_list_is_refused(experience: ExperienceMemory, kwargs: dict[str, object],
                                           match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        experience.list_documents("u1", **kwargs)  # type: ignore[arg-type]
