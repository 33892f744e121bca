"""The MCP server as agents reach it: `memory mcp` over stdio (a real subprocess), and /mcp on the real `memory
serve` over streamable HTTP, behind the service's keys; both driven by the SDK's own client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from bench.server_process import ServerProcess, logged_errors
from memory.lock import holder_of
from tests import ROOT

pytestmark = pytest.mark.anyio

CONSTRAINTS = ["Never use Python 2 syntax.", "以后不要用Python 2的语法，预算不超过500元。"]
DOCUMENTS = {"loader-en": "The loader reads CSV exports from the billing system every night.",
             "loader-zh": "加载程序每天夜里读取计费系统导出的CSV文件。"}


@pytest.fixture()
def anyio_backend() -> str:
    return "asyncio"


def stdio(data: Path, *args: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    return StdioServerParameters(command=sys.executable, args=["-m", "cli", "mcp", "--data", str(data), *args],
                                 env=env, cwd=str(ROOT))


async def pin_ingest_recall(client: Client, **namespace: str) -> None:
    """An agent's session: pin constraints, ingest documents, and recall both, in English and Chinese."""
    for text in CONSTRAINTS:
        result = await client.call_tool("pin", {"text": text, **namespace})
        assert not result.is_error, result.content[0].text
    for doc_id, text in DOCUMENTS.items():
        result = await client.call_tool("ingest_document", {"text": text, "doc_id": doc_id, **namespace})
        assert not result.is_error and result.structured_content["status"] == "created"
    for query, document in [("how does the loader get billing data?", DOCUMENTS["loader-en"]),
                            ("加载程序怎么拿到计费数据？", DOCUMENTS["loader-zh"])]:
        recalled = await client.call_tool("recall", {"query": query, "budget": 400, **namespace})
        block = recalled.content[0].text
        assert not recalled.is_error and document in block
        assert "Never use Python 2 syntax." in block and "不要用Python 2的语法" in block
        assert recalled.structured_content["used_tokens"] <= 400


async def test_stdio_session_pins_ingests_and_recalls(tmp_path: Path) -> None:
    async with Client(stdio(tmp_path / "data", "--namespace", "u1")) as client:
        assert {t.name for t in (await client.list_tools()).tools} >= {"recall", "pin", "ingest_document"}
        await pin_ingest_recall(client)
        refused = await client.call_tool("recall", {"query": "tabs", "budget": -1})
        assert refused.is_error
        assert refused.content[0].text == "budget must be a whole number of tokens from 0 to 200,000, got -1"
    # The session's namespace is the one given on the command line, and the store kept all of it.
    listed = subprocess.run([sys.executable, "-m", "cli", "facts", "--data", str(tmp_path / "data"), "-n", "u1"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "prohibition:python 2 syntax" in listed.stdout and "prohibition:python 2语法" in listed.stdout
    assert "limit:budget = 500 CNY" in listed.stdout


KEYS = {"k-alice-7f3a": ["alice", "alice-*"], "k-admin-91c2": ["*"]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    folder = tmp_path_factory.mktemp("mcp-http")
    config = folder / "keys.toml"
    config.write_text("[auth.keys]\n" + "".join(f'"{k}" = {v!r}\n'.replace("'", '"') for k, v in KEYS.items()))
    with ServerProcess(folder / "data", folder / "server.log", config_file=config) as running:
        yield running
        assert logged_errors(running.log_text()) == []


def over_http(server: ServerProcess, key: str | None, query: str = "") -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return streamable_http_client(f"{server.url}/mcp{query}", http_client=httpx2.AsyncClient(headers=headers))


async def test_http_session_pins_ingests_and_recalls_in_the_keys_namespace(server: ServerProcess) -> None:
    async with Client(over_http(server, "k-alice-7f3a", "?namespace=alice")) as client:
        await pin_ingest_recall(client)
    # What the MCP session stored is what REST shows for the same namespace and key.
    facts = httpx.get(f"{server.url}/v1/facts", params={"namespace": "alice"},
                      headers={"Authorization": "Bearer k-alice-7f3a"}).json()["facts"]
    assert {"Never use Python 2 syntax."} <= {f["text"] for f in facts}
    docs = httpx.get(f"{server.url}/v1/documents", params={"namespace": "alice"},
                     headers={"Authorization": "Bearer k-alice-7f3a"}).json()["documents"]
    assert set(DOCUMENTS) <= {d["doc_id"] for d in docs}


async def test_http_holds_a_key_to_its_namespaces(server: ServerProcess) -> None:
    async with Client(over_http(server, "k-admin-91c2")) as admin:
        assert not (await admin.call_tool("pin", {"text": "Bob never works on Fridays.", "namespace": "bob"})
                    ).is_error
    async with Client(over_http(server, "k-alice-7f3a")) as alice:
        for arguments in ({"namespace": "bob"}, {}):  # named, or the default namespace the key does not cover
            refused = await alice.call_tool("facts", arguments)
            assert refused.is_error and refused.structured_content["error"] == "NotFound"
        assert not (await alice.call_tool("facts", {"namespace": "alice-notes"})).is_error


@pytest.mark.parametrize("key", [None, "k-unknown"])
async def test_http_without_a_valid_key_is_refused_before_any_tool(server: ServerProcess, key: str | None) -> None:
    answer = httpx.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                        headers={"Authorization": f"Bearer {key}"} if key else {})
    assert answer.status_code == 401 and answer.json()["error"] == "Unauthorized"
    with pytest.raises((MCPError, httpx2.HTTPError, ExceptionGroup)):
        async with Client(over_http(server, key)) as client:
            await client.list_tools()


def test_http_opens_no_stream_for_get(server: ServerProcess) -> None:
    answer = httpx.get(f"{server.url}/mcp", headers={"Accept": "text/event-stream"}, timeout=10)
    assert answer.status_code == 405 and answer.headers["allow"] == "POST"
    assert answer.json()["error"] == "MethodNotAllowed"


async def test_http_refusals_carry_the_rest_sentence(server: ServerProcess) -> None:
    body = {"namespace": "alice", "query": "tabs", "budget": "many"}
    rest = httpx.post(f"{server.url}/v1/recall", json=body, headers={"Authorization": "Bearer k-alice-7f3a"})
    assert rest.status_code == 422
    async with Client(over_http(server, "k-alice-7f3a")) as client:
        result = await client.call_tool("recall", body)
    assert result.is_error and result.structured_content == rest.json()


async def test_http_offers_the_tools_the_url_names(server: ServerProcess) -> None:
    async with Client(over_http(server, "k-alice-7f3a", "?namespace=alice&tools=recall,pin")) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["recall", "pin"]
    answer = httpx.post(f"{server.url}/mcp?tools=recall,summarise", json={"jsonrpc": "2.0", "id": 1,
                                                                          "method": "tools/list"},
                        headers={"Authorization": "Bearer k-alice-7f3a"})
    assert answer.status_code == 422 and "unknown MCP tool 'summarise'" in answer.json()["detail"]


async def test_stdio_beside_a_running_server_relays_to_its_mcp(server: ServerProcess) -> None:
    """An agent configured with `memory mcp` keeps working while `memory serve` holds the folder."""
    params = stdio(server.data_dir, "-n", "alice-relay")
    params.env = {**(params.env or {}), "MEMORY_API_KEY": "k-alice-7f3a"}
    async with Client(params) as client:
        assert [t.name for t in (await client.list_tools()).tools][:2] == ["recall", "context"]
        pinned = await client.call_tool("pin", {"text": "预算不超过500元。"})
        assert not pinned.is_error, pinned.content[0].text
        recalled = await client.call_tool("recall", {"query": "预算是多少？", "budget": 200})
        assert "预算不超过500元" in recalled.content[0].text
        refused = await client.call_tool("facts", {"namespace": "bob"})  # the key's namespaces, as over HTTP
        assert refused.is_error and refused.structured_content["error"] == "NotFound"
        bad = await client.call_tool("recall", {"query": "x", "budget": -1})
        assert bad.content[0].text == "budget must be a whole number of tokens from 0 to 200,000, got -1"
    facts = httpx.get(f"{server.url}/v1/facts", params={"namespace": "alice-relay"},
                      headers={"Authorization": "Bearer k-alice-7f3a"}).json()["facts"]
    assert [f["text"] for f in facts] == ["预算不超过500元。"]


async def test_a_relay_whose_server_stopped_opens_the_store_itself(tmp_path: Path) -> None:
    with ServerProcess(tmp_path / "data", tmp_path / "server.log") as running:
        async with Client(stdio(running.data_dir)) as client:
            assert not (await client.call_tool("pin", {"text": "Never use tabs."})).is_error
            running.kill()
            # The call found nobody and never arrived: the relay opened the store, serves it, and sent it there.
            kept = await client.call_tool("facts", {})
            assert not kept.is_error, kept.content[0].text
            assert "Never use tabs." in kept.content[0].text
            holder = holder_of(running.data_dir.resolve())
            assert holder is not None and holder.command == "mcp" and holder.url and holder.url != running.url
            # ... and a second server on the folder is told who holds it and where.
            refused = subprocess.run([sys.executable, "-m", "cli", "serve", "--data", str(running.data_dir)],
                                     cwd=ROOT, capture_output=True, text=True, timeout=300)
            assert refused.returncode != 0 and "which serves it to the other agents" in refused.stderr
            assert holder.url in refused.stderr


async def test_a_relay_with_a_wrong_key_says_so(server: ServerProcess) -> None:
    params = stdio(server.data_dir, "-n", "alice")
    params.env = {**(params.env or {}), "MEMORY_API_KEY": "k-wrong-000000"}
    async with Client(params) as client:
        refused = await client.call_tool("facts", {})
    assert refused.is_error and refused.structured_content == {
        "error": "Unauthorized", "detail": "the API key sent is not configured on this service; check the key"}


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    return subprocess.run([sys.executable, "-m", "cli", *args, "--data", str(data)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


async def test_two_stdio_agents_and_the_cli_share_one_folder(tmp_path: Path) -> None:
    """Claude Desktop and Claude Code, each with `memory mcp --data D`, and `memory facts` beside them."""
    data = tmp_path / "data"
    async with Client(stdio(data, "-n", "u1")) as first:
        assert not (await first.call_tool("pin", {"text": CONSTRAINTS[0]})).is_error
        served = holder_of(data.resolve())
        assert served is not None and served.command == "mcp" and served.url
        async with Client(stdio(data, "-n", "u1")) as second:
            await pin_ingest_recall(second)  # both constraints recalled: the first agent's and its own
            listed = _cli(data, "facts", "-n", "u1")
            assert listed.returncode == 0, listed.stderr
            assert "prohibition:python 2 syntax" in listed.stdout and "limit:budget = 500 CNY" in listed.stdout
            stats = _cli(data, "stats", "--json")
            assert stats.returncode == 0 and json.loads(stats.stdout)["counts"]["documents"] == 2
        recalled = await first.call_tool("recall", {"query": "加载程序怎么拿到计费数据？", "budget": 400})
        assert DOCUMENTS["loader-zh"] in recalled.content[0].text  # what the second agent ingested
    assert holder_of(data.resolve()) is None  # the last agent gone, the folder is free


async def test_when_the_agent_holding_the_store_ends_another_takes_it_over(tmp_path: Path) -> None:
    data = tmp_path / "data"
    params = stdio(data)
    holding = subprocess.Popen([params.command, *params.args], cwd=params.cwd, env=params.env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # it loads the model, then says where it serves the store
            holder = holder_of(data.resolve())
            if holder is not None and holder.url:
                break
            time.sleep(0.1)
        assert holder is not None and holder.pid == holding.pid
        async with Client(stdio(data)) as agent:
            assert not (await agent.call_tool("pin", {"text": "以后不要用表格。"})).is_error
            holding.kill()
            holding.wait(timeout=30)
            kept = await agent.call_tool("facts", {})
            assert not kept.is_error and "不要用表格" in kept.content[0].text
            now = holder_of(data.resolve())
            assert now is not None and now.url and now.pid != holding.pid
            listed = _cli(data, "facts")  # the CLI finds the new holder's address
            assert listed.returncode == 0 and "prohibition:表格 = 表格" in listed.stdout, listed.stderr
    finally:
        holding.kill()
