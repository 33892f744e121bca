"""Deletion leaves no trace: not in any SQLite table (FTS5 segments included), not in Chroma, not in the lexical
index, not in an in-process cache, and recall cannot bring it back.

Each test writes words and ids of its own (markers like `zorb7doc`), deletes them through the API, then looks for
them everywhere, while a control written beside them must survive.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import memory as memory_package
from memory.context import ContextRequest
from memory.experience.lexical import namespace_token
from memory.service import Memory
from memory.store import collection_name
from tests.security.conftest import on_postgres, traces


def _ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _recall(client: TestClient, namespace: str, query: str, **extra: Any) -> dict[str, Any]:
    return _ok(client.post("/v1/recall", json={"namespace": namespace, "query": query, "budget": 4000,
                                                "min_score": 0.0, **extra}))


def _chunk_ids(memory: Memory, namespace: str, doc_id: str | None = None) -> list[str]:
    sql, params = "SELECT id FROM chunks WHERE namespace = ?", [namespace]
    if doc_id is not None:
        sql, params = sql + " AND doc_id = ?", [*params, doc_id]
    return [r[0] for r in memory.store.db.execute(sql, params).fetchall()]


def _vectors(memory: Memory, namespace: str, ids: list[str]) -> list[str]:
    collection = memory.store.collection(namespace, create=False)
    return [] if collection is None else list(collection.get(ids=ids, include=[])["ids"])


def _in_lexical_index(memory: Memory, term: str) -> bool:
    db = memory.store.db
    if on_postgres(memory):  # the postings table and each row's terms
        matched = db.execute("SELECT count(*) FROM lexical_postings WHERE term = ?", [term]).fetchone()[0]
        listed = db.execute("SELECT count(*) FROM chunks_fts WHERE strpos(' ' || terms || ' ', ?) > 0",
                            [f" {term} "]).fetchone()[0]
    else:
        matched = db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", [f'"{term}"']).fetchone()[0]
        listed = db.execute("SELECT count(*) FROM chunks_vocab WHERE term = ?", [term]).fetchone()[0]
    counted = db.execute("SELECT count(*) FROM lexical_terms WHERE term = ?", [term]).fetchone()[0]
    return bool(matched or listed or counted)


def _nowhere(memory: Memory, *needles: str) -> None:
    found = {needle: traces(memory, needle) for needle in needles}
    assert not any(found.values()), f"still stored: {found}"


def test_deleting_a_fact_removes_every_version(module_client: TestClient, module_memory: Memory) -> None:
    first = _ok(module_client.post("/v1/facts/pin", json={"namespace": "del-f", "key": "zorb7key",
                                                          "value": "zorb7old"}))
    second = _ok(module_client.post("/v1/facts/pin", json={"namespace": "del-f", "key": "zorb7key",
                                                           "value": "zorb7new"}))
    unpinned = _ok(module_client.post(f"/v1/facts/{second['stored'][0]['id']}/unpin", params={"namespace": "del-f"}))
    control = _ok(module_client.post("/v1/facts/pin", json={"namespace": "del-f", "text": "Never use zorb7keep."}))
    ids = [first["stored"][0]["id"], second["stored"][0]["id"], unpinned["id"]]
    assert _ok(module_client.delete(f"/v1/facts/{ids[0]}", params={"namespace": "del-f"}))["deleted"] == 3
    _nowhere(module_memory, *ids, "zorb7key", "zorb7old", "zorb7new")
    rendered = _recall(module_client, "del-f", "zorb7key zorb7old zorb7new")["rendered"]
    assert "zorb7" not in rendered.replace("zorb7keep", "")
    for fact_id in ids:
        assert module_client.get(f"/v1/facts/{fact_id}/history", params={"namespace": "del-f"}).status_code == 404
    assert [f["id"] for f in _ok(module_client.get("/v1/facts", params={"namespace": "del-f"}))["facts"]] == \
        [control["stored"][0]["id"]]


def test_deleting_all_facts_of_a_namespace(module_client: TestClient, module_memory: Memory) -> None:
    for text in ("Never use zorb7tabs.", "The budget is at most 500 zorb7coins."):
        _ok(module_client.post("/v1/facts", json={"namespace": "del-fs", "text": text}))
    _ok(module_client.post("/v1/facts/pin", json={"namespace": "del-fs-keep", "text": "Never use zorb7spaces."}))
    assert _ok(module_client.delete("/v1/facts", params={"namespace": "del-fs"}))["deleted"] >= 2
    _nowhere(module_memory, "zorb7tabs", "zorb7coins")
    assert traces(module_memory, "zorb7spaces")  # the other namespace's fact is untouched


@pytest.mark.parametrize("kind", ["document", "upload", "memory", "updated"])
def test_deleting_a_document_leaves_no_trace(module_client: TestClient, module_memory: Memory, kind: str) -> None:
    ns = f"del-d-{kind}"
    text = f"# Zorb7{kind}\n\nThe zorb7{kind} loader reads zorb7secret files.\n\nIt runs nightly at zorb7hour."
    if kind == "document":
        doc_id = _ok(module_client.post("/v1/documents", json={"namespace": ns, "text": text,
                                                               "doc_id": "zorb7id"}))["doc_id"]
    elif kind == "upload":
        doc_id = _ok(module_client.post("/v1/documents", files={"file": ("zorb7id.md", text.encode())},
                                        data={"namespace": ns}))["doc_id"]
    elif kind == "memory":
        doc_id = _ok(module_client.post("/v1/memories", json={"namespace": ns, "messages": [
            {"text": text, "speaker": "Zorb7speaker", "metadata": {"turn": "zorb7turn"}}]}))["ids"][0]
    else:
        doc_id = _ok(module_client.post("/v1/documents", json={"namespace": ns, "text": "The zorb7first version.",
                                                              "doc_id": "zorb7id"}))["doc_id"]
    old_chunks = _chunk_ids(module_memory, ns, doc_id)
    if kind == "updated":
        again = _ok(module_client.post("/v1/documents", json={"namespace": ns, "text": text, "doc_id": doc_id}))
        assert again["status"] == "updated"
    _ok(module_client.post("/v1/documents", json={"namespace": ns, "text": "A zorb7control stays.", "doc_id": "keep"}))
    chunks = sorted(set(old_chunks + _chunk_ids(module_memory, ns, doc_id)))
    assert _vectors(module_memory, ns, chunks) and _in_lexical_index(module_memory, "zorb7secret")
    assert any(i.get("doc_id") == doc_id for i in _recall(module_client, ns, f"zorb7{kind} zorb7secret")["items"])

    _ok(module_client.delete(f"/v1/documents/{doc_id}", params={"namespace": ns}))

    _nowhere(module_memory, doc_id, *chunks, "zorb7secret", "zorb7hour", f"zorb7{kind}", "zorb7first",
             "zorb7turn", "zorb7speaker")
    assert _vectors(module_memory, ns, chunks) == []
    collection = module_memory.store.collection(ns, create=False)
    assert collection is not None and collection.count() == len(_chunk_ids(module_memory, ns)) == 1
    for term in ("zorb7secret", "zorb7hour", f"zorb7{kind}", "zorb7first"):
        assert not _in_lexical_index(module_memory, term), term
    answer = _recall(module_client, ns, f"zorb7{kind} loader zorb7secret nightly zorb7hour")
    assert all(i.get("doc_id") != doc_id for i in answer["items"]) and "zorb7secret" not in answer["rendered"]
    assert module_client.get(f"/v1/documents/{doc_id}", params={"namespace": ns}).status_code == 404
    listed = _ok(module_client.get("/v1/documents", params={"namespace": ns}))["documents"]
    assert [d["doc_id"] for d in listed] == ["keep"]
    assert traces(module_memory, "zorb7control")  # the control is still there: the search does find things


def test_a_deleted_turn_leaves_nothing_in_its_neighbours(module_client: TestClient, module_memory: Memory) -> None:
    ns = "del-turns"
    ids = _ok(module_client.post("/v1/memories", json={"namespace": ns, "messages": [
        {"text": text, "speaker": speaker, "timestamp": f"2026-05-01T09:00:0{i}Z"}
        for i, (speaker, text) in enumerate([("Ann", "Did the zorb7before meeting go well?"),
                                             ("Bob", "The zorb7middle plan was approved."),
                                             ("Ann", "Great, zorb7after we ship it.")])]}))["ids"]
    middle = _chunk_ids(module_memory, ns, ids[1])
    neighbours = _chunk_ids(module_memory, ns, ids[0]) + _chunk_ids(module_memory, ns, ids[2])
    # Each neighbour's vector was mixed with the middle turn's own embedding, and says so.
    assert traces(module_memory, middle[0]) == ["chunks.id", "turn_vectors.id", "turn_vectors.mix"]

    _ok(module_client.delete(f"/v1/documents/{ids[1]}", params={"namespace": ns}))

    # The neighbours were re-mixed without it: no row, no recorded mix, no vector names the deleted chunk.
    _nowhere(module_memory, ids[1], *middle, "zorb7middle")
    assert _vectors(module_memory, ns, middle) == [] and len(_vectors(module_memory, ns, neighbours)) == 2
    mixes = dict(module_memory.store.db.execute(
        "SELECT id, mix FROM turn_vectors WHERE id IN (?, ?)", neighbours).fetchall())
    assert mixes == {neighbours[0]: f"0.25||{neighbours[1]}", neighbours[1]: f"0.25|{neighbours[0]}|"}


def test_ending_a_task_leaves_no_trace(module_client: TestClient, module_memory: Memory) -> None:
    long = " ".join(f"zorb7long{i}" for i in range(300))  # over tasks.offload_tokens: kept whole, recalled as a head
    added = [
        _ok(module_client.post("/v1/tasks/zorb7task/items", json={"namespace": "del-t", "kind": "plan",
                                                                  "text": "First zorb7plan step."})),
        _ok(module_client.post("/v1/tasks/zorb7task/items", json={"namespace": "del-t", "kind": "tool_result",
                                                                  "text": long, "metadata": {"tool": "zorb7tool"}})),
        _ok(module_client.post("/v1/tasks/zorb7sub/items", json={"namespace": "del-t", "kind": "result",
                                                                 "text": "The zorb7sub result.",
                                                                 "parent_task_id": "zorb7task"})),
    ]
    _ok(module_client.post("/v1/tasks/other/items", json={"namespace": "del-t", "kind": "note", "text": "zorb7other"}))
    for task in ("zorb7task", "zorb7sub"):
        module_memory.tasks.add_summary("del-t", task, first=0, last=4, digest="zorb7digest", text="The zorb7summ plan.",
                                        tokens=5, covered_tokens=80, sections={"Open": ["zorb7sect"]},
                                        dropped=[{"text": "zorb7drop", "reason": "noise"}], references=["zorb7ref"])
    assert added[1]["offloaded"]
    page = _ok(module_client.get(f"/v1/tasks/zorb7task/items/{added[1]['key']}",
                                 params={"namespace": "del-t", "page": 2, "page_tokens": 50}))
    assert page["pages"] > 2 and "del-t" in module_memory.caches.namespaces()  # its cuts are cached now
    assert "zorb7plan" in _recall(module_client, "del-t", "zorb7plan", task_id="zorb7task")["rendered"]

    assert _ok(module_client.delete("/v1/tasks/zorb7task", params={"namespace": "del-t"}))["deleted"] == 3

    _nowhere(module_memory, "zorb7task", "zorb7sub", "zorb7plan", "zorb7long1", "zorb7tool", "zorb7summ", "zorb7sect",
             "zorb7drop", "zorb7ref", "zorb7digest")
    assert "del-t" not in module_memory.caches.namespaces(), "a cache still holds the deleted item's text"
    for task in ("zorb7task", "zorb7sub"):
        assert module_client.get(f"/v1/tasks/{task}/items", params={"namespace": "del-t"}).status_code == 404
    answer = _recall(module_client, "del-t", "zorb7plan zorb7long1 zorb7sub", task_id="zorb7task")
    assert not [i for i in answer["items"] if i["tier"] == "task"] and "zorb7" not in answer["rendered"]
    assert traces(module_memory, "zorb7other") == ["task_items.text"]


def test_deleting_a_namespace_leaves_no_trace(module_client: TestClient, module_memory: Memory) -> None:
    ns = "zorb7ns"
    _ok(module_client.post("/v1/documents", json={"namespace": ns, "text": "The zorb7doc vault plan.",
                                                  "doc_id": "zorb7d"}))
    _ok(module_client.post("/v1/memories", json={"namespace": ns, "messages": [{"text": "My zorb7pet is a cat.",
                                                                                 "speaker": "Ann"}]}))
    _ok(module_client.post("/v1/facts/pin", json={"namespace": ns, "text": "Never use zorb7fact."}))
    _ok(module_client.post("/v1/tasks/t1/items", json={"namespace": ns, "kind": "plan", "text": "zorb7item"}))
    module_memory.tasks.add_summary(ns, "t1", first=0, last=1, digest="d", text="The zorb7nssumm plan.", tokens=5,
                                    covered_tokens=40, sections={"Done": ["zorb7nssect"]})
    _ok(module_client.post("/v1/documents", json={"namespace": "zorb7ns-keep", "text": "The zorb7kept plan."}))
    _recall(module_client, ns, "zorb7doc zorb7pet", task_id="t1")  # warms the vector handle cache for the namespace
    assert collection_name(ns) in module_memory.store.collection_names()
    assert len(traces(module_memory, ns, whole=True)) >= 5  # facts, tasks, task_items, documents, chunks

    counts = _ok(module_client.delete(f"/v1/namespaces/{ns}"))
    assert counts == {"facts": 1, "task_items": 1, "documents": 2}

    assert traces(module_memory, ns, whole=True) == [], "rows still name the namespace"
    _nowhere(module_memory, namespace_token(ns), collection_name(ns), "zorb7doc", "zorb7pet", "zorb7fact", "zorb7item",
             "zorb7nssumm", "zorb7nssect")
    assert collection_name(ns) not in module_memory.store.collection_names()
    assert ns not in module_memory.experience._vectors._handles  # the handle cache forgot it too
    for term in ("zorb7doc", "zorb7pet"):
        assert not _in_lexical_index(module_memory, term)
    answer = _recall(module_client, ns, "zorb7doc zorb7pet zorb7fact zorb7item", task_id="t1")
    assert answer["items"] == [] and answer["rendered"] == ""
    assert _ok(module_client.get("/v1/documents", params={"namespace": ns}))["documents"] == []
    assert _ok(module_client.get("/v1/facts", params={"namespace": ns}))["facts"] == []
    assert "zorb7kept" in _recall(module_client, "zorb7ns-keep", "zorb7kept plan")["rendered"]


# Every in-process cache in memory/, and why what it holds cannot outlive a deletion. A new cache fails
# test_every_cache_is_accounted_for until it is reviewed and listed here.
CACHES = {
    "caches.py": "BoundedCache, Caches: every cache of a Memory's requests and records (counts, readings of messages, "
                 "item pages, tool vectors), keyed by namespace; a delete in any tier forgets its namespace's "
                 "entries (checked above and in tests/memory/context/test_hostile_turns.py)",
    "context/memo.py": "Memo: a view of one namespace in a Memory's cache (caches.py)",
    "tokens.py": "get_counter: tokenizers by name, no stored data; CachingCounter: counts in a Memory's cache",
    "text/analyze.py": "_stem: single words to their stems, no record, id or sentence (see the report)",
    "context/assemble.py": "counts and readings of a turn's messages, in the Memory's caches (caches.py)",
    "context/tool_vectors.py": "tool-description vectors by digest, in the Memory's caches (caches.py)",
    "embedding/queries.py": "recent query vectors, in the Memory's caches (caches.py)",
    "task/memory.py": "page cuts of item texts, in the Memory's caches (caches.py)",
    "experience/dense.py": "_handles: Chroma handles by namespace; dropped with the namespace (checked above)",
    "database/postgres.py": "_psycopg_sql: SQL text with psycopg's placeholders; values are always bound, never in it",
    "schema.py": "_fold: single words to the index's tokens, as _stem; _tokenizer: a connection, no data",
    "facts/tagger.py": "shipped_tagger: the span tagger's shipped weights, read once a process; no user data",
}


def test_every_cache_is_accounted_for() -> None:
    root = Path(memory_package.__file__).parent
    pattern = re.compile(r"lru_cache|functools\.cache\b|_cache\s*[:=]|_handles\s*[:=]|BoundedCache\(|OrderedDict\(|\.new\(")
    found = {path.relative_to(root).as_posix() for path in root.rglob("*.py") if pattern.search(path.read_text())}
    assert found == set(CACHES), f"caches to review for deletion: {sorted(found ^ set(CACHES))}"


@pytest.mark.parametrize("word", ["zorb9", "佐布九"], ids=["en", "zh"])
def test_a_deletion_clears_the_texts_context_assembly_remembered(memory: Memory, word: str) -> None:
    """The counts and readings /v1/context keeps of a conversation (memory.caches) go with a deletion in its
    namespace, and only its: another tenant's stay warm."""
    messages = [{"role": "user" if i % 2 == 0 else "assistant",
                 "content": f"{word} question {i}: what about src/{word}/{i}.py? " + "details " * 80}
                for i in range(40)]
    messages.append({"role": "user", "content": f"and {word} now?"})
    for namespace in ("zorb9ns", "zorb9keep"):
        memory.context(ContextRequest(namespace, messages, window=2048, task_id="zorb9t", recall=False))
    memos = memory._assembler.get()._compaction._memos
    counts = memory._assembler.get()._counter._counts
    assert memos is not None and memos.namespaces() == counts.namespaces() == {"zorb9ns", "zorb9keep"}
    assert any(word in text for (namespace, (_, text)) in memos._items if namespace == "zorb9ns")
    memory.delete_namespace("zorb9ns")
    assert "zorb9ns" not in memory.caches.namespaces()
    assert memos.namespaces() == counts.namespaces() == {"zorb9keep"}
