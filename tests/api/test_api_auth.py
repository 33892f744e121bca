"""With keys configured, a key sees only its namespaces (others answer 404 as if absent), and nothing else's:
no store-wide counts, paths or metrics, no trace of another namespace's words."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from memory.config import Config
from memory.embedding import MINILM, Embedder
from memory.service import Memory
from tests import local_client
from tests.conftest import ManualClock

ALICE = {"Authorization": "Bearer k-alice-7f3a"}
ADMIN = {"Authorization": "Bearer k-admin-91c2"}


@pytest.fixture()
def secured(config: Config, memory: Memory) -> TestClient:
    keyed = config.replace("auth", keys={"k-alice-7f3a": ["alice", "alice-*"], "k-admin-91c2": ["*"]})
    return local_client(create_app(keyed, memory))


def test_missing_or_unknown_key_is_401(secured: TestClient) -> None:
    assert secured.get("/v1/facts", params={"namespace": "alice"}).status_code == 401
    wrong = secured.get("/v1/facts", params={"namespace": "alice"}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "Unauthorized"


def test_a_key_cannot_touch_another_namespace(secured: TestClient) -> None:
    fact = secured.post("/v1/facts/pin", json={"namespace": "bob", "text": "Never use tabs."}, headers=ADMIN)
    fact_id = fact.json()["stored"][0]["id"]
    assert secured.post("/v1/facts/pin", json={"namespace": "alice-x", "text": "Never use tabs."},
                        headers=ALICE).status_code == 200
    for method, path, kwargs in [
        ("get", "/v1/facts", {"params": {"namespace": "bob"}}),
        ("get", f"/v1/facts/{fact_id}/history", {"params": {"namespace": "bob"}}),
        ("delete", f"/v1/facts/{fact_id}", {"params": {"namespace": "bob"}}),
        ("delete", "/v1/namespaces/bob", {}),
        ("post", "/v1/recall", {"json": {"namespace": "bob", "query": "tabs"}}),
        ("get", "/v1/documents", {"params": {"namespace": "bob"}}),
    ]:
        response = getattr(secured, method)(path, headers=ALICE, **kwargs)
        assert response.status_code == 404, (method, path)
    # Alice's own namespace answers 404 for bob's fact id too: ids never cross namespaces.
    assert secured.delete(f"/v1/facts/{fact_id}", params={"namespace": "alice"}, headers=ALICE).status_code == 404
    assert len(secured.get("/v1/facts", params={"namespace": "bob"}, headers=ADMIN).json()["facts"]) == 1


def test_without_a_valid_key_healthz_says_only_that_the_service_lives(secured: TestClient, config: Config) -> None:
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic k-admin-91c2"}):
        response = secured.get("/healthz", headers=headers)
        assert response.status_code == 200
        assert response.json() == {"status": "ok"}, headers


def test_a_scoped_key_sees_the_model_and_its_own_counts_but_no_paths(secured: TestClient, config: Config) -> None:
    secured.post("/v1/facts/pin", json={"namespace": "bob", "text": "Never use tabs."}, headers=ADMIN)
    secured.post("/v1/documents", json={"namespace": "bob", "doc_id": "b", "text": "Bob's plan."}, headers=ADMIN)
    secured.post("/v1/facts/pin", json={"namespace": "alice-x", "text": "预算不超过500元。"}, headers=ALICE)
    scoped = secured.get("/healthz", headers=ALICE)
    assert scoped.status_code == 200
    assert scoped.json() == {"status": "ok", "backend": "onnx-int8", "model": MINILM.model, "dimension": MINILM.dimension,
                             "tokenizer": "cl100k_base",
                             "counts": {"facts": 1, "documents": 0, "chunks": 0, "task_items": 0, "namespaces": 1}}
    assert str(config.data_path.resolve()) not in scoped.text
    admin = secured.get("/healthz", headers=ADMIN).json()
    assert admin["counts"]["facts"] == 2 and admin["counts"]["namespaces"] == 2 and admin["counts"]["documents"] == 1
    assert admin["store"].startswith(str(config.data_path.resolve()))


def test_metrics_need_a_key_for_every_namespace(secured: TestClient) -> None:
    for headers in ({}, {"Authorization": "Bearer nope"}, ALICE):
        response = secured.get("/metrics", headers=headers)
        assert response.status_code == 401, headers
        assert response.json()["error"] == "Unauthorized" and response.json()["detail"], headers
    response = secured.get("/metrics", headers=ADMIN)
    assert response.status_code == 200
    assert "# TYPE memory_requests_total counter" in response.text
    assert 'route="/metrics",status="401"' in response.text  # the refusals were counted, not hidden


@pytest.mark.parametrize(("alice", "query", "word"), [
    (["The CSV loader retries a failed batch twice.", "Deployments run on Fridays after the smoke tests."],
     "how often does the loader retry a batch", "batch"),
    (["北方人过年习惯包饺子，饺子馅通常用猪肉和白菜。", "京沪高速铁路最高时速三百五十公里。"], "过年吃什么馅的饺子", "饺子"),
], ids=["en", "zh"])
def test_alice_cannot_tell_whether_bob_holds_her_word(
    config: Config, embedder: Embedder, alice: list[str], query: str, word: str
) -> None:
    keyed = config.replace("auth", keys={"k-alice-7f3a": ["alice"], "k-bob-55d0": ["bob"]})
    bob = {"Authorization": "Bearer k-bob-55d0"}
    with Memory(keyed, embedder=embedder, clock=ManualClock()) as memory:
        client = local_client(create_app(keyed, memory))
        for i, text in enumerate(alice):
            assert client.post("/v1/documents", json={"namespace": "alice", "text": text, "doc_id": f"a{i}"},
                               headers=ALICE).status_code == 200

        def answers() -> list[object]:
            recall = client.post("/v1/recall", json={"namespace": "alice", "query": query, "budget": 400,
                                                     "min_score": 0.0}, headers=ALICE)
            return [recall.json(), client.get("/healthz", headers=ALICE).json()]

        before = answers()
        assert any(word in item["text"] for item in before[0]["items"])  # type: ignore[index]
        for n in range(30):  # bob's word is now in most of the store's chunks
            client.post("/v1/documents", json={"namespace": "bob", "text": f"{word} " * 40, "doc_id": f"b{n}"},
                        headers=bob)
        assert answers() == before
