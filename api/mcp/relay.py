"""`memory mcp` beside a running server: the same tools over stdio, each call relayed to the server's /mcp.

Embedded Chroma serves one process, so while `memory serve` (or another agent's `memory mcp`, api.mcp.beside)
holds the data folder an agent's `memory mcp` cannot open the store; like the other `memory` commands, it then
speaks to the server instead (cli/session.py does the same over REST, through memory_client). Each call is one
JSON-RPC POST: /mcp is stateless and answers JSON, so there is no session to keep, and a server that stopped is a
refused connection at once rather than a call waiting on a dead stream; the relay then takes the store over
(`takeover`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import httpx
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.types.version import LATEST_HANDSHAKE_VERSION

from api.mcp.server import INSTRUCTIONS, MCP_PATH, listed, refused
from api.mcp.tools import TOOLS, ToolSpec
from memory.errors import MemoryError_

__all__ = ["run_relay"]

_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": LATEST_HANDSHAKE_VERSION}


async def run_relay(url: str, key: str | None, namespace: str, tools: tuple[ToolSpec, ...] = TOOLS,
                    takeover: Callable[[], str] | None = None) -> None:
    """Serve `tools` over stdio, answering each call with what the server at `url` answers (with `key`).

    With `takeover`, a call that finds nobody at the address (the process that served the store ended) calls it to
    open the store here or find who serves it now, and is sent there; only a refused connection is sent again (the
    call never arrived), and each later call goes to the new address.
    """
    headers = {**_HEADERS, **({"Authorization": f"Bearer {key}"} if key else {})}
    offered = [spec.name for spec in tools]
    # A call may ingest a document inside its request: the read timeout is as long as the CLI's REST calls wait.
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=httpx.Timeout(600.0, connect=5.0)) as http:

        async def list_tools(_: Any, __: types.PaginatedRequestParams | None) -> types.ListToolsResult:
            return types.ListToolsResult(tools=[listed(spec) for spec in tools])

        async def call_tool(_: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
            if params.name not in offered:
                return refused("NotFound", f"there is no tool {params.name!r}; the tools are {', '.join(offered)}")
            arguments = {"namespace": namespace, **(params.arguments or {})}  # this session's, unless it names one
            try:
                return await _relayed(http, params.name, arguments)
            except httpx.TransportError as exc:
                if takeover is None:
                    return _unanswered(http, exc)
                lost = exc
            try:
                http.base_url = httpx.URL(await anyio.to_thread.run_sync(takeover))
            except (MemoryError_, RuntimeError) as exc:  # busy past the wait, or the service would not start
                return refused(type(exc).__name__, str(exc))
            if not isinstance(lost, httpx.ConnectError):  # it may have run before the server ended: not again
                return _unanswered(http, lost)
            try:
                return await _relayed(http, params.name, arguments)
            except httpx.TransportError as exc:
                return _unanswered(http, exc)

        relay = Server("context-memory", version="1", instructions=INSTRUCTIONS, on_list_tools=list_tools,
                       on_call_tool=call_tool)
        async with stdio_server() as (read, write):
            await relay.run(read, write, relay.create_initialization_options())


def _unanswered(http: httpx.AsyncClient, exc: httpx.TransportError) -> types.CallToolResult:
    url = str(http.base_url).rstrip("/")
    return refused("StoreUnavailable", f"the server at {url} did not answer ({type(exc).__name__}); start it "
                                       "again, or stop it for good and `memory mcp` opens the store itself")


async def _relayed(http: httpx.AsyncClient, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """The server's answer to one call; httpx.TransportError when it did not answer."""
    url = str(http.base_url).rstrip("/")
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    answer = await http.post(MCP_PATH, json=call)
    try:
        body = answer.json()
    except ValueError:
        body = None
    if answer.status_code != 200:  # refused before any tool ran (a key, a size limit): the API's error body
        if isinstance(body, dict) and {"error", "detail"} <= set(body):
            return refused(str(body["error"]), str(body["detail"]))
        return refused("InternalError", f"the server at {url} answered {answer.status_code} to {name}")
    if not isinstance(body, dict) or "result" not in body:
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
        return refused("InternalError", f"the server at {url} could not run {name}: {message or 'no result'}")
    return types.CallToolResult.model_validate(body["result"])
