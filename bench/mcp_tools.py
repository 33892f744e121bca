"""What the MCP tools cost an agent: the tokens their listing puts in every prompt, and recall's latency through
MCP (streamable HTTP on the real server, and `memory mcp` over stdio) against the same recall over REST.

    .venv/bin/python -m bench.mcp_tools [--docs 150] [--queries 60]

Latency rounds alternate REST and MCP on one server, so the ratio is measured under the same load; stdio runs on
the same data folder once the server has stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from api.mcp.server import tool_schemas
from api.mcp.tools import TOOLS
from bench.corpora import load_cmrc, load_scifact
from bench.server_process import ROOT, ServerProcess
from memory.tokens import get_counter


def listing_tokens() -> None:
    """Tokens of each tool as tools/list sends it, trimmed (what is served) and as pydantic generates it."""
    counter = get_counter()
    served = {t["name"]: t for t in json.loads(tool_schemas())}
    print("| tool | tokens (served) | tokens (untrimmed schema) |")
    print("|---|---:|---:|")
    total_served = total_raw = 0
    for spec in TOOLS:
        raw = dict(served[spec.name], inputSchema=spec.model.model_json_schema())
        s, r = counter.count(json.dumps(served[spec.name], ensure_ascii=False)), counter.count(
            json.dumps(raw, ensure_ascii=False))
        total_served += s
        total_raw += r
        print(f"| {spec.name} | {s} | {r} |")
    print(f"| **all {len(TOOLS)}** | **{total_served}** | **{total_raw}** |")


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"{statistics.median(ordered) * 1000:.1f} / {ordered[int(len(ordered) * 0.95) - 1] * 1000:.1f}"


_JSON_RPC = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


async def _latency(server: ServerProcess, queries: list[str]) -> dict[str, list[float]]:
    """REST, one JSON-RPC POST to /mcp (the server's share of MCP), and the SDK client's call_tool, in turn."""
    samples: dict[str, list[float]] = {"rest": [], "rpc": [], "sdk": []}
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http, Client(f"{server.url}/mcp") as session:

        async def rest(query: str) -> None:
            answer = await http.post("/v1/recall", json={"namespace": "b", "query": query, "budget": 500})
            assert answer.status_code == 200

        async def rpc(query: str) -> None:
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "recall", "arguments": {"namespace": "b", "query": query, "budget": 500}}}
            answer = await http.post("/mcp", json=call, headers=_JSON_RPC)
            assert answer.status_code == 200 and "error" not in answer.json()

        async def sdk(query: str) -> None:
            assert not (await session.call_tool("recall", {"namespace": "b", "query": query, "budget": 500})).is_error

        paths = {"rest": rest, "rpc": rpc, "sdk": sdk}
        for query in queries[:3]:  # warm every path
            for run in paths.values():
                await run(query)
        for i, query in enumerate(queries):
            order = list(paths)[i % 3:] + list(paths)[:i % 3]
            for name in order:
                start = time.perf_counter()
                await paths[name](query)
                samples[name].append(time.perf_counter() - start)
    return samples


async def _stdio(data: Path, queries: list[str]) -> list[float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "cli", "mcp", "--data", str(data), "-n", "b"],
                                   env=env, cwd=str(ROOT))
    samples: list[float] = []
    async with Client(params) as session:
        for query in queries[:3]:
            await session.call_tool("recall", {"query": query, "budget": 500})
        for query in queries:
            start = time.perf_counter()
            result = await session.call_tool("recall", {"query": query, "budget": 500})
            assert not result.is_error
            samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=150, help="documents of each corpus (SciFact, CMRC) to ingest")
    parser.add_argument("--queries", type=int, default=60, help="queries of each corpus to time")
    args = parser.parse_args()
    listing_tokens()
    en, zh = load_scifact(), load_cmrc()
    docs = [*en.docs[: args.docs], *zh.docs[: args.docs]]
    queries = [q.text for pair in zip(en.queries[: args.queries], zh.queries[: args.queries], strict=True)
               for q in pair]
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "data"
        with ServerProcess(data, Path(folder) / "server.log") as server:
            with httpx.Client(base_url=server.url, timeout=300) as http:
                for doc in docs:
                    answer = http.post("/v1/documents", json={"namespace": "b", "doc_id": doc.doc_id,
                                                              "title": doc.title, "text": doc.text})
                    assert answer.status_code == 200, answer.text
            timed = anyio.run(_latency, server, queries)
        stdio = anyio.run(_stdio, data, queries)
    print(f"\nrecall, {len(docs)} documents (en + zh), budget 500, {len(queries)} queries; p50 / p95 ms")
    print("| path | p50 / p95 ms |")
    print("|---|---:|")
    print(f"| REST POST /v1/recall (httpx) | {_ms(timed['rest'])} |")
    print(f"| MCP tools/call as one JSON-RPC POST to /mcp (httpx) | {_ms(timed['rpc'])} |")
    print(f"| MCP call_tool through the SDK's client, streamable HTTP | {_ms(timed['sdk'])} |")
    print(f"| MCP call_tool through the SDK's client, stdio (`memory mcp`), after the server stopped | {_ms(stdio)} |")
    rest = statistics.median(timed["rest"])
    print(f"\np50 against REST, same run, rotating order: JSON-RPC POST {statistics.median(timed['rpc']) / rest:.2f}x, "
          f"SDK client {statistics.median(timed['sdk']) / rest:.2f}x")


if __name__ == "__main__":
    main()
