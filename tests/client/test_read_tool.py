"""The read tool (`read_tool=True`): the service offers `memory_read`, and the client, the LangChain middleware and MCP
answer its calls with what the context set aside, page by page; on a real server, in English and Chinese."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage

from bench.server_process import ServerProcess
from memory_client import Client
from memory_client.langchain_agent import ContextMiddleware
from tests.client.test_langgraph_hook import ScriptedModel

ROWS = {"en": [{"id": f"order-{k}", "item": f"widget {k}", "note": "shipped to the north warehouse"} for k in range(400)],
        "zh": [{"编号": f"订单-{k}", "商品": f"零件{k}", "备注": "已发往北方仓库"} for k in range(400)]}


def turn(lang: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": "List my orders." if lang == "en" else "列出我的订单。"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "list_orders", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(ROWS[lang], ensure_ascii=False)},
            {"role": "user", "content": "Which is the last one?" if lang == "en" else "最后一个是哪个？"}]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_client_answers_a_read_call_page_by_page(server: ServerProcess, lang: str) -> None:
    with Client(server.url, namespace=f"read-{lang}") as client:
        fitted = client.context(turn(lang), window=2048, task_id=f"r-{lang}", read_tool=True)
        assert "memory_read" in {t["function"]["name"] for t in fitted.tools}  # offered, and counted
        (action,) = [a for a in fitted.report.actions if a.kind == "processed"]
        call = {"id": "x1", "type": "function",
                "function": {"name": "memory_read", "arguments": json.dumps({"key": action.key})}}
        first = client.answer_read(call)
        assert first["role"] == "tool" and first["tool_call_id"] == "x1"
        assert first["content"].startswith(turn(lang)[2]["content"][:200]) and "page 2" in first["content"]
        pages, page = [first["content"]], 1
        while "for the next]" in pages[-1]:
            page += 1
            pages.append(client.answer_read({"id": "x", "name": "memory_read",
                                             "args": {"key": action.key, "page": page}})["content"])
        assert ROWS[lang][-1][next(iter(ROWS[lang][-1]))] in pages[-1]  # the last row is read at last
        gone = client.answer_read({"id": "x2", "name": "memory_read", "args": {"key": f"r-{lang}/r999"}})
        assert gone["content"].startswith("memory_read: ") and "r999" in gone["content"]
        bad = client.answer_read({"id": "x3", "name": "memory_read", "args": {"key": "nonsense"}})
        assert "t-42/r7" in bad["content"]
        with pytest.raises(ValueError, match="not of memory_read"):
            client.answer_read({"id": "x4", "name": "search", "args": {}})


def test_a_middleware_agent_reads_back_what_was_set_aside(client: Client) -> None:
    fitted = client.context(turn("en"), window=2048, task_id="mw-read", namespace="mw-read", read_tool=True)
    key = next(a.key for a in fitted.report.actions if a.kind == "processed")
    model = ScriptedModel(messages=iter([
        AIMessage("", tool_calls=[{"name": "memory_read", "args": {"key": key}, "id": "r1"}]),
        AIMessage("order-399.")]))
    middleware = ContextMiddleware(client, window=2048, namespace="mw-read", task_id="mw-read", read_tool=True)
    agent = create_agent(model, [], system_prompt="You track orders.", middleware=[middleware])
    state = agent.invoke({"messages": [{"role": "user", "content": "What did you set aside?"}]})
    answered = [m for m in state["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "r1"]
    assert answered and '"id": "order-0"' in str(answered[0].content)
    assert model.bound and all("memory_read" in names for names in model.bound)


@pytest.fixture(scope="module")
def client(server: ServerProcess) -> Any:
    with Client(server.url) as opened:
        yield opened
