"""Turns stored without a timestamp get their neighbours from their own conversation, by order: one call is one
conversation unless the turns name one; two calls are never each other's neighbours (vectors nor recall)."""

from __future__ import annotations

import numpy as np
import pytest

from memory.config import Config
from memory.embedding import Embedder
from memory.errors import ValidationError
from memory.experience import ExperienceMemory, MemoryTurn, catalog
from memory.experience.dense import VectorIndex
from memory.schema import SCHEMA_VERSION
from memory.store import Store, open_store
from memory.tokens import get_counter
from tests.conftest import ManualClock
from tests.memory.experience.conftest import CHINESE_TALK, ENGLISH_TALK

WEIGHT = 0.25

# Two unrelated chats of each language, each sent in one call without timestamps.
TALKS = {
    "en": (ENGLISH_TALK, [
        ("Priya", "Has the plumber fixed the kitchen sink yet?"),
        ("Omar", "Not yet, he is coming on Thursday with a new pipe."),
        ("Priya", "Good, the leak has soaked the cupboard under it."),
    ]),
    "zh": (CHINESE_TALK, [
        ("老张", "水管工修好厨房的水槽了吗？"),
        ("小赵", "还没有，他周四带新管子过来。"),
        ("老张", "好，漏水已经把下面的柜子泡坏了。"),
    ]),
}


@pytest.fixture()
def experience(store: Store, embedder: Embedder, config: Config, clock: ManualClock) -> ExperienceMemory:
    """Experience memory whose clock stands still: every untimed turn of every call is stamped the same second."""
    return ExperienceMemory(store, embedder, get_counter(), config.replace("retrieval", turn_context=WEIGHT), clock)


def _say(experience: ExperienceMemory, talk: list[tuple[str, str]], conversation: str | None = None,
         namespace: str = "ns") -> list[str]:
    """Store the turns in one call without timestamps; their chunk ids, in order."""
    stored = experience.add_memories(namespace, [MemoryTurn(text=t, speaker=s, conversation=conversation)
                                                 for s, t in talk])
    return [_chunk(experience, namespace, r.doc_id) for r in stored]


def _chunk(experience: ExperienceMemory, namespace: str, doc_id: str) -> str:
    row = experience._store.db.execute(
        "SELECT id FROM chunks WHERE namespace = ? AND doc_id = ?", [namespace, doc_id]).fetchone()
    return str(row[0])


def _around(experience: ExperienceMemory, ids: list[str], namespace: str = "ns") -> dict[str, list[str]]:
    rows = catalog.chunk_rows(experience._store.db, namespace, ids)
    return catalog.neighbour_turns(experience._store.db, namespace, [rows[i] for i in ids], 3600)


def _searched(store: Store, ids: list[str]) -> np.ndarray:
    found = VectorIndex(store).fetch("ns", ids)
    return np.stack([found[i] for i in ids])


def _mixed(embedder: Embedder, talk: list[tuple[str, str]], neighbours: list[list[int]]) -> np.ndarray:
    own = np.asarray(embedder.encode_documents([f"{s}: {t}" for s, t in talk]))
    out = []
    for i, around in enumerate(neighbours):
        vector = own[i] + WEIGHT * sum((own[j] for j in around), np.zeros_like(own[i]))
        out.append(vector / np.linalg.norm(vector))
    return np.stack(out)


def _chain(n: int) -> list[list[int]]:
    return [[j for j in (i - 1, i + 1) if 0 <= j < n] for i in range(n)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_two_untimed_calls_are_never_each_others_neighbours(
    experience: ExperienceMemory, store: Store, embedder: Embedder, lang: str
) -> None:
    first_talk, second_talk = TALKS[lang]
    first, second = _say(experience, first_talk), _say(experience, second_talk)
    around = _around(experience, first + second)
    assert around[first[-1]] == [first[-2]]  # not second[0], though stamped the same second and stored next
    assert around[second[0]] == [second[1]]
    assert all(set(around[i]) <= set(first) for i in first) and all(set(around[i]) <= set(second) for i in second)
    np.testing.assert_allclose(_searched(store, first), _mixed(embedder, first_talk, _chain(len(first))), atol=1e-5)
    np.testing.assert_allclose(_searched(store, second), _mixed(embedder, second_talk, _chain(len(second))),
                               atol=1e-5)


@pytest.mark.parametrize(("lang", "query"), [("en", "pottery workshop last weekend"), ("en", "kitchen sink plumber"),
                                             ("zh", "陶艺课 上周末"), ("zh", "水管工 厨房 水槽")])
def test_recall_pads_a_turn_with_its_own_call_only(experience: ExperienceMemory, lang: str, query: str) -> None:
    first_talk, second_talk = TALKS[lang]
    calls = [set(_say(experience, first_talk)), set(_say(experience, second_talk))]
    hits = experience.search("ns", query, k=20)
    padded = [h for h in hits if "neighbour_of" in h.why]
    assert padded, "the best turn should bring its neighbours"
    for hit in padded:
        assert any(hit.id in call and hit.why["neighbour_of"] in call for call in calls), hit


def test_turns_naming_one_conversation_are_neighbours_across_calls_and_hours(
    experience: ExperienceMemory, store: Store, embedder: Embedder, clock: ManualClock
) -> None:
    english, chinese = ENGLISH_TALK, CHINESE_TALK
    morning = _say(experience, english[:2], conversation="trip")
    clock.advance(3 * 3600)  # far beyond neighbour_window_s: order, not time, makes untimed neighbours
    other = _say(experience, chinese[:2])
    evening = _say(experience, english[2:], conversation="trip")
    around = _around(experience, morning + other + evening)
    assert around[morning[-1]] == [morning[0], evening[0]]
    assert around[evening[0]] == [morning[-1], evening[1]]
    assert around[other[0]] == [other[1]] and around[other[1]] == [other[0]]
    # The earlier call's last turn was re-mixed when the later one arrived.
    np.testing.assert_allclose(_searched(store, morning + evening), _mixed(embedder, english, _chain(4)), atol=1e-5)


def test_timed_turns_keep_their_time_neighbours_and_never_take_untimed_ones(
    experience: ExperienceMemory, clock: ManualClock
) -> None:
    at = clock().strftime("%Y-%m-%dT%H:%M:%SZ")  # the very second the untimed call is stamped with
    timed = experience.add_memories("ns", [MemoryTurn(text=t, speaker=s, timestamp=at) for s, t in ENGLISH_TALK])
    timed_ids = [_chunk(experience, "ns", r.doc_id) for r in timed]
    untimed = _say(experience, CHINESE_TALK)
    around = _around(experience, timed_ids + untimed)
    assert [around[i] for i in timed_ids] == [[timed_ids[1]], timed_ids[0:3:2], timed_ids[1:4:2], [timed_ids[2]]]
    assert around[untimed[0]] == [untimed[1]]


def test_the_same_words_in_two_untimed_calls_are_two_memories(experience: ExperienceMemory) -> None:
    first = experience.add_memories("ns", [MemoryTurn("好的。", speaker="小王"), MemoryTurn("明天见。", speaker="小李")])
    second = experience.add_memories("ns", [MemoryTurn("好的。", speaker="小王"), MemoryTurn("OK then.", speaker="Bo")])
    assert first[0].doc_id != second[0].doc_id and second[0].status == "created"
    again = experience.add_memories("ns", [MemoryTurn("好的。", speaker="小王"), MemoryTurn("明天见。", speaker="小李")])
    assert [r.status for r in again] == ["unchanged", "unchanged"]  # the same call at the same moment


def test_a_conversation_row_goes_with_its_turn(experience: ExperienceMemory, store: Store) -> None:
    stored = experience.add_memories("ns", [MemoryTurn(t, speaker=s, conversation="chat-1") for s, t in ENGLISH_TALK])
    rows = "SELECT doc_id, conversation FROM turn_conversations WHERE namespace = 'ns' ORDER BY doc_id"
    assert store.db.execute(rows).fetchall() == sorted((r.doc_id, "chat-1") for r in stored)
    experience.delete_document("ns", stored[0].doc_id)
    assert len(store.db.execute(rows).fetchall()) == 3
    # The same id stored again with a timestamp leaves the conversation for the timeline.
    experience.add_memories("ns", [MemoryTurn(ENGLISH_TALK[1][1], speaker=ENGLISH_TALK[1][0],
                                              timestamp="2026-01-01T00:00:00Z", doc_id=stored[1].doc_id)])
    assert [d for d, _ in store.db.execute(rows).fetchall()] == sorted(r.doc_id for r in stored[2:])
    experience.delete_namespace("ns")
    assert store.db.execute(rows).fetchall() == []


@pytest.mark.parametrize("conversation", ["", "   ", "a\x00b"])
def test_a_bad_conversation_name_is_refused(experience: ExperienceMemory, conversation: str) -> None:
    with pytest.raises(ValidationError, match=r"turns\[0\]\.conversation"):
        experience.add_memories("ns", [MemoryTurn("Hello.", conversation=conversation)])
    assert experience.list_documents("ns") == []


def test_a_version_4_store_gains_the_conversation_table(config: Config, embedder: Embedder) -> None:
    store = open_store(config, embedder.identity)
    store.db.sqlite.executescript("DROP TRIGGER documents_turn_conversations; DROP TABLE turn_conversations; "
                           "UPDATE meta SET value = '4' WHERE key = 'schema_version';")
    store.close()
    store = open_store(config, embedder.identity)
    version = store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert version == str(SCHEMA_VERSION)
    assert store.db.execute("SELECT count(*) FROM turn_conversations").fetchone()[0] == 0
    store.close()
