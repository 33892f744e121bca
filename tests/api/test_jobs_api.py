"""Very large documents become ingest jobs: 202, a job to read, progress, the final status (real service parts)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from memory.config import Config
from memory.embedding import Embedder
from memory.service import Memory
from tests import local_client

EN = "\n\n".join(f"Paragraph {i}: the ferry to the island leaves at {i % 12 + 1} o'clock from pier {i}." for i in range(30))
ZH = "\n\n".join(f"第{i}段：去岛上的渡轮从{i}号码头出发，时间是{i % 12 + 1}点，船票在码头售卖。" for i in range(50))


@pytest.fixture()
def small_jobs(config: Config, embedder: Embedder) -> Iterator[TestClient]:
    """A service whose job threshold is 1,000 characters, so that test documents cross it."""
    config = config.replace("jobs", background_chars=1000)
    with Memory(config, embedder=embedder) as memory:
        yield local_client(create_app(config, memory))


def follow(client: TestClient, namespace: str, job: dict[str, Any]) -> dict[str, Any]:
    deadline = time.monotonic() + 300
    while job["state"] in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.05)
        job = client.get(f"/v1/jobs/{job['job_id']}", params={"namespace": namespace}).json()
    return job


@pytest.mark.parametrize("text", [EN, ZH], ids=["en", "zh"])
def test_a_document_over_the_threshold_answers_202_and_a_job(small_jobs: TestClient, text: str) -> None:
    answer = small_jobs.post("/v1/documents", json={"namespace": "big", "doc_id": "ferry", "text": text})
    assert answer.status_code == 202
    job = answer.json()
    assert job["state"] in ("queued", "running") and job["chars"] == len(text)
    assert answer.headers["location"] == f"/v1/jobs/{job['job_id']}?namespace=big"
    done = follow(small_jobs, "big", job)
    assert done["state"] == "done" and done["status"] == "created" and done["doc_id"] == "ferry"
    shown = small_jobs.get("/v1/documents/ferry", params={"namespace": "big"}).json()
    assert shown["chunks"] == done["chunks"] > 0
    listed = small_jobs.get("/v1/jobs", params={"namespace": "big"}).json()["jobs"]
    assert [j["job_id"] for j in listed] == [job["job_id"]]


def test_background_can_be_asked_for_or_refused(small_jobs: TestClient) -> None:
    short = small_jobs.post("/v1/documents?background=true", json={"namespace": "b", "text": "A short note."})
    assert short.status_code == 202
    assert follow(small_jobs, "b", short.json())["state"] == "done"
    long = small_jobs.post("/v1/documents?background=false", json={"namespace": "b", "doc_id": "l", "text": EN})
    assert long.status_code == 200 and long.json()["status"] == "created"


def test_a_large_upload_becomes_a_job_too(small_jobs: TestClient) -> None:
    answer = small_jobs.post("/v1/documents", data={"namespace": "up"},
                             files={"file": ("notes/渡轮.md", ("# 渡轮\n\n" + ZH).encode(), "text/markdown")})
    assert answer.status_code == 202, answer.text
    done = follow(small_jobs, "up", answer.json())
    assert done["state"] == "done" and done["doc_id"] == "notes/渡轮.md"


def test_bad_fields_are_refused_at_the_door_not_in_a_job(small_jobs: TestClient) -> None:
    answer = small_jobs.post("/v1/documents", json={"namespace": "f", "text": EN, "updated_at": "yesterday"})
    assert answer.status_code == 422 and "updated_at" in answer.json()["detail"]
    deep: dict[str, object] = {}
    for _ in range(60):
        deep = {"d": deep}
    answer = small_jobs.post("/v1/documents", json={"namespace": "f", "text": ZH, "metadata": deep})
    assert answer.status_code == 413 and "metadata" in answer.json()["detail"]
    assert small_jobs.get("/v1/jobs", params={"namespace": "f"}).json()["jobs"] == []


def test_a_job_that_fails_says_why_as_an_error_body_would(small_jobs: TestClient) -> None:
    first = small_jobs.post("/v1/documents?background=false", data={"namespace": "f"},
                            files={"file": ("notes.md", ("# Notes\n\n" + EN).encode(), "text/markdown")})
    assert first.status_code == 200
    other = small_jobs.post("/v1/documents", data={"namespace": "f"},
                            files={"file": ("notes.md", ("# Notes\n\n" + ZH).encode(), "text/markdown")})
    assert other.status_code == 202
    failed = follow(small_jobs, "f", other.json())
    assert failed["state"] == "failed" and failed["error"] == "Conflict"
    assert "doc_id='notes.md'" in failed["detail"] and failed["doc_id"] is None
    shown = small_jobs.get("/v1/documents/notes.md", params={"namespace": "f"}).json()
    assert shown["version"] == 1  # the stored version was kept


def test_cancelling_and_unknown_jobs(small_jobs: TestClient) -> None:
    job = small_jobs.post("/v1/documents", json={"namespace": "c", "text": EN * 3}).json()
    cancelled = small_jobs.delete(f"/v1/jobs/{job['job_id']}", params={"namespace": "c"}).json()
    assert cancelled["state"] in ("cancelled", "done")  # a job past its last batch completes
    if cancelled["state"] == "cancelled":
        assert small_jobs.get("/v1/documents", params={"namespace": "c"}).json()["documents"] == []
    missing = small_jobs.get("/v1/jobs/j-nothing", params={"namespace": "c"})
    assert missing.status_code == 404 and missing.json()["error"] == "NotFound"
    elsewhere = small_jobs.get(f"/v1/jobs/{job['job_id']}", params={"namespace": "other"})
    assert elsewhere.status_code == 404


def test_bad_input_is_refused_before_any_job_is_made(small_jobs: TestClient) -> None:
    answer = small_jobs.post("/v1/documents", json={"namespace": "bad ns", "text": EN})
    assert answer.status_code == 422
    assert small_jobs.get("/v1/jobs", params={"namespace": "badns"}).json()["jobs"] == []
