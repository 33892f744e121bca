"""/v1/context as a middleware for `langchain.agents.create_agent`, the agent factory LangGraph 1.x points to in
place of `create_react_agent` (it needs the `langchain` package beside langchain-core).

Each model call is fitted into the window: the model gets the service's messages and only the tools it kept,
while the agent's stored state is left as it was (the middleware rewrites the request, never the state).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import anyio.to_thread
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config

from memory_client._async import AsyncClient
from memory_client._client import Client
from memory_client._models import Context
from memory_client._reading import READ_TOOL
from memory_client.langchain import from_openai_messages, task_of, to_openai_messages, tool_schemas
from memory_client.langchain import read_tool as make_read_tool

__all__ = ["ContextMiddleware"]

ModelResult = ModelResponse[Any] | AIMessage


class ContextMiddleware(AgentMiddleware):
    """Fits every model call of a `create_agent` agent into `window` tokens through /v1/context.

    The service may leave tool schemas out when they outgrow their share (`select_tools=False` sends them pinned,
    so all stay); provider tools that are not function schemas are passed on untouched and not counted. The task
    is `task_id`, else the thread's id; `options` are /v1/context's other fields. With only `client`, async runs
    use it in a worker thread. `read_tool=True` gives the agent `memory_read`, answered through the client, to read
    back what the service set aside (tool results, compacted messages) instead of doing the work again.
    """

    def __init__(self, client: Client | None = None, async_client: AsyncClient | None = None, *, window: int,
                 namespace: str | None = None, task_id: str | None = None, select_tools: bool = True,
                 read_tool: bool = False, on_report: Callable[[Context], None] | None = None,
                 **options: Any) -> None:
        if client is None and async_client is None:
            raise ValueError("ContextMiddleware needs client=Client(...) or async_client=AsyncClient(...), or both")
        self.client = client
        self.async_client = async_client
        self.window = window
        self.namespace = namespace
        self.task_id = task_id
        self.select_tools = select_tools
        self.on_report = on_report
        self.options = options
        # With read_tool the agent gets the tool that reads set-aside texts back, and the service offers it.
        self.read_tool = read_tool
        self.tools = [make_read_tool(client, async_client, namespace=namespace)] if read_tool else []

    def wrap_model_call(self, request: ModelRequest[Any],
                        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]) -> ModelResult:
        """The model called with the fitted turn."""
        if self.client is None:
            raise ValueError("this ContextMiddleware has only an async_client: run the agent with ainvoke/astream")
        return handler(self._fitted(request, self.client.context(**self._body(request))))

    async def awrap_model_call(self, request: ModelRequest[Any],
                               handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]) -> ModelResult:
        """The model called with the fitted turn, for ainvoke / astream."""
        body = self._body(request)
        if self.async_client is not None:
            fitted = await self.async_client.context(**body)
        else:
            sync_client = self.client
            assert sync_client is not None  # the constructor refuses neither
            fitted = await anyio.to_thread.run_sync(lambda: sync_client.context(**body))
        return await handler(self._fitted(request, fitted))

    def _body(self, request: ModelRequest[Any]) -> dict[str, Any]:
        messages: list[BaseMessage] = [request.system_message] if request.system_message else []
        messages += request.messages
        own = [t for t in request.tools if _is_function(t) and not (self.read_tool and _name(t) == READ_TOOL)]
        schemas = tool_schemas(own, pinned=not self.select_tools)
        extra = {"read_tool": True} if self.read_tool else {}
        return {"messages": to_openai_messages(messages), "window": self.window, "namespace": self.namespace,
                "tools": schemas or None, "task_id": self.task_id or task_of(_config()), **extra, **self.options}

    def _fitted(self, request: ModelRequest[Any], fitted: Context) -> ModelRequest[Any]:
        if self.on_report is not None:
            self.on_report(fitted)
        messages = cast(list[AnyMessage], from_openai_messages(fitted.messages))
        system = messages[0] if messages and isinstance(messages[0], SystemMessage) else None
        if system is not None:  # create_agent sends it first; the other system messages keep their places
            messages = messages[1:]
        kept = {tool["function"]["name"] for tool in fitted.tools}
        tools = [t for t in request.tools if not _is_function(t) or _name(t) in kept]
        return request.override(system_message=system, messages=messages, tools=tools)


def _is_function(tool: BaseTool | dict[str, Any]) -> bool:
    return isinstance(tool, BaseTool) or "function" in tool


def _name(tool: BaseTool | dict[str, Any]) -> str:
    return tool.name if isinstance(tool, BaseTool) else str(tool["function"]["name"])


def _config() -> Any:
    try:
        return get_config()
    except RuntimeError:  # called outside a graph run: no thread to follow
        return None
