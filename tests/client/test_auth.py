"""API keys through the client against a real service with `[auth.keys]`: the key travels as a Bearer header, a
missing or unknown key is Unauthorized, another key's namespace is NotFound exactly as REST says."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from bench.server_process import ServerProcess, logged_errors
from memory_client import Client, NotFound, Unauthorized

ALICE, ADMIN = "k-alice-7f3a", "k-admin-91c2"
KEYS = {ALICE: ["alice", "alice-*"], ADMIN: ["*"]}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("client-keys")
    config = folder / "keys.toml"
    config.write_text("[auth.keys]\n" + "".join(f'"{k}" = {v!r}\n'.replace("'", '"') for k, v in KEYS.items()))
    with ServerProcess(folder / "data", folder / "server.log", config_file=config) as running:
        yield running
        assert logged_errors(running.log_text()) == []


@pytest.mark.parametrize("key", [None, "k-nobody"])
def test_a_missing_or_unknown_key_is_unauthorized(keyed: ServerProcess, key: str | None,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_API_KEY", raising=False)
    with Client(keyed.url, api_key=key, namespace="alice") as client:
        with pytest.raises(Unauthorized) as refused:
            client.recall("预算是多少？")
        assert refused.value.status == 401 and refused.value.error == "Unauthorized"
        assert "Authorization" in refused.value.detail or "key" in refused.value.detail
        liveness = client.health()  # answered without a key, but only as liveness
        assert liveness.status == "ok" and liveness.model is None and liveness.raw == {"status": "ok"}


def test_a_key_reads_its_own_namespaces_only(keyed: ServerProcess) -> None:
    with Client(keyed.url, api_key=ALICE, namespace="alice") as alice:
        alice.pin("以后不要用Python 2的语法，预算不超过500元。")
        assert "预算不超过500元" in alice.recall("预算是多少？").rendered
        assert alice.pin("Never use tabs.", namespace="alice-work").stored
        with pytest.raises(NotFound) as hidden:
            alice.list_facts(namespace="bob")
        raw = httpx.get(keyed.url + "/v1/facts", params={"namespace": "bob"},
                        headers={"Authorization": f"Bearer {ALICE}"})
        assert (hidden.value.status, hidden.value.detail) == (404, raw.json()["detail"])
        health = alice.health()
        assert health.model and health.store is None and health.counts["facts"] == 3
        with pytest.raises(Unauthorized, match="/metrics"):
            alice.metrics()


def test_a_key_for_every_namespace_sees_everything(keyed: ServerProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_API_KEY", ADMIN)
    with Client(keyed.url, namespace="bob") as admin:
        assert admin.list_facts().facts == ()
        assert admin.health().store is not None
        assert "memory_requests_total" in admin.metrics()
