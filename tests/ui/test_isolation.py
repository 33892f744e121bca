"""Isolation on the inspector's routes, as tests/security/test_isolation.py checks it on /v1 (which leaves /ui to this
file): a key for namespace a finds and changes nothing of namespace b through any fragment, every fragment wants a
key, and the shell pages hold no data at all. The routes come from `app.routes`: a new /ui route fails until this
file says how to aim it at b."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient

from api.app import create_app
from memory.embedding import Embedder
from memory.service import Memory
from tests.security.conftest import make_config, snapshot

A = {"Authorization": "Bearer key-a-1f9c", "X-Inspector": "1"}
B = {"Authorization": "Bearer key-b-77e2", "X-Inspector": "1"}
SECRET = "zanzibarite"  # a word only namespace b holds
# Routes that name no namespace: the shells hold no data; the namespaces fragment lists the key's own only.
SHELLS = {("GET", "/ui"), ("GET", "/ui/{name}")}
LISTING = ("GET", "/ui/fragments/namespaces")


@dataclass(frozen=True)
class World:
    app: FastAPI
    client: TestClient
    memory: Memory
    b_doc: str
    b_fact: str
    b_key: str


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[World]:
    """Keys a and b; b holds a document, a pinned fact and a task item that name the secret, a a task of its own."""
    config = make_config(tmp_path_factory.mktemp("ui-isolation"), **{"key-a-1f9c": ["a"], "key-b-77e2": ["b"]})
    with Memory(config, embedder=embedder) as memory:
        app = create_app(config, memory)
        client = TestClient(app, base_url="http://memory.example")  # with keys, any host name may reach it

        def ok(response: Any) -> Any:
            assert response.status_code == 200, response.text
            return response.json()

        b_doc = ok(client.post("/v1/documents", headers=B, json={
            "namespace": "b", "doc_id": "b-plan", "text": f"The {SECRET} formula is kept in the vault."}))["doc_id"]
        b_fact = ok(client.post("/v1/facts/pin", headers=B, json={
            "namespace": "b", "text": f"Never reveal the {SECRET} formula."}))["stored"][0]["id"]
        b_key = ok(client.post("/v1/tasks/tb/items", headers=B, json={
            "namespace": "b", "kind": "plan", "text": f"Move the {SECRET} formula tonight."}))["key"]
        ok(client.post("/v1/tasks/ta/items", headers=A, json={"namespace": "a", "kind": "plan", "text": "Read."}))
        yield World(app, client, memory, b_doc, b_fact, b_key)


def _probes(w: World) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """For each fragment route: requests key a may send that aim at b, or at b's ids through a."""
    nb, na = {"namespace": "b"}, {"namespace": "a"}
    turn = json.dumps([{"role": "user", "content": f"The {SECRET} formula?"}])
    return {
        ("GET", "/ui/fragments/facts"): [{"params": nb}],
        ("GET", "/ui/fragments/facts/history"): [{"params": {**p, "fact_id": w.b_fact}} for p in (nb, na)],
        ("POST", "/ui/fragments/facts/pin"): [{"params": {**p, "fact_id": w.b_fact}} for p in (nb, na)],
        ("POST", "/ui/fragments/facts/unpin"): [{"params": {**p, "fact_id": w.b_fact}} for p in (nb, na)],
        ("POST", "/ui/fragments/facts/delete"): [{"params": {**p, "fact_id": w.b_fact}} for p in (nb, na)],
        ("POST", "/ui/fragments/facts/preview"): [{"data": {**nb, "text": "Never use tabs."}}],
        ("POST", "/ui/fragments/facts/observe"): [{"data": {**nb, "text": "Never use tabs."}}],
        ("GET", "/ui/fragments/documents"): [{"params": nb}],
        ("GET", "/ui/fragments/documents/chunks"): [{"params": {**p, "doc_id": w.b_doc}} for p in (nb, na)],
        ("POST", "/ui/fragments/documents/delete"): [{"params": {**p, "doc_id": w.b_doc}} for p in (nb, na)],
        ("POST", "/ui/fragments/documents/search"): [{"data": {**nb, "query": f"{SECRET} formula"}}],
        ("GET", "/ui/fragments/recall"): [{"params": nb}],
        ("POST", "/ui/fragments/recall"): [{"data": {**nb, "query": f"{SECRET} formula"}},
                                           {"data": {**nb, "query": "formula", "task_id": "tb"}}],
        ("GET", "/ui/fragments/context"): [{"params": nb}],
        ("POST", "/ui/fragments/context"): [{"data": {**nb, "messages": turn, "window": "8192"}}],
        ("GET", "/ui/fragments/tasks"): [{"params": nb}],
        ("GET", "/ui/fragments/tasks/items"): [{"params": {**p, "task_id": "tb"}} for p in (nb, na)],
        ("GET", "/ui/fragments/tasks/read"): [{"params": {**p, "task_id": t, "key": w.b_key}}
                                              for p, t in ((nb, "tb"), (na, "tb"), (na, "ta"))],
    }


def _routes(app: FastAPI) -> set[tuple[str, str]]:
    return {(method, str(route.path_format)) for route in iter_route_contexts(app.routes)
            for method in route.methods or () if str(route.path_format).startswith("/ui")}


def _leaks(w: World, text: str, asked: object = None) -> list[str]:
    """b's words and ids found in `text`, leaving out those the request itself carried (echoed in a 404)."""
    sent = json.dumps(asked, default=repr)
    return [marker for marker in (SECRET, w.b_doc, w.b_fact, w.b_key) if marker in text and marker not in sent]


def test_every_ui_route_is_probed(world: World) -> None:
    routes = _routes(world.app)
    assert {r for r in routes if r[1].startswith("/ui/fragments")}, "the app serves no fragment"
    missing = sorted(routes - set(_probes(world)) - SHELLS - {LISTING})
    assert not missing, f"/ui routes with no isolation probe; add them to _probes(): {missing}"


def test_a_key_for_a_finds_and_changes_nothing_of_b(world: World) -> None:
    before = snapshot(world.memory)
    wrong, leaks = [], []
    for (method, path), probes in sorted(_probes(world).items()):
        for probe in probes:
            answer = world.client.request(method, path, headers=A, **probe)
            if answer.status_code != 404 or answer.json()["error"] != "NotFound":
                wrong.append((method, path, probe, answer.status_code))
            if found := _leaks(world, answer.text, probe):
                leaks.append((method, path, found))
    assert not wrong, f"expected 404 (as if absent) for every probe of b with key a, got: {wrong}"
    assert not leaks, leaks
    assert snapshot(world.memory) == before, "a request by key a changed the store"


def test_every_fragment_wants_a_key(world: World) -> None:
    for (method, path), probes in sorted({**_probes(world), LISTING: [{}]}.items()):
        for headers in ({"X-Inspector": "1"}, {"X-Inspector": "1", "Authorization": "Bearer not-a-key"}):
            answer = world.client.request(method, path, headers=headers, **probes[0])
            assert answer.status_code == 401 and answer.json()["error"] == "Unauthorized", (method, path, headers)


def test_the_shells_hold_no_data(world: World) -> None:
    for path in ("/ui", "/ui/facts", "/ui/documents", "/ui/recall", "/ui/context", "/ui/tasks", "/ui/namespaces"):
        for headers in ({}, B):
            answer = world.client.get(path, params={"namespace": "b"}, headers=headers)
            assert answer.status_code == 200 and not _leaks(world, answer.text), path


def test_a_key_lists_only_its_namespaces(world: World) -> None:
    listed = world.client.get("/ui/fragments/namespaces", headers=A)
    assert listed.status_code == 200 and 'data-namespace="a"' in listed.text and 'data-namespace="b"' not in listed.text
    assert not _leaks(world, listed.text)


def test_b_sees_its_own(world: World) -> None:
    """The probes could have found b's data: b's key does, through the same fragments."""
    for path, params in (("/ui/fragments/facts", {}), ("/ui/fragments/documents/chunks", {"doc_id": world.b_doc}),
                         ("/ui/fragments/tasks/items", {"task_id": "tb"})):
        answer = world.client.get(path, params={"namespace": "b", **params}, headers=B)
        assert answer.status_code == 200 and SECRET in answer.text, path
