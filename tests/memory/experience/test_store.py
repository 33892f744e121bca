"""Document writes: idempotent, atomic, versioned; deletes reach SQLite, FTS and Chroma; repair reconciles."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from memory.bullet import body_cost
from memory.errors import NotFoundError, ValidationError
from memory.experience import ChunkInput, ExperienceMemory, MemoryTurn
from memory.experience.dense import VectorIndex
from memory.experience.model import indexed_text
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock
from tests.memory.experience.conftest import CHINESE, ENGLISH, CountingEncoder, add


def sql_ids(store: Store, namespace: str) -> set[str]:
    return {r[0] for r in store.db.execute("SELECT id FROM chunks WHERE namespace = ?", [namespace]).fetchall()}


def fts_rows(store: Store) -> int:
    return store.db.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]


def vector_ids(store: Store, namespace: str) -> set[str]:
    return VectorIndex(store).ids(namespace)


@pytest.mark.parametrize("texts", [tuple(ENGLISH.values())[:2], tuple(CHINESE.values())[:2]], ids=["en", "zh"])
def test_a_new_document_lands_in_sqlite_fts_and_chroma_alike(
    experience: ExperienceMemory, store: Store, texts: tuple[str, ...]
) -> None:
    result = add(experience, "ns", "d1", *texts, title="T", project="p", tags=("a",))
    assert (result.doc_id, result.chunks, result.status) == ("d1", 2, "created")
    assert sql_ids(store, "ns") == vector_ids(store, "ns") and len(sql_ids(store, "ns")) == 2
    assert fts_rows(store) == 2
    info = experience.get_document("ns", "d1")
    assert (info.title, info.project, info.tags, info.version, info.chunks) == ("T", "p", ("a",), 1, 2)


def test_re_adding_an_unchanged_document_changes_and_embeds_nothing(
    experience: ExperienceMemory, store: Store, encoder: CountingEncoder
) -> None:
    add(experience, "ns", "d1", ENGLISH["loader"], CHINESE["tea"], metadata={"k": 1})
    before = (sql_ids(store, "ns"), experience.get_document("ns", "d1"))
    encoder.embedded.clear()
    result = add(experience, "ns", "d1", ENGLISH["loader"], CHINESE["tea"], metadata={"k": 1})
    assert result.status == "unchanged"
    assert encoder.embedded == []
    assert (sql_ids(store, "ns"), experience.get_document("ns", "d1")) == before


def test_a_changed_document_replaces_its_chunks_and_embeds_only_new_text(
    experience: ExperienceMemory, store: Store, encoder: CountingEncoder, clock: ManualClock
) -> None:
    add(experience, "ns", "d1", ENGLISH["loader"], ENGLISH["deploy"], ENGLISH["cache"])
    old_ids = sql_ids(store, "ns")
    first_time = experience.get_document("ns", "d1").updated_at
    clock.advance(timedelta(days=3).total_seconds())
    encoder.embedded.clear()
    result = add(experience, "ns", "d1", ENGLISH["loader"], CHINESE["panda"])
    assert (result.status, result.chunks) == ("updated", 2)
    assert encoder.embedded == [CHINESE["panda"]]  # the loader paragraph's vector was reused
    new_ids = sql_ids(store, "ns")
    assert not new_ids & old_ids and vector_ids(store, "ns") == new_ids
    assert fts_rows(store) == 2
    info = experience.get_document("ns", "d1")
    assert info.version == 2 and info.updated_at > first_time
    times = dict(store.db.execute("SELECT text, updated_at FROM chunks").fetchall())
    # Freshness follows the text: the unchanged paragraph keeps its time, the new one is dated now.
    assert times[ENGLISH["loader"]] == first_time and times[CHINESE["panda"]] == info.updated_at


def test_a_metadata_only_change_updates_without_embedding(
    experience: ExperienceMemory, store: Store, encoder: CountingEncoder
) -> None:
    add(experience, "ns", "d1", CHINESE["railway"], project="old")
    ids = sql_ids(store, "ns")
    encoder.embedded.clear()
    result = add(experience, "ns", "d1", CHINESE["railway"], project="new", tags=("x",))
    assert result.status == "updated" and encoder.embedded == []
    info = experience.get_document("ns", "d1")
    assert (info.project, info.tags, info.version) == ("new", ("x",), 1)
    assert sql_ids(store, "ns") == ids


def test_delete_document_removes_it_everywhere(experience: ExperienceMemory, store: Store) -> None:
    add(experience, "ns", "d1", ENGLISH["loader"], CHINESE["tea"])
    add(experience, "ns", "d2", ENGLISH["garden"])
    experience.delete_document("ns", "d1")
    assert [d.doc_id for d in experience.list_documents("ns")] == ["d2"]
    assert sql_ids(store, "ns") == vector_ids(store, "ns") and len(sql_ids(store, "ns")) == 1
    assert fts_rows(store) == 1
    assert experience.search("ns", "龙井茶") == []
    with pytest.raises(NotFoundError, match="d1"):
        experience.delete_document("ns", "d1")
    with pytest.raises(NotFoundError, match="list of documents shows the ids"):
        experience.get_document("ns", "d1")


def test_delete_namespace_leaves_other_namespaces_alone(experience: ExperienceMemory, store: Store) -> None:
    add(experience, "a", "d1", ENGLISH["loader"])
    add(experience, "b", "d1", CHINESE["panda"])
    assert experience.delete_namespace("a") == 1
    assert experience.list_documents("a") == [] and vector_ids(store, "a") == set()
    assert experience.search("a", "loader batches") == []
    assert len(experience.search("b", "大熊猫")) == 1
    assert experience.delete_namespace("nobody") == 0


def test_same_doc_id_in_two_namespaces_are_two_documents(experience: ExperienceMemory, store: Store) -> None:
    add(experience, "a", "d1", ENGLISH["loader"])
    add(experience, "b", "d1", ENGLISH["loader"])
    assert not sql_ids(store, "a") & sql_ids(store, "b")
    assert [s.doc_id for s in experience.search("b", "CSV loader")] == ["d1"]


def test_repair_removes_stray_vectors_and_re_embeds_missing_ones(experience: ExperienceMemory, store: Store) -> None:
    add(experience, "ns", "d1", ENGLISH["loader"], CHINESE["dumpling"])
    vectors = VectorIndex(store)
    lost = min(sql_ids(store, "ns"))
    vectors.delete("ns", [lost])
    vectors.add("ns", ["stray-1"], np.ones((1, 384), dtype=np.float32) / np.sqrt(384))
    vectors.add("ghost", ["stray-2"], np.ones((1, 384), dtype=np.float32) / np.sqrt(384))
    report = experience.repair()
    assert (report.removed_vectors, report.embedded_chunks) == (2, 1)
    assert vector_ids(store, "ns") == sql_ids(store, "ns") and vector_ids(store, "ghost") == set()
    assert experience.repair() == type(report)(namespaces=1, removed_vectors=0, embedded_chunks=0)


def test_chunks_carry_their_bullet_cost_and_repair_fills_it_for_older_ones(
    experience: ExperienceMemory, store: Store
) -> None:
    chunks = [ChunkInput(text=ENGLISH["loader"], ordinal=0, heading="Ops"), ChunkInput(text=CHINESE["dumpling"], ordinal=1)]
    experience.add_document("ns", "d1", chunks, content_hash="h1")
    experience.add_memories("ns", [MemoryTurn("我下周去北京。", speaker="Anna", timestamp="2026-01-02T10:00:00Z")])
    counter = get_counter()
    expected = {
        chunk_id: body_cost(indexed_text(text, heading, speaker), counter)
        for chunk_id, text, heading, speaker in store.db.execute(
            "SELECT c.id, c.text, c.heading, d.speaker FROM chunks c JOIN documents d "
            "ON d.namespace = c.namespace AND d.doc_id = c.doc_id"
        ).fetchall()
    }
    stored = dict(store.db.execute("SELECT id, line_tokens FROM chunks").fetchall())
    assert stored == expected and len(stored) == 3
    # As a store written before schema 2 has them: recall still counts right, and repair stores the counts.
    store.db.execute("UPDATE chunks SET line_tokens = NULL")
    assert experience.search("ns", "CSV loader")[0].body_tokens is None
    assert experience.repair().counted_lines == 3
    assert dict(store.db.execute("SELECT id, line_tokens FROM chunks").fetchall()) == expected
    assert experience.search("ns", "CSV loader")[0].body_tokens == expected[experience.search("ns", "CSV loader")[0].id]
    assert experience.repair().counted_lines == 0


def test_memories_are_one_chunk_each_embedded_in_one_call_and_idempotent(
    experience: ExperienceMemory, encoder: CountingEncoder
) -> None:
    turns = [
        MemoryTurn("I moved to Berlin last May.", speaker="Anna", timestamp="2023-06-01T10:00:00Z",
                   metadata={"turn": "D3:4"}),
        MemoryTurn("我下个月去杭州喝龙井茶。", speaker="小王", timestamp="2023-06-02T09:30:00+02:00"),
    ]
    results = experience.add_memories("chat", turns)
    assert [r.status for r in results] == ["created", "created"]
    assert encoder.embedded == ["Anna: I moved to Berlin last May.", "小王: 我下个月去杭州喝龙井茶。"]
    assert [r.status for r in experience.add_memories("chat", turns)] == ["unchanged", "unchanged"]
    assert len(encoder.embedded) == 2
    hit = experience.search("chat", "杭州 龙井", k=1)[0]
    assert hit.text == "小王: 我下个月去杭州喝龙井茶。" and hit.updated_at == "2023-06-02T07:30:00Z"
    english = experience.search("chat", "Where did Anna move?", k=1)[0]
    assert english.metadata == {"turn": "D3:4"} and english.updated_at == "2023-06-01T10:00:00Z"
    kinds = {d.kind for d in experience.list_documents("chat")}
    assert kinds == {"memory"}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda e: e.add_document("ns", "d", [], content_hash="h"), "at least one chunk"),
        (lambda e: e.add_document("", "d", [ChunkInput("x")], content_hash="h"), "namespace"),
        (lambda e: e.add_document("ns", "d", [ChunkInput("  ")], content_hash="h"), "ChunkInput with text"),
        (lambda e: e.add_document("ns", "d", [ChunkInput("a"), ChunkInput("b")], content_hash="h"), "distinct"),
        (lambda e: e.add_document("ns", "d", [ChunkInput("a")], content_hash="h", kind="note"), "kind"),
        (lambda e: e.add_document("ns", "d", [ChunkInput("a")], content_hash="h", tags="x"), "tags"),
        (lambda e: e.add_document("ns", "d", [ChunkInput("a")], content_hash="h", updated_at="yesterday"),
         "ISO 8601"),
        (lambda e: e.add_memories("ns", [MemoryTurn("")]), "turns\\[0\\].text"),
        (lambda e: e.search("ns", "x", k=-1), "k must be"),
    ],
)
def test_bad_input_is_refused_with_a_message_saying_what_to_do(
    experience: ExperienceMemory, call: object, message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        call(experience)  # type: ignore[operator]
    assert experience.list_documents("ns") == []


def test_the_same_turn_twice_in_one_batch_is_stored_once(experience: ExperienceMemory) -> None:
    turn = MemoryTurn("我喜欢龙井茶。", speaker="小王", timestamp="2024-05-01T08:00:00Z")
    first, second = experience.add_memories("chat", [turn, turn])
    assert first == second and first.status == "created"
    assert len(experience.list_documents("chat")) == 1


def test_a_metadata_change_racing_a_delete_leaves_no_document_without_chunks(
    experience: ExperienceMemory, store: Store
) -> None:
    add(experience, "ns", "doc", ENGLISH["loader"], metadata={"v": 1})
    writer = experience._writer
    embed = writer._embed

    def delete_first(namespace, plans, progress=None):  # type: ignore[no-untyped-def]
        # Runs after the plan was made and before the swap: exactly where a concurrent DELETE can land.
        writer.delete(namespace, ["doc"])
        embed(namespace, plans, progress)

    writer._embed = delete_first  # type: ignore[method-assign]
    add(experience, "ns", "doc", ENGLISH["loader"], metadata={"v": 2})
    assert store.db.execute("SELECT count(*) FROM documents WHERE doc_id = 'doc'").fetchone()[0] == 0
    with pytest.raises(NotFoundError):
        experience.get_document("ns", "doc")
