"""Deleted data leaves no bytes in any file of the data folder, in either language: not in memory.db, its -wal or
-shm, not in Chroma's SQLite file or its segment folders; once the erase pass that follows a delete has run
(memory.erase, within ERASE_DELAY_S plus its own run time), after a clean close, and after reopening.

Every needle is first found on disk (the scan can see it), and a control written beside it is still there after.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from memory import TextInput
from memory.config import Config
from memory.embedding import MINILM, Embedder
from memory.erase import ERASE_DELAY_S
from memory.experience.dense import VectorIndex
from memory.experience.lexical import namespace_token
from memory.service import Memory
from memory.store import collection_name, open_store
from tests import local_client

MARKERS = {"en": "zqxmarkerwordvtk", "zh": "独一无二的标记词语"}
KEEP = {"en": "zqxcontrolwordkp", "zh": "留下来的对照词语"}
BOUND_S = ERASE_DELAY_S + 30.0  # the pass starts within the delay; a slow shared machine may stretch its run


def files(root: Path) -> dict[str, bytes]:
    """Every file under the data folder, by path relative to it."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def holding(root: Path, needles: Iterable[str]) -> dict[str, list[str]]:
    """For each needle found, the files whose bytes hold its UTF-8 encoding."""
    found: dict[str, list[str]] = {}
    for name, data in files(root).items():
        for needle in needles:
            if needle.encode("utf-8") in data:
                found.setdefault(needle, []).append(name)
    return found


def holds_vector(data: bytes, vector: np.ndarray) -> bool:
    """Whether the bytes hold the vector's first 16 float32 numbers (at any byte offset, to 1e-5)."""
    head = np.asarray(vector[:16], dtype=np.float32)
    for shift in range(4):
        count = (len(data) - shift) // 4
        if count < len(head):
            continue
        floats = np.frombuffer(data, dtype=np.float32, count=count, offset=shift)
        with np.errstate(invalid="ignore", over="ignore"):  # any bytes read as floats: NaNs and infinities too
            starts = np.flatnonzero(np.abs(floats[: count - len(head) + 1] - head[0]) < 1e-5)
        for i in starts:
            if np.allclose(floats[i:i + len(head)], head, atol=1e-5, rtol=0):
                return True
    return False


def vector_folder(root: Path, name: str) -> Path:
    """The segment folder of a Chroma collection's vectors."""
    conn = sqlite3.connect(f"file:{root / 'chroma' / 'chroma.sqlite3'}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT s.id FROM segments s JOIN collections c ON c.id = s.collection "
                           "WHERE c.name = ? AND s.scope = 'VECTOR'", [name]).fetchone()
    finally:
        conn.close()
    assert row is not None, f"no vector segment for collection {name}"
    return root / "chroma" / row[0]


def _ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _chunk_ids(memory: Memory, namespace: str, doc_id: str | None = None) -> list[str]:
    sql, params = "SELECT id FROM chunks WHERE namespace = ?", [namespace]
    if doc_id is not None:
        sql, params = sql + " AND doc_id = ?", [*params, doc_id]
    return [r[0] for r in memory.store.db.execute(sql, params).fetchall()]


# Each case writes the doomed data (with the marker) and a control (with the keep word) and answers the needles
# that must go and the call that deletes them.
Case = Callable[[Memory, TestClient, str, str], tuple[list[str], Callable[[], Any]]]


def _document(memory: Memory, client: TestClient, marker: str, keep: str) -> tuple[list[str], Callable[[], Any]]:
    memory.add_document("ns", TextInput(f"The secret note {marker} must vanish. " * 40, doc_id="zqdocgone"))
    memory.add_document("ns", TextInput(f"The note {keep} stays.", doc_id="zqdockept"))
    return [marker, "zqdocgone", *_chunk_ids(memory, "ns", "zqdocgone")], \
        lambda: memory.experience.delete_document("ns", "zqdocgone")


def _namespace(memory: Memory, client: TestClient, marker: str, keep: str) -> tuple[list[str], Callable[[], Any]]:
    ns = "zqnsgone"
    memory.add_document(ns, TextInput(f"The vault plan {marker} is secret. " * 20, doc_id="zqdocgone"))
    _ok(client.post("/v1/memories", json={"namespace": ns, "messages": [
        {"text": f"My pet is called {marker}.", "speaker": "Ann"}]}))
    _ok(client.post("/v1/facts/pin", json={"namespace": ns, "text": f"Never use {marker}."}))
    _ok(client.post("/v1/tasks/zqtaskgone/items", json={"namespace": ns, "kind": "plan", "text": f"Step {marker}."}))
    _summary(memory, ns, "zqtaskgone", marker)
    memory.add_document("kept", TextInput(f"The plan {keep} stays.", doc_id="zqdockept"))
    memory.recall(ns, f"vault {marker}")  # warms the namespace's handles, as a live service has them
    needles = [marker, ns, namespace_token(ns), collection_name(ns), "zqdocgone", "zqtaskgone",
               *_chunk_ids(memory, ns)]
    return needles, lambda: _ok(client.delete(f"/v1/namespaces/{ns}"))


def _fact(memory: Memory, client: TestClient, marker: str, keep: str) -> tuple[list[str], Callable[[], Any]]:
    first = _ok(client.post("/v1/facts/pin", json={"namespace": "ns", "key": "zqkeygone", "value": f"{marker} one"}))
    second = _ok(client.post("/v1/facts/pin", json={"namespace": "ns", "key": "zqkeygone", "value": f"{marker} two"}))
    _ok(client.post("/v1/facts/pin", json={"namespace": "ns", "key": "zqkeykept", "value": keep}))
    ids = [first["stored"][0]["id"], second["stored"][0]["id"]]
    return [marker, "zqkeygone", *ids], lambda: _ok(client.delete(f"/v1/facts/{ids[0]}", params={"namespace": "ns"}))


def _facts_of_namespace(memory: Memory, client: TestClient, marker: str,
                        keep: str) -> tuple[list[str], Callable[[], Any]]:
    for text in (f"Never use {marker}.", f"The budget for {marker} is at most 500 coins."):
        _ok(client.post("/v1/facts/pin", json={"namespace": "zqnsgone", "text": text}))
    _ok(client.post("/v1/facts/pin", json={"namespace": "kept", "text": f"Never use {keep}."}))
    return [marker], lambda: _ok(client.delete("/v1/facts", params={"namespace": "zqnsgone"}))


def _summary(memory: Memory, namespace: str, task_id: str, marker: str) -> None:
    memory.tasks.add_summary(namespace, task_id, first=0, last=2, digest="d", text=f"Summary: {marker} so far.",
                             tokens=6, covered_tokens=90, sections={"Open": [f"Finish {marker}."]},
                             dropped=[{"text": f"{marker} chatter", "reason": "noise"}])


def _task(memory: Memory, client: TestClient, marker: str, keep: str) -> tuple[list[str], Callable[[], Any]]:
    long = " ".join(f"{marker}{i}" for i in range(300))  # offloaded: kept whole, recalled as a head
    for task, kind, text in (("zqtaskgone", "plan", f"First {marker} step."), ("zqtaskgone", "tool_result", long),
                             ("other", "note", f"Keep {keep}.")):
        _ok(client.post(f"/v1/tasks/{task}/items", json={"namespace": "ns", "kind": kind, "text": text}))
    _summary(memory, "ns", "zqtaskgone", marker)
    _summary(memory, "ns", "zqtaskgone", marker)  # a second version
    return [marker, "zqtaskgone"], lambda: _ok(client.delete("/v1/tasks/zqtaskgone", params={"namespace": "ns"}))


CASES: dict[str, Case] = {"document": _document, "namespace": _namespace, "fact": _fact,
                          "facts-of-namespace": _facts_of_namespace, "task": _task}


@pytest.mark.parametrize("lang", sorted(MARKERS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_delete_leaves_no_bytes_in_any_file(config: Config, embedder: Embedder, case: str, lang: str) -> None:
    root = config.data_path.resolve()
    memory = Memory(config, embedder=embedder)
    try:
        client = local_client(create_app(memory.config, memory))
        gone, delete = CASES[case](memory, client, MARKERS[lang], KEEP[lang])
        kept = [KEEP[lang]]
        assert set(holding(root, gone)) == set(gone), "the scan must first see every needle"
        delete()
        assert memory.store.eraser.wait(BOUND_S), f"no erase pass within {BOUND_S} s"
        assert holding(root, gone) == {}, "still on disk after the erase pass"
        assert set(holding(root, kept)) == set(kept), "the control went too"
    finally:
        memory.close()
    assert holding(root, gone) == {}, "on disk after a clean close"
    wal = root / "memory.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0, "a clean close leaves an empty WAL"
    with Memory(config, embedder=embedder) as again:
        assert again.store.eraser.wait(BOUND_S)
        assert holding(root, gone) == {}, "on disk after reopening"
        assert set(holding(root, kept)) == set(kept)


@pytest.mark.parametrize("lang", sorted(MARKERS))
def test_a_deleted_documents_vectors_leave_no_numbers_in_chroma(memory: Memory, lang: str) -> None:
    root = memory.config.data_path.resolve()
    memory.add_document("ns", TextInput(f"The secret note {MARKERS[lang]} must vanish. " * 40, doc_id="zqdocgone"))
    memory.add_document("ns", TextInput(f"The note {KEEP[lang]} stays.", doc_id="zqdockept"))
    collection = memory.store.collection("ns", create=False)
    assert collection is not None
    gone_ids, kept_ids = _chunk_ids(memory, "ns", "zqdocgone"), _chunk_ids(memory, "ns", "zqdockept")
    got = collection.get(ids=gone_ids + kept_ids, include=["embeddings"])
    vectors = dict(zip(got["ids"], np.asarray(got["embeddings"], dtype=np.float32), strict=True))
    chroma = {name: data for name, data in files(root).items() if name.startswith("chroma/")}
    assert all(any(holds_vector(d, vectors[i]) for d in chroma.values()) for i in gone_ids + kept_ids)

    memory.experience.delete_document("ns", "zqdocgone")
    assert memory.store.eraser.wait(BOUND_S)

    chroma = {name: data for name, data in files(root).items() if name.startswith("chroma/")}
    left = {i: [n for n, d in chroma.items() if holds_vector(d, vectors[i])] for i in gone_ids}
    assert not any(left.values()), f"deleted vectors still in {left}"
    assert all(any(holds_vector(d, vectors[i]) for d in chroma.values()) for i in kept_ids)


def test_a_forgotten_namespace_leaves_no_chroma_folder(memory: Memory) -> None:
    root = memory.config.data_path.resolve()
    memory.add_document("zqnsgone", TextInput("The zqxvault plan. " * 30, doc_id="d"))
    memory.add_document("kept", TextInput("The zqxkept plan.", doc_id="d"))
    gone, kept = vector_folder(root, collection_name("zqnsgone")), vector_folder(root, collection_name("kept"))
    assert gone.is_dir() and kept.is_dir()

    memory.delete_namespace("zqnsgone")
    assert memory.store.eraser.wait(BOUND_S)

    assert not gone.exists() and kept.is_dir()
    assert "zqxkept" in memory.recall("kept", "zqxkept plan", min_score=0.0).rendered


def test_an_id_chroma_had_persisted_leaves_its_index_files(config: Config, seed: int) -> None:
    rng = np.random.default_rng(seed)
    store = open_store(config, MINILM)
    try:
        root = store.root
        ids = [f"c{n:020x}-1-0" for n in range(1200)]  # more writes than hnsw:sync_threshold: Chroma persisted them
        rows = rng.normal(size=(len(ids), MINILM.dimension)).astype(np.float32)
        vectors = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        index = VectorIndex(store)
        index.add("ns", ids, vectors)
        folder = vector_folder(root, collection_name("ns"))
        pickle = folder / "index_metadata.pickle"
        assert ids[7].encode() in pickle.read_bytes()
        assert holds_vector((folder / "data_level0.bin").read_bytes(), vectors[7])

        with store.transaction() as tx:
            store.erase_later(tx, vectors_of="ns")
            index.delete("ns", ids[7:9], scrub=True)
        assert store.eraser.wait(BOUND_S)

        assert holding(root, ids[7:9]) == {}
        assert not any(holds_vector(data, vectors[7]) for data in files(root).values())
        assert ids[10].encode() in pickle.read_bytes() and index.ids("ns") == set(ids) - set(ids[7:9])
    finally:
        store.close()
