"""`memory` commands on a data folder a running server holds: they talk to it, or refuse in a sentence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.server_process import ServerProcess, logged_errors
from tests import ROOT


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("beside")
    with ServerProcess(folder / "data", folder / "server.log") as running:
        yield running
        assert logged_errors(running.log_text()) == []


def memory(server: ServerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    return subprocess.run([sys.executable, "-m", "cli", *args, "--data", str(server.data_dir)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_server_publishes_its_address_in_the_lock(server: ServerProcess) -> None:
    held = json.loads((server.data_dir / "memory.lock").read_text())
    assert held == {"pid": server.pid, "command": "serve", "url": server.url}


def test_ingest_and_recall_go_through_the_server(server: ServerProcess, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tides.md").write_text("# Tides\n\nThe La Rance tidal plant opened in 1966 in Brittany.\n")
    (docs / "潮汐.md").write_text("# 潮汐\n\n朗斯潮汐电站于1966年在布列塔尼投入运行。\n")
    done = memory(server, "ingest", str(docs), "-n", "cli", "--tag", "energy", "--tag", "能源", "--project", "tides")
    assert done.returncode == 0, done.stderr
    assert "ingesting through " + server.url in done.stderr
    assert "2 files: 2 created" in done.stdout
    listed = httpx.get(server.url + "/v1/documents", params={"namespace": "cli"}).json()["documents"]
    assert sorted(d["doc_id"] for d in listed) == ["docs/tides.md", "docs/潮汐.md"]
    assert all(d["tags"] == ["energy", "能源"] and d["project"] == "tides" for d in listed)
    again = memory(server, "ingest", str(docs), "-n", "cli", "--tag", "energy", "--tag", "能源", "--project", "tides")
    assert "2 unchanged" in again.stdout
    (docs / "tides.md").write_text("# Tides\n\nThe La Rance tidal plant opened in 1966 in Brittany, France.\n")
    edited = memory(server, "ingest", str(docs), "-n", "cli", "--tag", "energy", "--tag", "能源", "--project", "tides")
    assert edited.returncode == 1 and "1 unchanged" in edited.stdout  # a derived id never overwrites
    assert "'docs/tides.md' already exists" in edited.stderr and "--replace" in edited.stderr
    replaced = memory(server, "ingest", str(docs), "-n", "cli", "--replace", "--tag", "energy", "--tag", "能源",
                      "--project", "tides")
    assert replaced.returncode == 0 and "1 updated, 1 unchanged" in replaced.stdout, replaced.stdout
    # The server's vector search sees what the CLI stored (it went through the server's own Chroma).
    for query, expected in (("When did the La Rance tidal plant open?", "1966"), ("朗斯潮汐电站何时投入运行？", "1966")):
        recalled = memory(server, "recall", query, "-n", "cli", "--json")
        assert recalled.returncode == 0, recalled.stderr
        assert expected in json.loads(recalled.stdout)["rendered"]
    searched = memory(server, "search", "La Rance tidal plant", "-n", "cli", "-k", "3")
    assert searched.returncode == 0, searched.stderr
    assert "docs/tides.md" in searched.stdout.splitlines()[1] and "dense #1" in searched.stdout


def test_facts_pin_and_stats_go_through_the_server(server: ServerProcess) -> None:
    pinned = memory(server, "pin", "预算不超过500元。", "-n", "cli-facts")
    assert pinned.returncode == 0, pinned.stderr
    assert pinned.stdout.startswith("pinned f-")
    facts = memory(server, "facts", "-n", "cli-facts", "--json")
    assert [f["pinned"] for f in json.loads(facts.stdout)] == [True]
    stats = memory(server, "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["status"] == "ok"


def test_context_goes_through_the_server(server: ServerProcess, tmp_path: Path) -> None:
    turn = tmp_path / "turn.json"
    # A window too small for the result, so that something is put aside on the server.
    turn.write_text(json.dumps({"namespace": "cli-context", "task_id": "t-cli", "window": 1024, "messages": [
        {"role": "user", "content": "预算不超过500元。"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps([{"id": i} for i in range(300)])},
        {"role": "user", "content": "哪一家最便宜？"}]}, ensure_ascii=False), encoding="utf-8")
    done = memory(server, "context", str(turn), "--report")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["task_id"] == "t-cli" and report["tokens"]["total"] <= report["budget"]["available"]
    key = next(a["key"] for a in report["actions"] if a["key"])
    # The server holds what was offloaded: the command went through it, not around it.
    item = httpx.get(f"{server.url}/v1/tasks/t-cli/items/{key}", params={"namespace": "cli-context"})
    assert item.status_code == 200 and item.json()["text"].startswith('[{"id": 0}')
    turn.write_text('{"namespace": "cli-context", "window": 8192, "messages": [{"role": "robot"}]}')
    refused = memory(server, "context", str(turn))
    assert refused.returncode == 2 and "messages[0].role" in refused.stderr and "Traceback" not in refused.stderr


@pytest.mark.parametrize("command", [["reembed"], ["serve", "--port", "1"]])
def test_commands_that_need_the_store_itself_refuse_in_a_sentence(server: ServerProcess,
                                                                  command: list[str]) -> None:
    done = memory(server, *command)
    assert done.returncode == 2
    line = done.stderr.strip().splitlines()[-1]
    assert f"pid {server.pid}" in line or server.url in line
    assert "stop the server" in line
    assert "Traceback" not in done.stderr
    assert httpx.get(server.url + "/healthz").status_code == 200  # and the server is unharmed


def test_a_keyed_server_is_asked_with_a_key_that_may_use_the_namespace(tmp_path: Path) -> None:
    """The configured key of the namespace goes with the command; a refused key is one line, exit status 2."""
    config = tmp_path / "keys.toml"
    config.write_text('[auth.keys]\n"k-alice-7f3a" = ["alice"]\n"k-bob-9c1d" = ["bob"]\n', encoding="utf-8")
    with ServerProcess(tmp_path / "data", tmp_path / "server.log", config) as running:
        for namespace, text in (("alice", "Never use Python 2 syntax."), ("bob", "不要用Python 2的语法。")):
            pinned = memory(running, "pin", text, "-n", namespace, "--config", str(config))
            assert pinned.returncode == 0 and pinned.stdout.startswith("pinned f-"), pinned.stderr
        facts = memory(running, "facts", "-n", "bob", "--json", "--config", str(config))
        assert [f["pinned"] for f in json.loads(facts.stdout)] == [True] and "Python 2" in facts.stdout
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}, "MEMORY_API_KEY": "k-bob-9c1d"}
        refused = subprocess.run([sys.executable, "-m", "cli", "facts", "-n", "alice", "--config", str(config),
                                  "--data", str(running.data_dir)], cwd=ROOT, env=env, capture_output=True,
                                 text=True, timeout=300)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        line = refused.stderr.strip().splitlines()[-1]
        assert line.startswith("memory facts: the server at " + running.url + " answered 40"), line
        assert logged_errors(running.log_text()) == []
