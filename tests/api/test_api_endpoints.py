"""Every /v1 resource end to end through the app, English and Chinese, with the API.md error body."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from memory.tokens import get_counter


def _ok(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    return response.json()


def test_facts_extract_supersede_list_history_delete(client: TestClient) -> None:
    first = _ok(client.post("/v1/facts", json={"namespace": "u1", "text": "以后不要用Python 2的语法，预算不超过500元。"}))
    assert {f["kind"] for f in first["stored"]} >= {"prohibition", "limit"}
    second = _ok(client.post("/v1/facts", json={"namespace": "u1", "text": "预算改成800元吧。"}))
    assert len(second["superseded"]) == 1 and "800" in second["stored"][0]["value"]
    facts = _ok(client.get("/v1/facts", params={"namespace": "u1"}))["facts"]
    budget = next(f for f in facts if f["key"] == second["stored"][0]["key"])
    history = _ok(client.get(f"/v1/facts/{budget['id']}/history", params={"namespace": "u1"}))["facts"]
    assert [f["version"] for f in history] == [1, 2]
    assert _ok(client.delete(f"/v1/facts/{budget['id']}", params={"namespace": "u1"}))["deleted"] == 2
    assert _ok(client.delete("/v1/facts", params={"namespace": "u1"}))["deleted"] >= 1
    assert _ok(client.get("/v1/facts", params={"namespace": "u1"}))["facts"] == []


def test_pin_and_unpin(client: TestClient) -> None:
    pinned = _ok(client.post("/v1/facts/pin", json={"namespace": "u1", "text": "Only analyse columns A and B."}))
    fact = pinned["stored"][0]
    assert fact["pinned"]
    unpinned = _ok(client.post(f"/v1/facts/{fact['id']}/unpin", params={"namespace": "u1"}))
    assert unpinned["pinned"] is False and unpinned["version"] == fact["version"] + 1
    kv = _ok(client.post("/v1/facts/pin", json={"namespace": "u1", "key": "deadline", "value": "Friday"}))
    assert kv["stored"][0]["pinned"]


def test_documents_ingest_idempotent_update_list_delete(client: TestClient) -> None:
    body = {"namespace": "u1", "text": "# Loader\n\nThe loader reads CSV files from S3.", "doc_id": "etl"}
    assert _ok(client.post("/v1/documents", json=body))["status"] == "created"
    assert _ok(client.post("/v1/documents", json=body))["status"] == "unchanged"
    changed = {**body, "text": "# Loader\n\nThe loader reads Parquet files from GCS."}
    assert _ok(client.post("/v1/documents", json=changed))["status"] == "updated"
    docs = _ok(client.get("/v1/documents", params={"namespace": "u1"}))["documents"]
    assert [d["doc_id"] for d in docs] == ["etl"] and docs[0]["version"] == 2
    _ok(client.delete("/v1/documents/etl", params={"namespace": "u1"}))
    assert client.get("/v1/documents/etl", params={"namespace": "u1"}).status_code == 404


def test_document_upload_multipart(client: TestClient) -> None:
    files = {"file": ("部署.md", "# 部署\n\n先备份数据库，然后发布。".encode())}
    result = _ok(client.post("/v1/documents", files=files, data={"namespace": "u1"}))
    assert result["status"] == "created" and result["chunks"] == 1
    bad = client.post("/v1/documents", files={"file": ("x.exe", b"MZ\x00")}, data={"namespace": "u1"})
    assert bad.status_code == 422 and "not supported" in bad.json()["detail"]
    binary = client.post("/v1/documents", files={"file": ("notes.txt", b"\xff\xfe\x00bad")}, data={"namespace": "u1"})
    assert binary.status_code == 422
    assert binary.json()["detail"].startswith("notes.txt is not UTF-8 text")


def test_memories_then_recall_returns_turn_with_metadata(client: TestClient) -> None:
    messages = [
        {"text": "I moved to Berlin last May.", "speaker": "Anna", "timestamp": "2023-06-01T10:00:00Z",
         "metadata": {"turn": "D3:4"}},
        {"text": "My cat is called Miso.", "speaker": "Anna", "timestamp": "2023-06-02T10:00:00Z",
         "metadata": {"turn": "D3:5"}},
    ]
    stored = _ok(client.post("/v1/memories", json={"namespace": "u1", "messages": messages}))
    assert stored["stored"] == 2 and len(stored["ids"]) == 2
    answer = _ok(client.post("/v1/recall", json={"namespace": "u1", "query": "Where does Anna live?",
                                                 "budget": 200}))
    top = answer["items"][0]
    assert top["tier"] == "experience" and top["metadata"]["turn"] == "D3:4"
    assert top["doc_id"] in stored["ids"]
    assert answer["used_tokens"] == get_counter().count(answer["rendered"]) <= 200


def test_user_turns_are_scanned_for_facts(client: TestClient) -> None:
    stored = _ok(client.post("/v1/memories", json={"namespace": "u1", "messages": [
        {"text": "Please never use Python 2 syntax.", "speaker": "user"},
        {"text": "Never use Python 2 syntax.", "speaker": "assistant"}]}))
    assert stored["facts"] == 1


def test_tasks_items_offload_read_promote_end(client: TestClient) -> None:
    big = "Result row: value 42 and more text. " * 200
    added = _ok(client.post("/v1/tasks/t-42/items", json={"namespace": "u1", "kind": "tool_result", "text": big}))
    assert added["offloaded"] and added["tokens"] == get_counter().count(big)
    full = _ok(client.get(f"/v1/tasks/t-42/items/{added['key']}", params={"namespace": "u1"}))
    assert full["text"] == big
    page = _ok(client.get(f"/v1/tasks/t-42/items/{added['key']}",
                          params={"namespace": "u1", "page": 2, "page_tokens": 100}))
    assert page["page"] == 2 and page["tokens"] <= 100
    recall = _ok(client.post("/v1/recall", json={"namespace": "u1", "query": "value", "budget": 500,
                                                 "task_id": "t-42"}))
    task_items = [i for i in recall["items"] if i["tier"] == "task"]
    assert task_items and task_items[0]["key"] == added["key"] and "offloaded" in task_items[0]["text"]
    promoted = _ok(client.post("/v1/tasks/t-42/promote", json={"namespace": "u1", "keys": [added["key"]]}))
    assert promoted[0]["status"] == "created"
    assert _ok(client.delete("/v1/tasks/t-42", params={"namespace": "u1"}))["deleted"] == 1
    assert client.get(f"/v1/tasks/t-42/items/{added['key']}", params={"namespace": "u1"}).status_code == 404


def test_delete_namespace_forgets_everything(client: TestClient) -> None:
    _ok(client.post("/v1/facts/pin", json={"namespace": "gone", "text": "Never use tabs."}))
    _ok(client.post("/v1/documents", json={"namespace": "gone", "text": "Tabs versus spaces notes."}))
    _ok(client.post("/v1/tasks/t1/items", json={"namespace": "gone", "kind": "note", "text": "a note"}))
    removed = _ok(client.delete("/v1/namespaces/gone"))
    assert removed == {"facts": 1, "task_items": 1, "documents": 1}
    answer = _ok(client.post("/v1/recall", json={"namespace": "gone", "query": "tabs", "budget": 500,
                                                 "task_id": "t1"}))
    assert answer["items"] == [] and answer["rendered"] == ""


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "status"),
    [
        ("post", "/v1/recall", {"json": {"namespace": "u1", "query": "x", "budget": -1}}, 422),
        ("post", "/v1/recall", {"json": {"namespace": "u1", "query": "x", "budget": 10**9}}, 422),
        ("post", "/v1/recall", {"json": {"namespace": "u1", "query": "x", "budget": "lots"}}, 422),
        ("post", "/v1/recall", {"json": {"namespace": "../etc", "query": "x"}}, 422),
        ("post", "/v1/recall", {"json": {"namespace": "u1", "query": "x", "filters": {"colour": "red"}}}, 422),
        ("post", "/v1/recall", {"json": {"namespace": "u1", "query": "x" * 30_000}}, 413),
        ("post", "/v1/recall", {"content": b"\xff\xfe not json", "headers": {"content-type": "application/json"}},
         422),
        ("post", "/v1/facts", {"json": {"namespace": "u1", "text": ""}}, 422),
        ("post", "/v1/documents", {"content": b'{"namespace": "u1", "text": "a \\ud800 b"}',
                                   "headers": {"content-type": "application/json"}}, 422),
        ("post", "/v1/facts/pin", {"json": {"namespace": "u1"}}, 422),
        ("post", "/v1/memories", {"json": {"namespace": "u1", "messages": []}}, 422),
        ("post", "/v1/memories", {"json": {"namespace": "u1", "messages": [{"text": "hi", "timestamp": "soon"}]}},
         422),
        ("post", "/v1/documents", {"json": {"namespace": "u1", "text": "   "}}, 422),
        ("post", "/v1/documents", {"content": b"{", "headers": {"content-type": "application/json"}}, 422),
        ("post", "/v1/tasks/t1/items", {"json": {"namespace": "u1", "kind": "gossip", "text": "x"}}, 422),
        ("post", "/v1/tasks/t1/items", {"json": {"namespace": "u1", "kind": "note", "text": "x", "ttl_s": 0}}, 422),
        ("get", "/v1/tasks/nope/items/nope/r1", {"params": {"namespace": "u1"}}, 404),
        ("get", "/v1/facts/f-000/history", {"params": {"namespace": "u1"}}, 404),
        ("delete", "/v1/documents/nope", {"params": {"namespace": "u1"}}, 404),
        ("get", "/v1/facts", {}, 422),
    ],
)
def test_bad_input_gets_a_clear_4xx(client: TestClient, method: str, path: str, kwargs: dict[str, Any],
                                    status: int) -> None:
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "detail"} and len(body["detail"]) > 10


def test_a_lone_surrogate_in_a_query_is_answered_not_a_500(client: TestClient) -> None:
    _ok(client.post("/v1/documents", json={"namespace": "u1", "text": "hello world"}))
    body = b'{"namespace": "u1", "query": "\\ud800 hello \\u0000 AND OR * \\"", "budget": 50}'
    answer = _ok(client.post("/v1/recall", content=body, headers={"content-type": "application/json"}))
    assert answer["used_tokens"] <= 50


def test_turn_timestamps_are_stored_in_one_iso_form(client: TestClient) -> None:
    _ok(client.post("/v1/memories", json={"namespace": "u1", "messages": [
        {"text": "We met in Lisbon.", "speaker": "Anna", "timestamp": "2023-06-01 10:00:00+02:00"}]}))
    docs = _ok(client.get("/v1/documents", params={"namespace": "u1"}))["documents"]
    assert docs[0]["updated_at"] == "2023-06-01T08:00:00Z"


def test_the_document_list_pages_by_kind_and_says_how_many_there_are(client: TestClient) -> None:
    _ok(client.post("/v1/documents", json={"namespace": "u1", "text": "The loader streams rows.", "doc_id": "a.md"}))
    _ok(client.post("/v1/documents", json={"namespace": "u1", "text": "京沪高铁全长一千三百多公里。", "doc_id": "铁路.md"}))
    _ok(client.post("/v1/memories", json={"namespace": "u1", "messages": [
        {"text": f"第{i}次散步很愉快。", "speaker": "小王"} for i in range(5)]}))
    every = _ok(client.get("/v1/documents", params={"namespace": "u1"}))
    assert every["total"] == len(every["documents"]) == 7
    turns = [d["doc_id"] for d in every["documents"] if d["kind"] == "memory"]
    page = _ok(client.get("/v1/documents", params={"namespace": "u1", "kind": "memory", "limit": 2, "offset": 4}))
    assert [d["doc_id"] for d in page["documents"]] == turns[4:] and page["total"] == 5
    only = _ok(client.get("/v1/documents", params={"namespace": "u1", "kind": "document"}))
    assert {d["doc_id"] for d in only["documents"]} == {"a.md", "铁路.md"} and only["total"] == 2
    for params, field in (({"kind": "turn"}, "kind"), ({"limit": 0}, "limit"), ({"offset": -1}, "offset"),
                          ({"limit": "ten"}, "limit")):
        refused = client.get("/v1/documents", params={"namespace": "u1", **params})
        assert refused.status_code == 422 and field in refused.json()["detail"], refused.text
