"""Conversation turns next to a matching turn come along (the reply often holds the answer), in both languages."""

from __future__ import annotations

import pytest

from memory.config import Config
from memory.experience import ExperienceMemory, MemoryTurn, catalog
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock
from tests.memory.experience.conftest import CHINESE_TALK, ENGLISH_TALK, CountingEncoder, add


def _rows(experience: ExperienceMemory, doc_ids: list[str]) -> dict[str, catalog.ChunkRow]:
    """The chunk row of each one-chunk memory, by doc id."""
    db = experience._store.db
    marks = ",".join("?" * len(doc_ids))
    ids = [r[0] for r in db.execute(f"SELECT id FROM chunks WHERE namespace = 'ns' AND doc_id IN ({marks})",
                                     doc_ids).fetchall()]
    return {row.doc_id: row for row in catalog.chunk_rows(db, "ns", ids).values()}


def _talk(experience: ExperienceMemory, turns: list[tuple[str, str]], start_hour: int = 9) -> list[str]:
    stored = experience.add_memories("ns", [
        MemoryTurn(text=text, speaker=speaker, timestamp=f"2026-05-01T{start_hour:02d}:00:{i:02d}Z")
        for i, (speaker, text) in enumerate(turns)
    ])
    return [r.doc_id for r in stored]


@pytest.mark.parametrize(("turns", "query"), [
    (ENGLISH_TALK, "pottery workshop last weekend"), (CHINESE_TALK, "陶艺课 上周末")], ids=["en", "zh"])
def test_the_reply_to_a_matching_turn_comes_along_below_it(
    experience: ExperienceMemory, turns: list[tuple[str, str]], query: str
) -> None:
    ids = _talk(experience, turns)
    hits = experience.search("ns", query, k=10)
    by_doc = {h.doc_id: h for h in hits}
    assert hits[0].doc_id == ids[0]
    reply = by_doc[ids[1]]
    assert reply.score < hits[0].score
    if "neighbour_of" in reply.why:  # it may also match on its own; then it keeps its own, higher score
        assert reply.why["neighbour_of"] == hits[0].id


def test_neighbours_are_the_closest_memories_in_time_and_never_documents(experience: ExperienceMemory) -> None:
    ids = _talk(experience, ENGLISH_TALK)
    add(experience, "ns", "manual", "A document stored between the turns is not part of the conversation.",
        updated_at="2026-05-01T09:00:01Z")
    late = _talk(experience, [("Caroline", "A turn on another day is too far away to be a neighbour.")], 23)
    by_doc = _rows(experience, [*ids, late[0], "manual"])
    around = catalog.neighbour_turns(experience._store.db, "ns", [by_doc[d] for d in (*ids, late[0])], 3600)
    doc_of = {r.id: r.doc_id for r in by_doc.values()}
    assert [doc_of[c] for c in around[by_doc[ids[0]].id]] == [ids[1]]
    assert [doc_of[c] for c in around[by_doc[ids[1]].id]] == [ids[0], ids[2]]
    assert [doc_of[c] for c in around[by_doc[ids[3]].id]] == [ids[2]]
    assert around[by_doc[late[0]].id] == []


def test_turns_stored_with_one_timestamp_are_neighbours_in_the_order_stored(experience: ExperienceMemory) -> None:
    stored = experience.add_memories("ns", [MemoryTurn(text=t, speaker=s) for s, t in ENGLISH_TALK])
    ordered = sorted(_rows(experience, [r.doc_id for r in stored]).values(), key=lambda r: r.rowid)
    around = catalog.neighbour_turns(experience._store.db, "ns", ordered, 60)
    assert around[ordered[1].id] == [ordered[0].id, ordered[2].id]


@pytest.mark.parametrize("hops", [1, 2])
def test_the_turn_after_the_reply_comes_along_in_a_second_ring(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, hops: int
) -> None:
    one_seed = config.replace("retrieval", neighbour_seeds=1, neighbour_hops=hops)
    experience = ExperienceMemory(store, encoder, get_counter(), one_seed, clock)
    ids = _talk(experience, ENGLISH_TALK)
    hits = experience.search("ns", "pottery workshop last weekend", k=10)
    by_doc = {h.doc_id: h for h in hits}
    assert hits[0].doc_id == ids[0]
    reply = by_doc[ids[1]]
    after = by_doc.get(ids[2])
    if hops == 1:
        assert after is None or "neighbour_of" not in after.why
    else:
        assert after is not None and after.why["neighbour_of"] == reply.id
        assert after.score < reply.score
