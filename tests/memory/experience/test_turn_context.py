"""A conversation turn is searched by its own embedding plus a share of its neighbours', in both languages; the
mix follows every write, delete and setting change without encoding a text twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory.config import Config
from memory.embedding import Embedder, load_embedder
from memory.experience import ExperienceMemory, MemoryTurn
from memory.experience.dense import VectorIndex
from memory.reembed import reembed
from memory.service import Memory
from memory.store import Store, open_store
from memory.tokens import get_counter
from tests.conftest import ManualClock
from tests.memory.embedding.conftest import minilm_folder
from tests.memory.experience.conftest import CHINESE_TALK, ENGLISH_TALK, CountingEncoder, add

WEIGHT = 0.25
START = datetime(2026, 5, 1, 9, 0, 0, tzinfo=UTC)


def _memory(store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
            weight: float = WEIGHT) -> ExperienceMemory:
    return ExperienceMemory(store, encoder, get_counter(), config.replace("retrieval", turn_context=weight), clock)


def _say(experience: ExperienceMemory, turns: list[tuple[str, str]], seconds: list[int] | None = None,
         namespace: str = "ns") -> list[str]:
    """Store the turns at 09:00 + the given seconds (default 0, 1, 2, ...); their chunk ids, in order."""
    at = seconds or list(range(len(turns)))
    stored = experience.add_memories(namespace, [
        MemoryTurn(text=text, speaker=speaker, timestamp=(START + timedelta(seconds=s)).isoformat())
        for s, (speaker, text) in zip(at, turns, strict=True)
    ])
    return [_chunk(experience, namespace, r.doc_id) for r in stored]


def _chunk(experience: ExperienceMemory, namespace: str, doc_id: str) -> str:
    row = experience._store.db.execute(
        "SELECT id FROM chunks WHERE namespace = ? AND doc_id = ?", [namespace, doc_id]).fetchone()
    return str(row[0])


def _own(embedder: Embedder, turns: list[tuple[str, str]]) -> np.ndarray:
    """What the model gives each turn alone (turns are embedded as `speaker: text`)."""
    return np.asarray(embedder.encode_documents([f"{speaker}: {text}" for speaker, text in turns]))


def _mixed(own: np.ndarray, neighbours: list[list[int]]) -> np.ndarray:
    out = []
    for i, around in enumerate(neighbours):
        vector = own[i] + WEIGHT * sum((own[j] for j in around), np.zeros_like(own[i]))
        out.append(vector / np.linalg.norm(vector))
    return np.stack(out)


def _searched(store: Store, ids: list[str], namespace: str = "ns") -> np.ndarray:
    found = VectorIndex(store).fetch(namespace, ids)
    return np.stack([found[i] for i in ids])


def _kept(store: Store, ids: list[str]) -> dict[str, str | None]:
    marks = ",".join("?" * len(ids))
    return dict(store.db.execute(f"SELECT id, mix FROM turn_vectors WHERE id IN ({marks})", ids).fetchall())


@pytest.mark.parametrize("talk", [ENGLISH_TALK, CHINESE_TALK], ids=["en", "zh"])
def test_a_turn_is_searched_by_its_vector_mixed_with_the_turns_around_it(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, embedder: Embedder,
    talk: list[tuple[str, str]],
) -> None:
    experience = _memory(store, encoder, config, clock)
    ids = _say(experience, talk)
    own = _own(embedder, talk)
    expected = _mixed(own, [[1], [0, 2], [1, 3], [2]])
    np.testing.assert_allclose(_searched(store, ids), expected, atol=1e-5)
    assert len(encoder.embedded) == len(talk)  # each text embedded once, in one call
    kept = _kept(store, ids)
    assert kept[ids[1]] == f"{WEIGHT:g}|{ids[0]}|{ids[2]}" and kept[ids[0]] == f"{WEIGHT:g}||{ids[1]}"


def test_the_reply_is_found_by_the_topic_of_the_question_it_answers(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, embedder: Embedder,
) -> None:
    experience = _memory(store, encoder, config, clock)
    ids = _say(experience, ENGLISH_TALK)
    query = embedder.encode_query("What did Caroline make at the pottery workshop?")
    own = _own(embedder, ENGLISH_TALK)
    assert float(_searched(store, ids)[1] @ query) > float(own[1] @ query)


def test_documents_and_turns_far_apart_keep_their_own_vectors(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, embedder: Embedder,
) -> None:
    experience = _memory(store, encoder, config, clock)
    add(experience, "ns", "manual", "A document stored between the turns is not part of the conversation.",
        updated_at="2026-05-01T09:00:01Z")
    ids = _say(experience, ENGLISH_TALK[:2], seconds=[0, 2 * 3600])  # two hours apart: window is one hour
    np.testing.assert_allclose(_searched(store, ids), _own(embedder, ENGLISH_TALK[:2]), atol=1e-5)
    manual = _chunk(experience, "ns", "manual")
    assert _kept(store, [manual]) == {}  # documents keep no own-vector rows
    assert set(_kept(store, ids).values()) == {None}


def test_a_turn_stored_between_two_others_re_mixes_them_without_encoding_again(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, embedder: Embedder,
) -> None:
    experience = _memory(store, encoder, config, clock)
    first, last = _say(experience, [ENGLISH_TALK[0], ENGLISH_TALK[2]], seconds=[0, 20])
    own = _own(embedder, ENGLISH_TALK[:3])
    np.testing.assert_allclose(_searched(store, [first, last]), _mixed(own[[0, 2]], [[1], [0]]), atol=1e-5)
    (middle,) = _say(experience, [ENGLISH_TALK[1]], seconds=[10])
    np.testing.assert_allclose(_searched(store, [first, middle, last]), _mixed(own, [[1], [0, 2], [1]]), atol=1e-5)
    assert len(encoder.embedded) == 3


@pytest.mark.parametrize("talk", [ENGLISH_TALK, CHINESE_TALK], ids=["en", "zh"])
def test_a_deleted_turn_leaves_its_neighbours_vectors_and_its_own_row_goes(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, embedder: Embedder,
    talk: list[tuple[str, str]],
) -> None:
    experience = _memory(store, encoder, config, clock)
    ids = _say(experience, talk[:3])
    doc = store.db.execute("SELECT doc_id FROM chunks WHERE id = ?", [ids[1]]).fetchone()[0]
    experience.delete_document("ns", doc)
    own = _own(embedder, talk[:3])
    # The turns on either side are now each other's neighbours; nothing of the deleted turn is left in them.
    np.testing.assert_allclose(_searched(store, [ids[0], ids[2]]), _mixed(own[[0, 2]], [[1], [0]]), atol=1e-5)
    assert ids[1] not in _kept(store, ids)


def test_a_changed_turn_is_re_mixed_into_its_neighbours(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, embedder: Embedder,
) -> None:
    experience = _memory(store, encoder, config, clock)
    turns = [MemoryTurn(text=t, speaker=s, timestamp=f"2026-05-01T09:00:0{i}Z", doc_id=f"turn-{i}")
             for i, (s, t) in enumerate(ENGLISH_TALK[:3])]
    experience.add_memories("ns", turns)
    changed = MemoryTurn(text="No, it was cancelled because of the storm.", speaker="Caroline",
                         timestamp="2026-05-01T09:00:01Z", doc_id="turn-1")
    experience.add_memories("ns", [changed])
    talk = [ENGLISH_TALK[0], ("Caroline", changed.text), ENGLISH_TALK[2]]
    ids = [_chunk(experience, "ns", f"turn-{i}") for i in range(3)]
    np.testing.assert_allclose(_searched(store, ids), _mixed(_own(embedder, talk), [[1], [0, 2], [1]]), atol=1e-5)
    assert len(encoder.embedded) == 4  # the changed text only


def test_turn_context_0_keeps_own_vectors_and_a_new_setting_applies_when_the_store_is_repaired(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, embedder: Embedder,
) -> None:
    ids = _say(_memory(store, encoder, config, clock, weight=0.0), CHINESE_TALK)
    own = _own(embedder, CHINESE_TALK)
    np.testing.assert_allclose(_searched(store, ids), own, atol=1e-5)
    report = _memory(store, encoder, config, clock).repair()
    assert (report.mixed_turns, report.kept_turns, report.embedded_chunks) == (4, 0, 0)
    np.testing.assert_allclose(_searched(store, ids), _mixed(own, [[1], [0, 2], [1, 3], [2]]), atol=1e-5)
    assert _memory(store, encoder, config, clock).repair().mixed_turns == 0
    assert len(encoder.embedded) == 4


def test_repair_gives_a_lost_turn_vector_back_mixed_without_encoding(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, embedder: Embedder,
) -> None:
    experience = _memory(store, encoder, config, clock)
    ids = _say(experience, ENGLISH_TALK)
    VectorIndex(store).delete("ns", [ids[2]])  # as a kill between Chroma and SQLite could leave it
    report = experience.repair()
    assert (report.embedded_chunks, report.mixed_turns) == (1, 1)
    np.testing.assert_allclose(_searched(store, ids), _mixed(_own(embedder, ENGLISH_TALK),
                                                            [[1], [0, 2], [1, 3], [2]]), atol=1e-5)
    assert len(encoder.embedded) == 4  # the lost vector came from the kept own embedding


def test_a_version_3_store_keeps_its_turns_own_vectors_and_mixes_them_on_open(
    config: Config, embedder: Embedder,
) -> None:
    with Memory(config.replace("retrieval", turn_context=0.0), embedder=embedder) as memory:
        ids = _say(memory.experience, ENGLISH_TALK)
    # Back to what version 3 had: no turn_vectors table (the Chroma vectors are the turns' own embeddings).
    store = open_store(config, embedder.identity)
    store.db.sqlite.executescript(
        "DROP TRIGGER chunks_turn_vectors; DROP TABLE turn_vectors; "
        "UPDATE meta SET value = '3' WHERE key = 'schema_version';"
    )
    store.close()
    store = open_store(config, embedder.identity)  # migrates to the current version
    counting = CountingEncoder(embedder)
    report = _memory(store, counting, config, ManualClock(START)).repair()  # what Memory runs when it opens
    assert (report.kept_turns, report.mixed_turns, report.embedded_chunks) == (4, 4, 0)
    assert len(_kept(store, ids)) == 4
    expected = _mixed(_own(embedder, ENGLISH_TALK), [[1], [0, 2], [1, 3], [2]])
    np.testing.assert_allclose(_searched(store, ids), expected, atol=1e-5)
    assert counting.embedded == []
    store.close()


def test_a_re_embed_keeps_the_new_models_own_vectors_and_mixes_them(config: Config, embedder: Embedder) -> None:
    with Memory(config, embedder=embedder) as memory:
        ids = _say(memory.experience, CHINESE_TALK)
    other = load_embedder(config.replace("embedding", model=minilm_folder()).embedding)
    reembed(config, other)
    with Memory(config.replace("embedding", model=minilm_folder()), embedder=other) as memory:
        generations = {r[0] for r in memory.store.db.execute("SELECT generation FROM turn_vectors").fetchall()}
        assert generations == {memory.store.generation} and memory.store.generation == 1
        expected = _mixed(_own(other, CHINESE_TALK), [[1], [0, 2], [1, 3], [2]])
        np.testing.assert_allclose(_searched(memory.store, ids), expected, atol=1e-5)
        assert memory.experience.repair().mixed_turns == 0


def test_memory_re_mixes_in_the_background_after_opening_and_a_close_stops_it(
    config: Config, embedder: Embedder,
) -> None:
    with Memory(config.replace("retrieval", turn_context=0.0), embedder=embedder) as memory:
        ids = _say(memory.experience, ENGLISH_TALK)
    with Memory(config, embedder=embedder) as memory:
        started = memory.experience._remixer  # by the open
        assert started is not None
        started.join()
        expected = _mixed(_own(embedder, ENGLISH_TALK), [[1], [0, 2], [1, 3], [2]])
        np.testing.assert_allclose(_searched(memory.store, ids), expected, atol=1e-5)
        assert memory.experience.repair().mixed_turns == 0
