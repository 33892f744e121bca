"""LangChain and LangGraph over the memory service (the `langchain` extra): a retriever over /v1/recall, a LangGraph
pre-model hook over /v1/context, and the conversions between LangChain messages and OpenAI chat messages.

This is the one module of the client that imports langchain_core; `memory_client.langchain_agent` adds the same
fitting as a middleware for `langchain.agents.create_agent`.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, overload

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import run_in_executor
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import model_validator

from memory_client._async import AsyncClient
from memory_client._client import Client
from memory_client._models import Context, Recall
from memory_client._reading import READ_TOOL

__all__ = [
    "MemoryRetriever", "context_hook", "from_openai_messages", "read_tool", "task_of", "to_documents",
    "to_openai_messages", "tool_schemas",
]

_ROLES: dict[type[BaseMessage], str] = {SystemMessage: "system", HumanMessage: "user", AIMessage: "assistant",
                                        ToolMessage: "tool"}
_FLAGS = ("pinned", "ephemeral")  # /v1/context's own message flags, read from a message's additional_kwargs
_TASK_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")  # the service's task id rule (docs/api.md "Names")
_RECALL_OPTIONS = ("namespace", "budget", "k", "task_id", "filters", "min_score")
_CONTEXT_OPTIONS = frozenset(inspect.signature(Client.context).parameters) - {"self", "messages", "window",
                                                                              "namespace", "system", "tools",
                                                                              "task_id"}
HookState = Mapping[str, Any] | Any  # a LangGraph state: a dict, or a pydantic model with `messages`


class MemoryRetriever(BaseRetriever):
    """Recall as a LangChain retriever: each recall item becomes a Document, best first.

    `budget` (tokens) bounds what comes back as recall bounds it; `k` additionally keeps at most k documents.
    Every field can be overridden per call (`retriever.invoke(q, k=3, task_id="t-42")`). `ainvoke` uses
    `async_client` when there is one (no thread), else runs `client` in LangChain's executor.
    """

    client: Client | None = None
    async_client: AsyncClient | None = None
    namespace: str | None = None
    budget: int | None = None
    k: int | None = None
    task_id: str | None = None
    filters: dict[str, Any] | None = None
    min_score: float | None = None

    @model_validator(mode="after")
    def _has_a_client(self) -> MemoryRetriever:
        if self.client is None and self.async_client is None:
            raise ValueError("MemoryRetriever needs client=Client(...) or async_client=AsyncClient(...), or both")
        return self

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun,
                                **kwargs: Any) -> list[Document]:
        if self.client is None:
            raise ValueError("this MemoryRetriever has only an async_client: call ainvoke, or give it client=")
        options = self._options(kwargs)
        k = options.pop("k")
        return to_documents(self.client.recall(query, **options), k)

    async def _aget_relevant_documents(self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun,
                                       **kwargs: Any) -> list[Document]:
        if self.async_client is None:
            return await run_in_executor(None, self._get_relevant_documents, query,
                                         run_manager=run_manager.get_sync(), **kwargs)
        options = self._options(kwargs)
        k = options.pop("k")
        return to_documents(await self.async_client.recall(query, **options), k)

    def _options(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        unknown = set(overrides) - set(_RECALL_OPTIONS) - {"verbose"}  # LangChain passes its own `verbose` on
        if unknown:
            raise TypeError(f"MemoryRetriever does not take {', '.join(sorted(unknown))}; it takes "
                            f"{', '.join(_RECALL_OPTIONS)}")
        return {name: overrides.get(name, getattr(self, name)) for name in _RECALL_OPTIONS}


def to_documents(recalled: Recall, k: int | None = None) -> list[Document]:
    """Recall items as Documents in the answer's order (descending score), at most `k` of them."""
    items = recalled.items if k is None else recalled.items[:k]
    return [Document(page_content=item.text, id=item.id, metadata={
        "id": item.id, "tier": item.tier, "score": item.score, "tokens": item.tokens, "pinned": item.pinned,
        "source": item.source, "doc_id": item.doc_id, "key": item.key, "updated_at": item.updated_at,
        "freshness": item.freshness, "trimmed": item.trimmed, "low_confidence": item.low_confidence,
        "metadata": dict(item.metadata), "why": dict(item.why),
    }) for item in items]


def to_openai_messages(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """LangChain messages as the OpenAI chat messages /v1/context takes.

    AI tool calls become `tool_calls` (arguments as JSON text), tool messages keep their `tool_call_id`, and
    `additional_kwargs={"pinned": True}` (or `"ephemeral"`) marks a message for the service. Content other than
    text is refused (ValueError), except in an AI message, where blocks such as `tool_use` or reasoning repeat
    what `tool_calls` holds or were never meant to be sent back, and are left out.
    """
    return [_openai(i, message) for i, message in enumerate(messages)]


def _openai(index: int, message: BaseMessage) -> dict[str, Any]:
    role = message.role if isinstance(message, ChatMessage) else next(
        (r for cls, r in _ROLES.items() if isinstance(message, cls)), None)
    if role is None:
        raise ValueError(f"messages[{index}] is a {type(message).__name__}; /v1/context takes system, human, AI "
                         "and tool messages")
    out: dict[str, Any] = {"role": role, "content": _content(message, role)}
    if message.name and role != "tool":
        out["name"] = message.name
    if isinstance(message, AIMessage) and message.tool_calls:
        out["tool_calls"] = [{"id": call["id"], "type": "function", "function": {
            "name": call["name"], "arguments": json.dumps(call["args"], ensure_ascii=False)}}
            for call in message.tool_calls]
        if not out["content"]:
            out["content"] = None
    if isinstance(message, ToolMessage):
        out["tool_call_id"] = message.tool_call_id
    for flag in _FLAGS:
        if message.additional_kwargs.get(flag):
            out[flag] = True
    return out


def _content(message: BaseMessage, role: str) -> str | list[dict[str, Any]]:
    if isinstance(message.content, str):
        return message.content
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, str):
            parts.append({"type": "text", "text": block})
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        elif role != "assistant":  # an image or another part: passed on, counted by the service's stated rule
            parts.append(dict(block))
    return parts


def from_openai_messages(messages: Sequence[Mapping[str, Any]]) -> list[BaseMessage]:
    """OpenAI chat messages (what /v1/context answers) as LangChain messages, tool calls and their ids kept."""
    return [_langchain(i, message) for i, message in enumerate(messages)]


def _langchain(index: int, message: Mapping[str, Any]) -> BaseMessage:
    role, content, name = message.get("role"), message.get("content"), message.get("name")
    text: Any = "" if content is None else content
    if role in ("system", "developer"):  # LangChain has one message class for instructions
        return SystemMessage(content=text, name=name)
    if role == "user":
        return HumanMessage(content=text, name=name)
    if role == "tool":
        return ToolMessage(content=text, tool_call_id=message["tool_call_id"], name=name)
    if role == "assistant":
        calls: list[ToolCall] = []
        invalid: list[InvalidToolCall] = []
        for call in message.get("tool_calls") or []:
            function = call["function"]
            try:
                args = json.loads(function.get("arguments") or "{}")
            except json.JSONDecodeError as exc:
                invalid.append(InvalidToolCall(name=function["name"], args=function.get("arguments"),
                                               id=call["id"], error=str(exc), type="invalid_tool_call"))
                continue
            calls.append(ToolCall(name=function["name"], args=args if isinstance(args, dict) else {"input": args},
                                  id=call["id"], type="tool_call"))
        return AIMessage(content=text, name=name, tool_calls=calls, invalid_tool_calls=invalid)
    raise ValueError(f"messages[{index}] has role {role!r}; expected system, developer, user, assistant or tool")


def read_tool(client: Client | None = None, async_client: AsyncClient | None = None, *,
              namespace: str | None = None) -> StructuredTool:
    """The read tool (`memory_read`) as a LangChain tool: add it to the agent's tools and send `read_tool=True`
    to /v1/context, and the model can read back, page by page, what the service set aside to fit the window."""
    if client is None and async_client is None:
        raise ValueError("read_tool needs client=Client(...) or async_client=AsyncClient(...), or both")

    def call(key: str, page: int = 1) -> dict[str, Any]:
        return {"id": "read", "name": READ_TOOL, "args": {"key": key, "page": page}}

    def read(key: str, page: int = 1) -> str:
        if client is None:
            raise ValueError("this read tool has only an async_client: run the agent with ainvoke/astream")
        return str(client.answer_read(call(key, page), namespace=namespace)["content"])

    async def aread(key: str, page: int = 1) -> str:
        if async_client is None:
            return await run_in_executor(None, read, key, page)
        return str((await async_client.answer_read(call(key, page), namespace=namespace))["content"])

    return StructuredTool.from_function(
        func=read, coroutine=aread, name=READ_TOOL,
        description="Read back text that was set aside to fit the context window: a tool result or earlier "
                    "messages named by a reference such as \"task item t-42/r7\". Returns one page; the end of "
                    "the text says how to ask for the next page.")


def tool_schemas(tools: Sequence[Any], *, pinned: bool = False) -> list[dict[str, Any]]:
    """OpenAI function schemas of LangChain tools (or functions, or schemas), for /v1/context's `tools`."""
    schemas = [dict(convert_to_openai_tool(tool)) for tool in tools]
    return [{**schema, "pinned": True} for schema in schemas] if pinned else schemas


def task_of(config: RunnableConfig | None) -> str | None:
    """The LangGraph thread as the task id (offloads and summaries then follow the thread), when it is a valid one."""
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    return thread if isinstance(thread, str) and _TASK_ID.fullmatch(thread) else None


Hook = Callable[[HookState, RunnableConfig], dict[str, list[BaseMessage]]]
AsyncHook = Callable[[HookState, RunnableConfig], Awaitable[dict[str, list[BaseMessage]]]]


@overload
def context_hook(client: Client, *, window: int, namespace: str | None = ..., system: str | None = ...,
                 tools: Sequence[Any] | None = ..., task_id: str | None = ...,
                 on_report: Callable[[Context], None] | None = ..., **options: Any) -> Hook: ...


@overload
def context_hook(client: AsyncClient, *, window: int, namespace: str | None = ..., system: str | None = ...,
                 tools: Sequence[Any] | None = ..., task_id: str | None = ...,
                 on_report: Callable[[Context], None] | None = ..., **options: Any) -> AsyncHook: ...


def context_hook(client: Client | AsyncClient, *, window: int, namespace: str | None = None,
                 system: str | None = None, tools: Sequence[Any] | None = None, task_id: str | None = None,
                 on_report: Callable[[Context], None] | None = None, **options: Any) -> Hook | AsyncHook:
    """A `pre_model_hook` for LangGraph's `create_react_agent`: the state's messages fitted by /v1/context into
    `window` tokens and handed to the model as `llm_input_messages`; the stored `messages` are left as they are.

    Give the system prompt here (not as the agent's `prompt`, which would be added on top of the fitted turn) and
    the agent's `tools`, so their schemas are counted: they are sent pinned, since the hook cannot take a tool away
    from the model. The task is `task_id`, else the thread's id. `options` are /v1/context's other fields
    (output_reserve, allocation, filters, ...); `on_report` sees every answer. An AsyncClient gives a coroutine
    hook, for `ainvoke` / `astream`.
    """
    unknown = set(options) - _CONTEXT_OPTIONS
    if unknown:
        raise TypeError(f"context_hook does not take {', '.join(sorted(unknown))}; /v1/context's options are "
                        f"{', '.join(sorted(_CONTEXT_OPTIONS))}")
    schemas = tool_schemas(tools, pinned=True) if tools else None

    def request(state: HookState, config: RunnableConfig | None) -> dict[str, Any]:
        messages = state["messages"] if isinstance(state, Mapping) else state.messages
        return {"messages": to_openai_messages(messages), "window": window, "namespace": namespace,
                "system": system, "tools": schemas, "task_id": task_id or task_of(config), **options}

    def answer(fitted: Context) -> dict[str, list[BaseMessage]]:
        if on_report is not None:
            on_report(fitted)
        return {"llm_input_messages": from_openai_messages(fitted.messages)}

    if isinstance(client, AsyncClient):
        async_client = client

        async def afit(state: HookState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
            return answer(await async_client.context(**request(state, config)))

        return afit
    sync_client = client

    def fit(state: HookState, config: RunnableConfig) -> dict[str, list[BaseMessage]]:
        return answer(sync_client.context(**request(state, config)))

    return fit
