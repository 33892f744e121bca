"""Ids of every allowed form round-trip through every route that takes one in its path: a `/` (CLI-ingested files,
promoted task items, item keys), spaces, Chinese, `%`, `..`, sent percent-encoded or, where clients keep them,
as they are."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

NS = {"namespace": "u1"}
# (id, whether it can be sent with its slashes as they are: clients remove `.` and `..` path segments)
DOC_IDS = [
    ("notes.md", True), ("docs/a/notes.md", True), ("a b/c d.md", True), ("中文/会议 记录.md", True),
    ("50% done", True), ("a?b#c&d=e", False), ("x/", True), ("/leading", False), ("a//b", False),
    ("../x", False), ("a/../b", False), ("./.hidden", False), ("..", False), ("task:t1:t1/r2", True),
]


def _encoded(value: str) -> str:
    """Every character percent-encoded that could end or move a path segment (quote leaves `.` alone)."""
    return quote(value, safe="").replace(".", "%2E")


def _forms(doc_id: str, literal: bool) -> list[str]:
    """The ways a client may write the id into the path."""
    return [_encoded(doc_id), quote(doc_id, safe="/")] if literal else [_encoded(doc_id)]


@pytest.mark.parametrize(("doc_id", "literal"), DOC_IDS, ids=[d for d, _ in DOC_IDS])
def test_a_document_id_round_trips_through_show_and_delete(client: TestClient, doc_id: str, literal: bool) -> None:
    body = {**NS, "text": f"The document called {doc_id} 中文内容。", "doc_id": doc_id}
    assert client.post("/v1/documents", json=body).json()["doc_id"] == doc_id
    for form in _forms(doc_id, literal):
        shown = client.get(f"/v1/documents/{form}", params=NS)
        assert shown.status_code == 200 and shown.json()["doc_id"] == doc_id, (form, shown.text)
    deleted = client.delete(f"/v1/documents/{_forms(doc_id, literal)[-1]}", params=NS)
    assert deleted.json() == {"deleted": doc_id}
    gone = client.get(f"/v1/documents/{_encoded(doc_id)}", params=NS)
    assert gone.status_code == 404 and repr(doc_id) in gone.json()["detail"]


def test_a_deleted_id_with_a_slash_removes_that_document_only(client: TestClient) -> None:
    for doc_id in ("notes.md", "other/notes.md", "other"):
        client.post("/v1/documents", json={**NS, "text": f"Text of {doc_id}.", "doc_id": doc_id})
    assert client.delete("/v1/documents/other/notes.md", params=NS).json() == {"deleted": "other/notes.md"}
    listed = client.get("/v1/documents", params=NS).json()["documents"]
    assert sorted(d["doc_id"] for d in listed) == ["notes.md", "other"]
    assert client.get("/v1/documents/other%2Fnotes.md", params=NS).status_code == 404


@pytest.mark.parametrize("task_id", ["t1", "t.1:a-b_c", "..", "."])
def test_task_item_keys_and_promoted_ids_round_trip(client: TestClient, task_id: str) -> None:
    """An item key holds its task id and a `/`; promoted, its document id holds both."""
    task = _encoded(task_id)
    text = "Step one reads the CSV files. 第二步校验每一行。 " * 20
    added = client.post(f"/v1/tasks/{task}/items", json={**NS, "kind": "note", "text": text}).json()
    key = added["key"]
    assert key == f"{task_id}/r1"
    for form in (_encoded(key), quote(key, safe="/")) if task_id not in ("..", ".") else (_encoded(key),):
        whole = client.get(f"/v1/tasks/{task}/items/{form}", params=NS)
        assert whole.status_code == 200 and whole.json()["text"] == text, whole.text
        page = client.get(f"/v1/tasks/{task}/items/{form}", params={**NS, "page": 2, "page_tokens": 20}).json()
        assert (page["key"], page["page"]) == (key, 2) and page["pages"] > 2 and page["tokens"] <= 20
    listed = client.get(f"/v1/tasks/{task}/items", params=NS).json()["items"]
    assert [i["key"] for i in listed] == [key]
    promoted = client.post(f"/v1/tasks/{task}/promote", json={**NS, "keys": [key]}).json()
    doc_id = promoted[0]["doc_id"]
    assert doc_id == f"task:{task_id}:{key}"
    shown = client.get(f"/v1/documents/{_encoded(doc_id)}", params=NS).json()
    assert shown["doc_id"] == doc_id and shown["metadata"] == {"task_id": task_id, "key": key, "kind": "note"}
    if task_id not in ("..", "."):
        assert client.get(f"/v1/documents/{doc_id}", params=NS).json()["doc_id"] == doc_id
    assert client.delete(f"/v1/documents/{_encoded(doc_id)}", params=NS).json() == {"deleted": doc_id}
    assert client.delete(f"/v1/tasks/{task}", params=NS).json() == {"deleted": 1}


def test_an_unknown_id_with_a_slash_is_404_naming_it(client: TestClient) -> None:
    for method in ("get", "delete"):
        answer = getattr(client, method)("/v1/documents/no/such/doc", params=NS)
        assert answer.status_code == 404 and "'no/such/doc'" in answer.json()["detail"]
