"""The service skin: health, metrics, error bodies, auth and request limits, through TestClient."""

from __future__ import annotations

from fastapi.testclient import TestClient

from api.app import create_app
from memory.config import Config
from memory.embedding import MINILM
from memory.service import Memory
from tests import local_client


def test_healthz(client: TestClient, config: Config) -> None:
    body = client.get("/healthz").json()
    assert body["status"] == "ok"
    assert body["model"] == MINILM.model
    assert body["backend"] == "onnx-int8"  # a new store's default, chosen by embedding.backend "auto"
    assert body["counts"]["facts"] == 0
    # Without keys the service listens on loopback only, and shows the operator everything.
    assert body["store"].startswith(str(config.data_path.resolve()))


def test_metrics_need_no_key_without_keys_configured(client: TestClient) -> None:
    assert client.get("/metrics").status_code == 200


def test_metrics_are_prometheus_text(client: TestClient) -> None:
    client.get("/healthz")
    text = client.get("/metrics").text
    assert "# TYPE memory_requests_total counter" in text
    assert 'memory_requests_total{method="GET",route="/healthz",status="200"}' in text
    assert "memory_request_duration_seconds_bucket" in text


def test_unknown_route_is_a_json_404(client: TestClient) -> None:
    response = client.get("/v1/nothing")
    assert response.status_code == 404
    assert response.json()["error"] == "NotFound"


def test_oversized_body_is_413(config: Config, memory: Memory) -> None:
    small = local_client(create_app(config.replace("limits", max_request_bytes=100), memory))
    response = small.post("/v1/recall", content=b"x" * 500, headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert response.json()["error"] == "TooLarge"


def test_every_answer_is_counted_under_its_route_and_status(config: Config, memory: Memory) -> None:
    client = local_client(create_app(config.replace("limits", max_request_bytes=100), memory))
    client.post("/v1/recall", content=b"x" * 500, headers={"content-type": "application/json"})  # declared: 413
    client.get("/v1/nothing")
    client.post("/v1/recall", json={"namespace": "m", "query": "tea", "budget": 50})
    client.post("/v1/recall", json={"namespace": "m", "query": "tea", "budget": -1})
    text = client.get("/metrics").text
    for labels in ('method="POST",route="unmatched",status="413"', 'method="GET",route="unmatched",status="404"',
                   'method="POST",route="/v1/recall",status="200"', 'method="POST",route="/v1/recall",status="422"'):
        assert f"memory_requests_total{{{labels}}} 1.0" in text, labels
    assert 'memory_request_duration_seconds_count{route="/v1/recall"} 2.0' in text
