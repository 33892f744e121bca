"""Isolation: a key for namespace a can neither see nor touch anything of namespace b, on every route of the app.

The routes come from `app.routes`, so a new route fails `test_every_route_is_probed` until this file says how to
aim it at another namespace. API.md: another key's namespace answers 404, exactly as if it did not exist.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts
from fastapi.testclient import TestClient

from api.app import create_app
from memory.embedding import Embedder
from memory.service import Memory
from tests import local_client
from tests.conftest import on_backend
from tests.security.conftest import make_config, snapshot

A = {"Authorization": "Bearer key-a-1f9c"}
B = {"Authorization": "Bearer key-b-77e2"}
SECRET = "zanzibarite"  # a word only namespace b holds


@dataclass(frozen=True)
class World:
    app: FastAPI
    client: TestClient
    memory: Memory
    b_doc: str
    b_memory: str
    b_fact: str
    b_key: str
    a_key: str
    b_job: str


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, module_backend: str,
          request: pytest.FixtureRequest) -> Iterator[World]:
    """Keys a and b, each holding a document, a conversation turn, a pinned fact and a task item of its own (b's
    task a compaction summary too), on each backend in turn."""
    config = on_backend(make_config(tmp_path_factory.mktemp("isolation"), **{"key-a-1f9c": ["a"], "key-b-77e2": ["b"]}),
                        module_backend, request)
    with Memory(config, embedder=embedder) as memory:
        app = create_app(config, memory)
        client = local_client(app)

        def ok(response: Any) -> Any:
            assert response.status_code == 200, response.text
            return response.json()

        b_doc = ok(client.post("/v1/documents", headers=B, json={
            "namespace": "b", "doc_id": "b-plan", "project": "vault",
            "text": f"The {SECRET} formula is kept in the vault behind the loader."}))["doc_id"]
        b_memory = ok(client.post("/v1/memories", headers=B, json={"namespace": "b", "messages": [
            {"text": f"My {SECRET} password is hunter2.", "speaker": "Bob"}]}))["ids"][0]
        b_fact = ok(client.post("/v1/facts/pin", headers=B, json={
            "namespace": "b", "text": f"Never reveal the {SECRET} formula."}))["stored"][0]["id"]
        b_key = ok(client.post("/v1/tasks/tb/items", headers=B, json={
            "namespace": "b", "kind": "plan", "text": f"Move the {SECRET} formula tonight."}))["key"]
        ok(client.post("/v1/documents", headers=A, json={
            "namespace": "a", "doc_id": "a-plan", "project": "vault",
            "text": "The loader formula is documented in the vault of namespace a."}))
        memory.tasks.add_summary("b", "tb", first=0, last=3, digest="sha256:b", text=f"The {SECRET} plan so far.",
                                 tokens=8, covered_tokens=120, sections={"Open": [f"Move the {SECRET} formula."]},
                                 dropped=[{"text": "hunter2", "reason": "a secret"}], references=[b_key])
        a_key = ok(client.post("/v1/tasks/ta/items", headers=A, json={
            "namespace": "a", "kind": "plan", "text": "Read the loader formula."}))["key"]
        job = client.post("/v1/documents?background=true", headers=B, json={
            "namespace": "b", "doc_id": "b-job", "text": f"The {SECRET} formula, ingested as a job."})
        assert job.status_code == 202, job.text
        while memory.jobs.get("b", job.json()["job_id"]).state in ("queued", "running"):
            time.sleep(0.05)  # done before the probes start: they compare the store before and after
        yield World(app, client, memory, b_doc, b_memory, b_fact, b_key, a_key, job.json()["job_id"])


def _probes(w: World) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """For each route: requests key a may send that aim at b's namespace, or at b's ids through its own."""
    nb, na = {"namespace": "b"}, {"namespace": "a"}
    return {
        ("POST", "/v1/recall"): [{"json": {**nb, "query": f"{SECRET} formula"}},
                                 {"json": {**nb, "query": "formula", "task_id": "tb"}}],
        ("POST", "/v1/context"): [
            {"json": {**nb, "window": 8192, "messages": [{"role": "user", "content": f"The {SECRET} formula?"}]}},
            {"json": {**nb, "window": 8192, "task_id": "tb", "query": SECRET,
                      "messages": [{"role": "user", "content": "Never use tabs. What is the plan?"}]}}],
        ("POST", "/v1/facts"): [{"json": {**nb, "text": "Never use tabs."}}],
        ("GET", "/v1/facts"): [{"params": nb}, {"params": {**nb, "pinned": True}}],
        ("DELETE", "/v1/facts"): [{"params": nb}],
        ("POST", "/v1/facts/pin"): [{"json": {**nb, "text": "Never use tabs."}},
                                    {"json": {**nb, "key": "deadline", "value": "Friday"}}],
        ("GET", "/v1/facts/{fact_id}/history"): [{"path": {"fact_id": w.b_fact}, "params": nb},
                                                 {"path": {"fact_id": w.b_fact}, "params": na}],
        ("POST", "/v1/facts/{fact_id}/unpin"): [{"path": {"fact_id": w.b_fact}, "params": nb},
                                                {"path": {"fact_id": w.b_fact}, "params": na}],
        ("POST", "/v1/facts/{fact_id}/pin"): [{"path": {"fact_id": w.b_fact}, "params": nb},
                                              {"path": {"fact_id": w.b_fact}, "params": na}],
        ("DELETE", "/v1/facts/{fact_id}"): [{"path": {"fact_id": w.b_fact}, "params": nb},
                                            {"path": {"fact_id": w.b_fact}, "params": na}],
        ("POST", "/v1/memories"): [{"json": {**nb, "messages": [{"text": "Planted by a.", "speaker": "Eve"}]}}],
        ("POST", "/v1/documents"): [{"json": {**nb, "text": "Planted by a.", "doc_id": w.b_doc}},
                                    {"files": {"file": ("planted.md", b"# Planted\n\nby a.")}, "data": nb}],
        ("GET", "/v1/documents"): [{"params": nb}],
        ("GET", "/v1/documents/{doc_id}"): [{"path": {"doc_id": d}, "params": p}
                                            for d in (w.b_doc, w.b_memory) for p in (nb, na)],
        ("DELETE", "/v1/documents/{doc_id}"): [{"path": {"doc_id": d}, "params": p}
                                               for d in (w.b_doc, w.b_memory) for p in (nb, na)],
        ("POST", "/v1/tasks/{task_id}/items"): [{"path": {"task_id": "tb"}, "json": {**nb, "kind": "note",
                                                                                      "text": "Planted by a."}}],
        ("GET", "/v1/tasks/{task_id}/items"): [{"path": {"task_id": "tb"}, "params": p} for p in (nb, na)],
        ("GET", "/v1/tasks/{task_id}/items/{key}"): [
            {"path": {"task_id": "tb", "key": w.b_key}, "params": nb},
            {"path": {"task_id": "tb", "key": w.b_key}, "params": na},
            {"path": {"task_id": "ta", "key": w.b_key}, "params": na},
            {"path": {"task_id": "tb", "key": w.b_key}, "params": {**nb, "page": 1, "page_tokens": 5}}],
        ("GET", "/v1/tasks/{task_id}/summaries"): [{"path": {"task_id": "tb"}, "params": p} for p in (nb, na)],
        ("GET", "/v1/tasks/{task_id}/summaries/{version}"): [{"path": {"task_id": "tb", "version": 1}, "params": p}
                                                             for p in (nb, na)],
        ("DELETE", "/v1/tasks/{task_id}"): [{"path": {"task_id": "tb"}, "params": p} for p in (nb, na)],
        ("POST", "/v1/tasks/{task_id}/promote"): [{"path": {"task_id": "tb"}, "json": {**nb, "keys": [w.b_key]}},
                                                  {"path": {"task_id": "tb"}, "json": {**na, "keys": [w.b_key]}},
                                                  {"path": {"task_id": "ta"}, "json": {**na, "keys": [w.b_key]}}],
        ("DELETE", "/v1/namespaces/{namespace}"): [{"path": {"namespace": "b"}}],
        ("POST", "/v1/search"): [{"json": {**nb, "query": f"{SECRET} formula"}}],
        ("GET", "/v1/jobs"): [{"params": nb}],
        ("GET", "/v1/jobs/{job_id}"): [{"path": {"job_id": w.b_job}, "params": p} for p in (nb, na)],
        ("DELETE", "/v1/jobs/{job_id}"): [{"path": {"job_id": w.b_job}, "params": p} for p in (nb, na)],
    }


# Routes outside /v1 name no namespace (only /metrics wants a key); they must not show any namespace's content.
PUBLIC = {("GET", "/healthz"), ("GET", "/metrics"), ("GET", "/openapi.json"), ("GET", "/docs"), ("GET", "/redoc"),
          ("GET", "/docs/oauth2-redirect"), ("HEAD", "/openapi.json"), ("HEAD", "/docs"), ("HEAD", "/redoc"),
          ("HEAD", "/docs/oauth2-redirect")}


def _routes(app: FastAPI) -> set[tuple[str, str]]:
    """(method, path) of every route the app serves, included routers flattened."""
    return {(method, str(route.path_format)) for route in iter_route_contexts(app.routes)
            for method in route.methods or ()}


def _send(client: TestClient, method: str, template: str, probe: dict[str, Any], headers: dict[str, str]) -> Any:
    path = template.format(**probe.get("path", {}))
    kwargs = {k: v for k, v in probe.items() if k != "path"}
    return client.request(method, path, headers=headers, **kwargs)


def _b_leaks(w: World, text: str, asked: object = None) -> list[str]:
    """b's words and ids found in `text`, leaving out those the request itself carried (echoed in a 404)."""
    sent = json.dumps(asked, default=repr)
    markers = (SECRET, w.b_doc, w.b_memory, w.b_fact, w.b_key, "hunter2")
    return [marker for marker in markers if marker in text and marker not in sent]


def test_every_route_is_probed(world: World) -> None:
    routes = _routes(world.app)
    v1 = {r for r in routes if r[1].startswith("/v1")}
    assert v1, "the app serves no /v1 route"
    missing = sorted(v1 - set(_probes(world)))
    assert not missing, f"routes with no isolation probe; add them to _probes(): {missing}"
    ui = {r for r in routes if r[1].startswith("/ui")}  # the web inspector: tests/ui/test_isolation.py probes them
    unexpected = sorted(routes - v1 - PUBLIC - ui)
    assert not unexpected, f"routes outside /v1 that this test does not know: {unexpected}"
    assert all(isinstance(r.original_route, APIRoute) for r in iter_route_contexts(world.app.routes)
               if str(r.path_format).startswith("/v1"))


def test_a_key_for_a_finds_nothing_of_b_on_any_route(world: World) -> None:
    before = snapshot(world.memory)
    answers = []
    for (method, template), probes in sorted(_probes(world).items()):
        for probe in probes:
            response = _send(world.client, method, template, probe, A)
            answers.append((method, template, probe, response.status_code, response.text))
    wrong = [a[:4] for a in answers if a[3] != 404]
    assert not wrong, f"expected 404 (as if absent) for every probe of b with key a, got: {wrong}"
    assert all(json.loads(a[4])["error"] == "NotFound" for a in answers)
    leaks = [(a[0], a[1], _b_leaks(world, a[4], a[2])) for a in answers if _b_leaks(world, a[4], a[2])]
    assert not leaks, leaks
    assert snapshot(world.memory) == before, "a request by key a changed the store"


def test_every_v1_route_wants_a_key(world: World) -> None:
    for (method, template), probes in sorted(_probes(world).items()):
        for headers in ({}, {"Authorization": "Bearer not-a-key"}, {"Authorization": "Basic a2V5LWEtMWY5Yw=="}):
            response = _send(world.client, method, template, probes[0], headers)
            assert response.status_code == 401, (method, template, headers, response.text)
            assert response.json()["error"] == "Unauthorized"


def test_public_routes_show_nothing_of_b(world: World) -> None:
    public = sorted(PUBLIC & _routes(world.app))
    assert {("GET", "/healthz"), ("GET", "/metrics"), ("GET", "/openapi.json")} <= set(public)
    for method, path in public:
        for headers in ({}, A):
            response = world.client.request(method, path, headers=headers)
            # /metrics are the whole service's: with keys configured they need a key for "*", which neither is.
            assert response.status_code == (401 if path == "/metrics" else 200), (method, path, headers)
            assert not _b_leaks(world, response.text), (method, path)


@pytest.mark.parametrize("body", [
    {"query": f"What is the {SECRET} formula and the password?", "budget": 4000},
    {"query": f"{SECRET} hunter2 vault", "budget": 4000, "task_id": "tb"},
    {"query": "formula vault loader", "budget": 4000, "filters": {"project": "vault"}, "min_score": 0.0},
    {"query": f"{SECRET}", "budget": 4000, "task_id": "tb", "filters": {"kind": "memory"}},
])
def test_recall_with_key_a_never_returns_b(world: World, body: dict[str, Any]) -> None:
    response = world.client.post("/v1/recall", headers=A, json={"namespace": "a", **body})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert not _b_leaks(world, response.text), answer
    assert all(item["id"] not in (world.b_fact, world.b_key) for item in answer["items"])
    assert all(item.get("doc_id") not in (world.b_doc, world.b_memory) for item in answer["items"])
    # The same question asked by b's own key finds b's items: the probe above could have found them.
    own = world.client.post("/v1/recall", headers=B, json={"namespace": "b", **body}).json()
    assert SECRET in own["rendered"]


def test_b_is_intact_after_all_the_probing(world: World) -> None:
    facts = world.client.get("/v1/facts", headers=B, params={"namespace": "b"}).json()["facts"]
    assert [f["id"] for f in facts] == [world.b_fact]
    docs = world.client.get("/v1/documents", headers=B, params={"namespace": "b"}).json()["documents"]
    assert sorted(d["doc_id"] for d in docs) == sorted([world.b_doc, world.b_memory, "b-job"])
    job = world.client.get(f"/v1/jobs/{world.b_job}", headers=B, params={"namespace": "b"}).json()
    assert job["state"] == "done" and job["doc_id"] == "b-job"  # the probes' cancels did not reach it
    item = world.client.get(f"/v1/tasks/tb/items/{world.b_key}", headers=B, params={"namespace": "b"}).json()
    assert SECRET in item["text"]
