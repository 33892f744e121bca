"""With keys configured, a key sees only its namespaces; others answer 404 as if absent."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from memory.config import Config
from memory.service import Memory

ALICE = {"Authorization": "Bearer k-alice-7f3a"}
ADMIN = {"Authorization": "Bearer k-admin-91c2"}


@pytest.fixture()
def secured(config: Config, memory: Memory) -> TestClient:
    keyed = config.replace("auth", keys={"k-alice-7f3a": ["alice", "alice-*"], "k-admin-91c2": ["*"]})
    return TestClient(create_app(keyed, memory))


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
