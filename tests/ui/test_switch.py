"""The inspector's routes without a browser: `[service] ui = false` answers 404, the headers every answer carries,
the guard of the fragment routes, escaping on the server, nothing in the OpenAPI schema, files that ship."""

from __future__ import annotations

import tomllib
from importlib.resources import files
from pathlib import Path, PurePosixPath

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.ui import documents as ui_documents
from memory import TextInput
from memory.config import Config
from memory.experience import MemoryTurn
from memory.service import Memory
from tests import LOCAL, ROOT

INSPECTOR = {"X-Inspector": "1"}


@pytest.fixture()
def client(config: Config, memory: Memory) -> TestClient:
    return TestClient(create_app(config, memory), base_url=LOCAL)


@pytest.mark.parametrize("path", ["/ui", "/ui/facts", "/ui/static/inspector.js", "/ui/fragments/facts?namespace=u1"])
def test_ui_false_answers_404_like_any_unknown_route(config: Config, memory: Memory, path: str) -> None:
    off = TestClient(create_app(config.replace("service", ui=False), memory), base_url=LOCAL)
    answer = off.get(path, headers=INSPECTOR)
    assert answer.status_code == 404 and answer.json()["error"] == "NotFound"
    assert off.get("/healthz").status_code == 200


def test_the_shell_needs_no_key_and_carries_a_strict_policy(config: Config, memory: Memory) -> None:
    keyed = TestClient(create_app(config.replace("auth", keys={"k-admin-0000": ["*"]}), memory), base_url=LOCAL)
    page = keyed.get("/ui/facts", params={"namespace": "u1"})
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy
    assert page.headers["x-content-type-options"] == "nosniff" and page.headers["cache-control"] == "no-store"
    assert "<script src=\"/ui/static/inspector.js\" defer>" in page.text and "http" not in page.text.split("<body")[0]
    assert keyed.get("/ui/fragments/facts", params={"namespace": "u1"}, headers=INSPECTOR).status_code == 401
    assert keyed.get("/ui/static/inspector.css").status_code == 200
    assert keyed.get("/ui/nothing-here").status_code == 404


def test_fragments_need_the_inspectors_header_and_a_loopback_host_without_keys(client: TestClient) -> None:
    assert client.get("/ui/fragments/namespaces", headers=INSPECTOR).status_code == 200
    bare = client.get("/ui/fragments/namespaces")
    assert bare.status_code == 403 and "X-Inspector" in bare.json()["detail"]
    rebound = client.get("/ui/fragments/namespaces", headers={**INSPECTOR, "host": "evil.example:8000"})
    assert rebound.status_code == 403 and "loopback" in rebound.json()["detail"]
    for host in ("evil.example", "[2001:db8::1]:8000", "127.0.0.1.evil.example", ""):
        assert client.get("/ui/fragments/namespaces", headers={**INSPECTOR, "host": host}).status_code == 403, host
    for host in ("localhost:8000", "[::1]:8000", "[::1]", "127.0.0.1", "LOCALHOST"):
        assert client.get("/ui/fragments/namespaces", headers={**INSPECTOR, "host": host}).status_code == 200


def test_with_keys_the_key_guards_whatever_the_host(config: Config, memory: Memory) -> None:
    keyed = TestClient(create_app(config.replace("auth", keys={"k-admin-0000": ["*"]}), memory),
                       base_url="http://memory.example")
    sent = {**INSPECTOR, "Authorization": "Bearer k-admin-0000"}
    assert keyed.get("/ui/fragments/namespaces", headers=sent).status_code == 200
    assert keyed.get("/ui/fragments/namespaces", headers=INSPECTOR).status_code == 401


def test_stored_markup_is_escaped_in_every_fragment(client: TestClient) -> None:
    evil = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>"
    assert client.post("/v1/facts/pin", json={"namespace": "u1", "text": evil}).status_code == 200
    assert client.post("/v1/documents", json={"namespace": "u1", "text": evil, "doc_id": evil,
                                               "title": evil}).status_code == 200
    pages = [client.get("/ui/fragments/facts", params={"namespace": "u1"}, headers=INSPECTOR),
             client.get("/ui/fragments/documents", params={"namespace": "u1"}, headers=INSPECTOR),
             client.get("/ui/fragments/documents/chunks", params={"namespace": "u1", "doc_id": evil},
                        headers=INSPECTOR),
             client.post("/ui/fragments/recall", data={"namespace": "u1", "query": evil}, headers=INSPECTOR),
             client.post("/ui/fragments/facts/preview", data={"namespace": "u1", "text": evil}, headers=INSPECTOR)]
    for page in pages:
        assert page.status_code == 200, page.text
        assert "<script>" not in page.text and "<img" not in page.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text


def test_a_form_field_that_is_not_a_number_is_a_clear_422(client: TestClient) -> None:
    answer = client.post("/ui/fragments/recall", data={"namespace": "u1", "query": "q", "budget": "lots"},
                         headers=INSPECTOR)
    assert answer.status_code == 422 and answer.json()["detail"] == "budget must be a whole number, got 'lots'"
    bad = client.post("/ui/fragments/context", data={"namespace": "u1", "messages": "[{"}, headers=INSPECTOR)
    assert bad.status_code == 422 and "messages must be a JSON list" in bad.json()["detail"]


def test_the_inspector_is_not_in_the_openapi_schema(client: TestClient) -> None:
    assert not [p for p in client.get("/openapi.json").json()["paths"] if p.startswith("/ui")]


def test_every_template_and_static_file_ships_in_the_package() -> None:
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["api"]
    package = Path(str(files("api")))
    shipped = [p for p in (package / "ui").rglob("*") if p.is_file() and "__pycache__" not in p.parts
               and p.suffix != ".py"]
    assert shipped
    for path in shipped:
        relative = PurePosixPath(path.relative_to(package).as_posix())
        assert any(relative.match(glob) for glob in globs), f"{relative} is not in package-data"


def test_the_documents_fragment_reads_a_screen_of_each_list(client: TestClient, memory: Memory,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ui_documents, "SHOWN", 2)  # the page size, so that a few turns make three screens
    memory.experience.add_memories("u1", [MemoryTurn(f"Turn {i}: 第{i}次散步。", speaker="Ann") for i in range(5)])
    memory.add_document("u1", TextInput("The loader streams rows.", doc_id="loader.md"))
    newest_first = [d.doc_id for d in memory.experience.list_documents("u1", kind="memory")]

    def shown(offset: int) -> tuple[str, list[str]]:
        page = client.get("/ui/fragments/documents", params={"namespace": "u1", "offset": offset}, headers=INSPECTOR)
        assert page.status_code == 200, page.text
        turns = page.text.split('id="turns"', 1)[1] if 'id="turns"' in page.text else ""
        return page.text, [i for i in newest_first if f'data-doc-id="{i}"' in turns]

    first, ids = shown(0)
    assert ids == newest_first[:2] and "Conversation turns (5)" in first and "Rows 1–2 of 5." in first
    assert 'data-doc-id="loader.md"' in first and "Next 2" in first
    later, ids = shown(4)
    assert ids == newest_first[4:] and "Rows 5–5 of 5." in later and "Next 2" not in later
    assert "No more: all 1 are on the earlier pages." in later
    assert client.get("/ui/fragments/documents", params={"namespace": "u1", "offset": -1},
                      headers=INSPECTOR).status_code == 422


@pytest.mark.parametrize("path", ["/ui/static/inspector.js", "/ui/static/missing.js", "/ui/no-such-page",
                                  "/ui/fragments/facts?namespace=bad%20name"])
def test_every_ui_answer_carries_the_headers_errors_and_static_files_included(client: TestClient, path: str) -> None:
    answer = client.get(path, headers=INSPECTOR)
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")
    assert answer.headers["x-content-type-options"] == "nosniff" and answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["cache-control"] == "no-store" and answer.headers["referrer-policy"] == "no-referrer"
    assert client.get("/healthz").headers.get("x-frame-options") is None  # the REST routes are not pages
