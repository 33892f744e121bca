"""LangGraph agents whose model calls go through /v1/context: `create_react_agent` with `context_hook` (sync and
async) and `create_agent` with `ContextMiddleware`. The chat model is scripted (the LLM is outside the project); the
memory service is real. The model must see the fitted turn, the constraints restated and nothing over the window,
while the graph's own state keeps every message."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import StructuredTool, tool
from langgraph.prebuilt import create_react_agent
from pydantic import Field

from bench.server_process import ServerProcess
from memory_client import AsyncClient, Client, Context
from memory_client.langchain import context_hook
from memory_client.langchain_agent import ContextMiddleware

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:create_react_agent has been moved")]
SYSTEM = "You are a research assistant."
WINDOW, RESERVE = 2048, 256
TURNS = {
    "en": {"rule": "Never use Python 2 syntax in any code you write for me.", "said": "Never use Python 2 syntax",
           "ask": "Find papers on tidal power in Brittany.", "answer": "Paper 3 is about La Rance."},
    "zh": {"rule": "以后不要用Python 2的语法，预算不超过500元。", "said": "预算不超过500元",
           "ask": "帮我找关于布列塔尼潮汐能的论文。", "answer": "第3篇是关于朗斯电站的。"},
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


class ScriptedModel(GenericFakeChatModel):
    """Answers from a script and keeps every list of messages it was called with."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[list[str]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        self.bound.append([t.name if hasattr(t, "name") else t["function"]["name"] for t in tools])
        return self

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


@tool
def search_papers(q: str) -> str:
    """Search papers on a topic."""
    return json.dumps([{"id": i, "title": f"Paper {i} on tidal power ({q})", "abstract": "Tides and turbines. " * 8}
                       for i in range(40)])


def scripted(lang: str) -> ScriptedModel:
    call = AIMessage("", tool_calls=[{"name": "search_papers", "args": {"q": "tidal"}, "id": "c9"}])
    return ScriptedModel(messages=iter([call, AIMessage(TURNS[lang]["answer"])]))


def history(lang: str) -> list[BaseMessage]:
    """An earlier conversation longer than the window, the user's rule first, then this turn's request."""
    messages: list[BaseMessage] = [HumanMessage(TURNS[lang]["rule"]), AIMessage("OK.")]
    for t in range(30):
        messages += [HumanMessage(f"Question {t}: what does sheet sales-{t}.csv hold?"),
                     AIMessage(f"Sheet sales-{t}.csv holds {400 + t} rows of tidal readings. " * 5)]
    return [*messages, HumanMessage(TURNS[lang]["ask"])]


def check_turn(lang: str, model: ScriptedModel, reports: list[Context], sent: list[BaseMessage],
               state: list[BaseMessage], thread: str) -> None:
    """What every fitted model call must show, and the state left as the graph keeps it."""
    assert len(model.seen) == len(reports) == 2  # the call that asks for the tool, the one that answers
    for seen, fitted in zip(model.seen, reports, strict=True):
        report = fitted.report
        assert report.budget.window == WINDOW and report.tokens.total <= report.budget.available
        assert report.task_id == thread
        assert isinstance(seen[0], SystemMessage) and seen[0].content == SYSTEM
        # The rule's message is compacted: the summary (a system message) states it, and it is restated last.
        held = [m.content for m in seen if isinstance(m, SystemMessage) and "## Summary" in str(m.content)]
        assert held and TURNS[lang]["said"] in str(held[0])
        restated = [m for m in seen if isinstance(m, SystemMessage) and "Remember the constraints" in str(m.content)]
        assert restated and TURNS[lang]["said"] in str(restated[0].content)
        assert len(seen) < len(sent)  # the history did not fit whole: summarised (or cut)
        assert report.summary is not None or "truncated" in {a.kind for a in report.actions}
    assert reports[0].report.summary is not None and reports[0].report.summary.created
    last = model.seen[1]
    assert [m.content for m in last if isinstance(m, HumanMessage)][-1] == TURNS[lang]["ask"]
    assert any(isinstance(m, ToolMessage) and m.tool_call_id == "c9" for m in last)
    # The graph's state holds the whole conversation and the new turn, none of the fitted system messages.
    assert [m.content for m in state[:len(sent)]] == [m.content for m in sent]
    assert [type(m) for m in state[len(sent):]] == [AIMessage, ToolMessage, AIMessage]
    assert state[-1].content == TURNS[lang]["answer"]
    assert not any(isinstance(m, SystemMessage) for m in state)


@pytest.fixture(scope="module")
def client(server: ServerProcess) -> Iterator[Client]:
    with Client(server.url) as opened:
        yield opened


@pytest.mark.parametrize("lang", sorted(TURNS))
def test_create_react_agent_with_the_hook(client: Client, lang: str) -> None:
    model, reports = scripted(lang), []
    hook = context_hook(client, window=WINDOW, output_reserve=RESERVE, namespace=f"hook-{lang}", system=SYSTEM,
                        tools=[search_papers], on_report=reports.append)
    agent = create_react_agent(model, [search_papers], pre_model_hook=hook)
    sent = history(lang)
    state = agent.invoke({"messages": sent}, config={"configurable": {"thread_id": f"thread-{lang}"}})
    check_turn(lang, model, reports, sent, state["messages"], f"thread-{lang}")
    assert all(r.tools[0]["function"]["name"] == "search_papers" for r in reports)  # pinned: always counted


@pytest.mark.parametrize("lang", sorted(TURNS))
async def test_create_react_agent_with_the_async_hook(server: ServerProcess, lang: str) -> None:
    model, reports = scripted(lang), []
    async with AsyncClient(server.url) as client:
        hook = context_hook(client, window=WINDOW, output_reserve=RESERVE, namespace=f"ahook-{lang}",
                            system=SYSTEM, tools=[search_papers], on_report=reports.append)
        agent = create_react_agent(model, [search_papers], pre_model_hook=hook)
        sent = history(lang)
        state = await agent.ainvoke({"messages": sent}, config={"configurable": {"thread_id": f"athread-{lang}"}})
    check_turn(lang, model, reports, sent, state["messages"], f"athread-{lang}")


@pytest.mark.parametrize(("lang", "mode"), [("en", "sync"), ("zh", "async")])
async def test_create_agent_with_the_middleware(server: ServerProcess, client: Client, lang: str,
                                                mode: str) -> None:
    model, reports = scripted(lang), []
    async with AsyncClient(server.url) as async_client:
        middleware = ContextMiddleware(client, async_client, window=WINDOW, output_reserve=RESERVE,
                                       namespace=f"mw-{lang}", on_report=reports.append)
        agent = create_agent(model, [search_papers], system_prompt=SYSTEM, middleware=[middleware])
        sent = history(lang)
        config: Any = {"configurable": {"thread_id": f"mw-{mode}-{lang}"}}
        state = agent.invoke({"messages": sent}, config) if mode == "sync" else \
            await agent.ainvoke({"messages": sent}, config)
    check_turn(lang, model, reports, sent, state["messages"], f"mw-{mode}-{lang}")


def test_the_middleware_binds_only_the_tools_the_service_kept(client: Client) -> None:
    """Schemas over their share are left out of the model call (a hook could not do that: it only sees messages)."""
    spares = [StructuredTool.from_function(lambda x: x, name=f"spreadsheet_tool_{i}", description=(
        f"Tool {i} formats spreadsheet cells, merges columns and exports CSV reports. " * 6)) for i in range(30)]
    model, reports = scripted("en"), []
    middleware = ContextMiddleware(client, window=WINDOW, output_reserve=RESERVE, namespace="mw-tools",
                                   on_report=reports.append)
    agent = create_agent(model, [search_papers, *spares], system_prompt=SYSTEM, middleware=[middleware])
    agent.invoke({"messages": history("en")})
    left_out = set(reports[0].report.tools_left_out)
    assert left_out and "search_papers" not in left_out
    assert model.bound and all("search_papers" in names and not left_out & set(names) for names in model.bound)
    assert all(len(names) == len(r.tools) for names, r in zip(model.bound, reports, strict=True))


def test_a_hook_refuses_options_context_does_not_take(client: Client) -> None:
    with pytest.raises(TypeError, match="windw"):
        context_hook(client, window=WINDOW, windw=10)
