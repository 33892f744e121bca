"""The error family against the real service: each status its class, `detail` exactly what REST answers, sentences a
person reads; connection failures retried with a backoff, nothing else ever sent twice."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from bench.server_process import ServerProcess, free_port
from memory_client import (
    APIError,
    Client,
    Conflict,
    ConnectionFailed,
    InvalidAnswer,
    MemoryClientError,
    NotFound,
    ServiceError,
    TimedOut,
    TooLarge,
    ValidationFailed,
)
from tests.client.conftest import Recording


@pytest.fixture(scope="module")
def client(server: ServerProcess) -> Iterator[Client]:
    with Client(server.url, namespace="errors") as opened:
        yield opened


@pytest.mark.parametrize("body", [
    {"query": "预算是多少？", "budget": -1},
    {"query": "tabs", "budget": 10**9},
    {"query": "tabs", "budget": 100, "min_score": 2.0},
])
def test_a_refused_recall_carries_the_services_own_detail(client: Client, server: ServerProcess,
                                                          body: dict[str, object]) -> None:
    raw = httpx.post(server.url + "/v1/recall", json={"namespace": "errors", **body})
    assert raw.status_code == 422
    with pytest.raises(ValidationFailed) as refused:
        client.recall(**body)  # type: ignore[arg-type]
    error = refused.value
    assert (error.status, error.error, error.detail) == (422, "ValidationError", raw.json()["detail"])
    assert str(error) == f"POST /v1/recall failed with 422 ValidationError: {raw.json()['detail']}"
    assert isinstance(error, APIError) and isinstance(error, MemoryClientError)


def test_an_unknown_fact_id_is_not_found(client: Client) -> None:
    with pytest.raises(NotFound) as missing:
        client.delete_fact("f-does-not-exist")
    assert missing.value.status == 404 and "'f-does-not-exist'" in missing.value.detail
    assert "f-does-not-exist" in str(missing.value)


def test_a_wrong_base_url_says_not_found(server: ServerProcess) -> None:
    with Client(server.url + "/memory", namespace="errors") as misplaced, pytest.raises(NotFound) as missing:
        misplaced.recall("anything")
    assert str(missing.value) == "POST /v1/recall failed with 404 NotFound: Not Found"


def test_a_query_over_the_limit_is_too_large(client: Client) -> None:
    with pytest.raises(TooLarge) as refused:
        client.recall("潮汐" * 20_001)
    assert refused.value.status == 413 and "20,000" in refused.value.detail


def test_a_derived_id_that_names_other_content_is_a_conflict(client: Client) -> None:
    client.add_document("First text of the source.", source="notes/a.md")
    with pytest.raises(Conflict) as clash:
        client.add_document("Other text, same source.", source="notes/a.md")
    assert clash.value.status == 409 and "nothing was overwritten" in clash.value.detail


def test_an_unreachable_service_fails_after_the_configured_attempts() -> None:
    port = free_port()  # nobody listens there
    for retries in (0, 2):
        transport = Recording()
        start = time.monotonic()
        with Client(f"http://127.0.0.1:{port}", retries=retries, transport=transport) as client, \
                pytest.raises(ConnectionFailed) as failed:
            client.recall("tabs", namespace="u1")
        assert len(transport.requests) == retries + 1
        assert time.monotonic() - start >= (0.6 if retries else 0.0)  # 0.2 s, then 0.4 s between attempts
        message = str(failed.value)
        assert f"http://127.0.0.1:{port}" in message and "POST /v1/recall" in message and "memory serve" in message
        assert ("after 3 attempts" in message) == (retries == 2)
        assert isinstance(failed.value.__cause__, httpx.ConnectError)


def test_a_refused_request_is_not_sent_again(server: ServerProcess) -> None:
    transport = Recording()
    with Client(server.url, retries=5, transport=transport) as client, pytest.raises(ValidationFailed):
        client.recall("tabs", budget=-1, namespace="errors")
    assert len(transport.requests) == 1


def test_a_read_timeout_is_not_retried_and_the_write_may_still_land(server: ServerProcess) -> None:
    transport = Recording()
    text = "Tidal power turns the rise and fall of the sea into electricity. " * 600
    with Client(server.url, timeout=httpx.Timeout(10.0, read=0.001), retries=5, transport=transport) as client, \
            pytest.raises(TimedOut) as late:
        client.add_document(text, doc_id="slow", namespace="timeouts")
    assert len(transport.requests) == 1
    assert "POST /v1/documents" in str(late.value) and "check before sending it again" in str(late.value)
    with Client(server.url, namespace="timeouts") as client:
        deadline = time.monotonic() + 60
        while not client.list_documents().documents:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert client.get_document("slow").doc_id == "slow"


# The service always answers errors as JSON; a proxy in front of it may not. A MockTransport stands in for that
# proxy, since no request to the real service gets such an answer.
def _proxy(status: int, body: bytes, kind: str) -> httpx.MockTransport:
    return httpx.MockTransport(lambda request: httpx.Response(status, content=body, headers={"content-type": kind}))


def test_an_error_that_is_not_json_is_still_a_sentence() -> None:
    page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    with Client("http://memory.internal", transport=_proxy(502, page, "text/html")) as client, \
            pytest.raises(ServiceError) as failed:
        client.health()
    error = failed.value
    assert (error.status, error.error) == (502, "BadGateway")
    assert "not the memory service's error body (text/html)" in error.detail and "502 Bad Gateway" in error.detail
    assert str(error).startswith("GET /healthz failed with 502 BadGateway: the answer is not")


def test_a_success_that_is_not_json_is_an_invalid_answer() -> None:
    with Client("http://memory.internal", transport=_proxy(200, b"<html>login</html>", "text/html")) as client, \
            pytest.raises(InvalidAnswer, match="not JSON"):
        client.recall("tabs", namespace="u1")
