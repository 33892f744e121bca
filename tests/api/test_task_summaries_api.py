"""GET /v1/tasks/{task_id}/summaries[/{version}]: the versions of a task's compaction summary through the real app."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from memory.config import Config
from memory.service import Memory
from tests import local_client

ALICE = {"Authorization": "Bearer k-alice-7f3a"}
ADMIN = {"Authorization": "Bearer k-admin-91c2"}

TEXTS = {
    "en": {"text": "## Summary of messages[0] to messages[9]\n- Never use Python 2 syntax.\n- Fix the loader.",
           "sections": {"User constraints": ["Never use Python 2 syntax."], "Open": ["Fix the loader."]},
           "dropped": [{"text": "ls -la output", "reason": "tool output, offloaded"}]},
    "zh": {"text": "## 摘要\n- 预算不超过500元。\n- 已修复编码问题。",
           "sections": {"用户约束": ["预算不超过500元。"], "已完成": ["已修复编码问题。"]},
           "dropped": [{"text": "闲聊：天气不错。", "reason": "与任务无关"}]},
}


def _write(memory: Memory, lang: str, namespace: str = "u1", task_id: str = "t1", **changes: Any) -> None:
    args: dict[str, Any] = {"first": 0, "last": 9, "digest": "sha256:ab12", "tokens": 30, "covered_tokens": 1200,
                            "references": ["t1/r2"], **TEXTS[lang], **changes}
    memory.tasks.add_summary(namespace, task_id, **args)


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_list_shows_every_version_oldest_first_without_text(client: TestClient, memory: Memory, lang: str) -> None:
    _write(memory, lang)
    _write(memory, lang, first=10, last=19, dropped=[], summariser="model:qwen2.5-7b")
    response = client.get("/v1/tasks/t1/summaries", params={"namespace": "u1"})
    assert response.status_code == 200, response.text
    assert response.json() == {"summaries": [
        {"version": 1, "created_at": response.json()["summaries"][0]["created_at"], "first": 0, "last": 9,
         "tokens": 30, "covered_tokens": 1200, "dropped": 1, "summariser": "extractive"},
        {"version": 2, "created_at": response.json()["summaries"][1]["created_at"], "first": 10, "last": 19,
         "tokens": 30, "covered_tokens": 1200, "dropped": 0, "summariser": "model:qwen2.5-7b"},
    ]}
    assert TEXTS[lang]["text"] not in response.text


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_show_answers_the_whole_version(client: TestClient, memory: Memory, lang: str) -> None:
    _write(memory, lang)
    response = client.get("/v1/tasks/t1/summaries/1", params={"namespace": "u1"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body == {"version": 1, "created_at": body["created_at"], "first": 0, "last": 9, "digest": "sha256:ab12",
                    "text": TEXTS[lang]["text"], "tokens": 30, "covered_tokens": 1200,
                    "sections": TEXTS[lang]["sections"], "dropped": TEXTS[lang]["dropped"],
                    "references": ["t1/r2"], "summariser": "extractive"}
    assert list(body["sections"]) == list(TEXTS[lang]["sections"])  # the summary's own order


def test_a_task_with_no_summary_lists_none(client: TestClient) -> None:
    assert client.post("/v1/tasks/t1/items", json={"namespace": "u1", "kind": "plan", "text": "the plan"}).is_success
    assert client.get("/v1/tasks/t1/summaries", params={"namespace": "u1"}).json() == {"summaries": []}


@pytest.mark.parametrize("path", ["/v1/tasks/nobody/summaries", "/v1/tasks/nobody/summaries/1"])
def test_an_unknown_task_is_404_with_a_sentence(client: TestClient, path: str) -> None:
    response = client.get(path, params={"namespace": "u1"})
    assert response.status_code == 404
    assert response.json() == {"error": "NotFound", "detail": "task 'nobody' does not exist in namespace 'u1'; "
                                                              "it may have ended or expired — add an item to start it"}


def test_a_missing_version_is_404_naming_the_versions(client: TestClient, memory: Memory) -> None:
    for _ in range(2):
        _write(memory, "en")
    response = client.get("/v1/tasks/t1/summaries/3", params={"namespace": "u1"})
    assert response.status_code == 404
    assert response.json()["error"] == "NotFound"
    assert "has no summary version 3; its versions are 1-2" in response.json()["detail"]


@pytest.mark.parametrize("version", ["x", "0", "-1", "1.5"])
def test_a_version_that_is_not_a_whole_number_from_1_is_422(client: TestClient, memory: Memory,
                                                            version: str) -> None:
    _write(memory, "en")
    response = client.get(f"/v1/tasks/t1/summaries/{version}", params={"namespace": "u1"})
    assert response.status_code == 422
    assert response.json()["error"] == "ValidationError" and "version" in response.json()["detail"]


def test_items_and_summaries_do_not_clash(client: TestClient, memory: Memory) -> None:
    key = client.post("/v1/tasks/t1/items", json={"namespace": "u1", "kind": "note", "text": "an item"}).json()["key"]
    _write(memory, "en")
    assert client.get(f"/v1/tasks/t1/items/{key}", params={"namespace": "u1"}).json()["text"] == "an item"
    assert client.get("/v1/tasks/t1/summaries/1", params={"namespace": "u1"}).json()["version"] == 1


def test_summaries_go_with_their_task(client: TestClient, memory: Memory) -> None:
    _write(memory, "zh")
    assert client.delete("/v1/tasks/t1", params={"namespace": "u1"}).json() == {"deleted": 0}
    assert client.get("/v1/tasks/t1/summaries", params={"namespace": "u1"}).status_code == 404
    _write(memory, "en", namespace="u2")
    assert client.delete("/v1/namespaces/u2").status_code == 200
    assert client.get("/v1/tasks/t1/summaries/1", params={"namespace": "u2"}).status_code == 404


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_a_key_without_the_namespace_gets_404_as_if_absent(config: Config, memory: Memory, lang: str) -> None:
    keyed = config.replace("auth", keys={"k-alice-7f3a": ["alice", "alice-*"], "k-admin-91c2": ["*"]})
    secured = local_client(create_app(keyed, memory))
    _write(memory, lang, namespace="bob")
    for path in ("/v1/tasks/t1/summaries", "/v1/tasks/t1/summaries/1"):
        refused = secured.get(path, params={"namespace": "bob"}, headers=ALICE)
        assert refused.status_code == 404 and refused.json()["error"] == "NotFound", path
        assert TEXTS[lang]["text"] not in refused.text
        assert secured.get(path, params={"namespace": "bob"}).status_code == 401
        assert secured.get(path, params={"namespace": "bob"}, headers=ADMIN).status_code == 200
