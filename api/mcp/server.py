"""The MCP server over the tools of api/mcp/tools.py: stdio for a local agent, streamable HTTP at /mcp.

Built on the SDK's low-level `Server` rather than `MCPServer`: the tool schemas are the REST models' own, and a
refused call answers the sentence REST gives (`MCPServer` validates arguments itself and prefixes its errors).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import ValidationError as PydanticValidationError
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from api.auth import KeyRing
from api.deps import Access
from api.errors import error_response, field_problems, library_status
from api.mcp.schema import compact
from api.mcp.tools import TOOLS, Answer, Call, ToolSpec
from memory import errors
from memory.service import Memory

__all__ = ["DEFAULT_NAMESPACE", "INSTRUCTIONS", "MCP_PATH", "McpEndpoint", "build_server", "listed", "refused",
           "run_stdio", "select_tools", "tool_schemas"]

MCP_PATH = "/mcp"
DEFAULT_NAMESPACE = "default"
_ACCESS = "memory_access"  # where McpEndpoint leaves the caller's rights in the request's state
_log = logging.getLogger(__name__)
_BY_NAME = {spec.name: spec for spec in TOOLS}


def select_tools(names: str | None) -> tuple[ToolSpec, ...]:
    """The tools named in a comma-separated list (all of them for None or ""); ValidationError for an unknown one.

    Each tool listed costs every agent's prompt its schema: a deployment offers only the ones its agents use.
    """
    if not names:
        return TOOLS
    wanted = [name.strip() for name in names.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in _BY_NAME]
    if unknown or not wanted:
        named = ", ".join(map(repr, unknown or [names]))
        raise errors.ValidationError(f"unknown MCP tool {named}; the tools are {', '.join(_BY_NAME)}")
    return tuple(spec for spec in TOOLS if spec.name in wanted)


def build_server(memory: Memory, *, access: Access | None = None, namespace: str = DEFAULT_NAMESPACE,
                 tools: tuple[ToolSpec, ...] = TOOLS) -> Server[Any]:
    """The MCP server over `memory`. Over HTTP each request brings its key's rights (McpEndpoint) and may name its
    namespace and tools (`/mcp?namespace=u1&tools=recall,pin`); over stdio `access`, `namespace` and `tools` hold
    for the whole session."""

    def offered(ctx: Any) -> tuple[ToolSpec, ...]:
        request = ctx.request if isinstance(ctx.request, Request) else None
        return tools if request is None else select_tools(request.query_params.get("tools"))

    async def list_tools(ctx: Any, _: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[listed(spec) for spec in offered(ctx)])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = next((spec for spec in offered(ctx) if spec.name == params.name), None)
        if spec is None:
            return refused("NotFound", f"there is no tool {params.name!r}; the tools are "
                                        f"{', '.join(s.name for s in offered(ctx))}")
        request = ctx.request if isinstance(ctx.request, Request) else None
        caller = access if request is None else request.scope.get("state", {}).get(_ACCESS)
        if caller is None:  # only McpEndpoint serves HTTP, and it always sets the rights
            return refused("Unauthorized", "this request came without the service's API key check")
        default = namespace if request is None else request.query_params.get("namespace") or DEFAULT_NAMESPACE
        return await anyio.to_thread.run_sync(_answer, spec, memory, caller, default, params.arguments or {})

    return Server("context-memory", version="1", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


INSTRUCTIONS = ("Long-term memory for this agent. Call `recall` with the user's question before answering; "
                 "`remember` each user message that states a preference or constraint; `pin` what must never "
                 "be forgotten.")


def listed(spec: ToolSpec) -> types.Tool:
    """How tools/list shows a tool: its description, its trimmed REST schema, and read-only / destructive hints."""
    schema = compact(spec.model.model_json_schema())
    hints = types.ToolAnnotations(read_only_hint=spec.read_only or None, destructive_hint=spec.destructive or None)
    return types.Tool(name=spec.name, description=spec.description, input_schema=schema,
                      annotations=hints if spec.read_only or spec.destructive else None)


def _answer(spec: ToolSpec, memory: Memory, access: Access, namespace: str,
            arguments: dict[str, Any]) -> types.CallToolResult:
    """Validate, call the library, and answer; a refusal carries the `error` and `detail` REST would send."""
    try:
        args = spec.model.model_validate(arguments)
        answer: Answer = spec.run(Call(memory, access, namespace, args))
    except PydanticValidationError as exc:
        return refused("ValidationError", "invalid request: " + field_problems(exc.errors()))
    except errors.MemoryError_ as exc:
        return refused(library_status(exc)[1], str(exc))
    except Exception as exc:  # a bug: the caller gets a sentence, the log the traceback, as REST does
        _log.error("unexpected %s in MCP tool %s", type(exc).__name__, spec.name, exc_info=exc)
        return refused("InternalError", f"the service failed unexpectedly ({type(exc).__name__}); this is a bug, "
                                         "logged with its traceback: report it with the time of the request")
    return types.CallToolResult(content=[types.TextContent(type="text", text=answer.text)],
                                structured_content=answer.structured)


def refused(name: str, detail: str) -> types.CallToolResult:
    """A refused call: the REST error body as structured content, its sentence as the text the model reads."""
    body = {"error": name, "detail": detail}
    return types.CallToolResult(content=[types.TextContent(type="text", text=detail)], structured_content=body,
                                is_error=True)


class McpEndpoint:
    """The ASGI endpoint at /mcp: the caller's API key checked as for /v1 (401 in the API's error body), then the
    SDK's streamable HTTP transport, stateless and answering plain JSON (no session to keep between requests)."""

    def __init__(self, memory: Memory, keyring: KeyRing, *, host: str, max_body_bytes: int) -> None:
        self._keyring = keyring
        security = None
        # Without keys the service is open to anything on this machine, a web page's script included: as the SDK
        # does on loopback, /mcp then refuses a Host or Origin that is not loopback (DNS rebinding). With keys, the
        # key is the guard, and a reverse proxy's own Host name must pass.
        if not keyring.enabled and host in ("127.0.0.1", "localhost", "::1"):
            security = TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"],
                allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
        # The body limit is the service's own (limits.max_request_bytes, refused by api/guard.py in the API's
        # error body); the SDK's smaller default would refuse a document REST takes.
        self.manager = StreamableHTTPSessionManager(app=build_server(memory), stateless=True, json_response=True,
                                                    security_settings=security, max_request_body_size=max_body_bytes)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The transport's task group, for the app's lifespan."""
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("method") == "GET":
            # The spec's GET opens a stream for messages the server starts; a stateless server never starts one, and
            # the stream would hold a connection open for nothing. 405 is the spec's answer for "no stream here".
            refusal = error_response(405, "MethodNotAllowed", "/mcp takes MCP messages by POST (streamable HTTP, "
                                                              "stateless); it opens no stream for GET")
            refusal.headers["allow"] = "POST"
            await refusal(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        scheme, _, value = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        token = value.strip() if scheme.lower() == "bearer" else None
        try:
            patterns = self._keyring.patterns(token)
            select_tools(Request(scope).query_params.get("tools"))
        except errors.MemoryError_ as exc:
            status, name = library_status(exc)
            await error_response(status, name, str(exc))(scope, receive, send)
            return
        scope.setdefault("state", {})[_ACCESS] = Access(self._keyring, patterns)
        await self.manager.handle_request(scope, receive, send)


async def run_stdio(memory: Memory, namespace: str, tools: tuple[ToolSpec, ...] = TOOLS) -> None:
    """Serve one agent over this process's stdin and stdout until it closes them (`memory mcp`)."""
    server = build_server(memory, access=Access(KeyRing({}), ("*",)), namespace=namespace, tools=tools)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def tool_schemas(tools: tuple[ToolSpec, ...] = TOOLS) -> str:
    """The tools as `tools/list` lists them, as JSON: what an agent's prompt carries (bench/mcp_tools.py)."""
    return json.dumps([listed(spec).model_dump(mode="json", by_alias=True, exclude_none=True) for spec in tools],
                      ensure_ascii=False)
