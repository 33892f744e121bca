"""The MCP tools through the SDK's own client, in process: every tool on a real store, in English and Chinese, and
a refused call answering the sentence REST gives for the same input."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from api.app import create_app
from api.auth import KeyRing
from api.deps import Access
from api.mcp.server import build_server, select_tools, tool_schemas
from api.mcp.tools import TOOLS
from memory.config import Config
from memory.errors import ValidationError
from memory.service import Memory
from memory.tokens import TokenCounter
from tests import local_client

pytestmark = pytest.mark.anyio

EVERYTHING = Access(KeyRing({}), ("*",))


@pytest.fixture()
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture()
async def session(memory: Memory) -> AsyncIterator[Client]:
    async with Client(build_server(memory, access=EVERYTHING, namespace="u1")) as client:
        yield client


def titles(node: Any) -> list[str]:
    """Every generated title left in a schema (a property may be named "title": its value is a schema)."""
    if isinstance(node, list):
        return [t for item in node for t in titles(item)]
    if not isinstance(node, dict):
        return []
    found = [v for k, v in node.items() if k == "title" and isinstance(v, str)]
    return found + [t for v in node.values() for t in titles(v)]


async def call(client: Client, name: str, arguments: dict[str, Any]) -> Any:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content[0].text
    return result


async def test_the_tools_listed_are_the_table_with_the_rest_models_schemas(session: Client) -> None:
    listed = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert list(listed) == [spec.name for spec in TOOLS]
    for spec in TOOLS:
        schema = listed[spec.name].input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        # Every field of the REST model is offered, no more; what REST requires (but the namespace) is required.
        assert set(schema["properties"]) == set(spec.model.model_fields), spec.name
        required = {n for n, f in spec.model.model_fields.items() if f.is_required()}
        assert set(schema.get("required", [])) == required, spec.name
        assert schema["additionalProperties"] is False
        assert not titles(schema), spec.name
    assert listed["recall"].annotations is not None and listed["recall"].annotations.read_only_hint
    assert listed["forget_fact"].annotations is not None and listed["forget_fact"].annotations.destructive_hint


async def test_a_valid_call_passes_the_listed_schema_and_a_bad_one_fails_it(session: Client) -> None:
    schema = {t.name: t for t in (await session.list_tools()).tools}["recall"].input_schema
    jsonschema.validate({"query": "tabs", "budget": 200, "filters": {"tags": ["a"]}}, schema)
    for bad in ({"budget": 200}, {"query": "q", "budget": "200"}, {"query": "q", "bogus": 1},
                {"query": "q", "min_score": 2}, {"query": "q", "namespace": "a b"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


@pytest.mark.parametrize(("constraint", "question", "document", "asked"), [
    ("Never use Python 2 syntax.", "what should I keep in mind when writing the loader?",
     "The loader reads CSV exports from the billing system every night and writes them to the warehouse.",
     "how does the loader get the billing data?"),
    ("以后不要用Python 2的语法，预算不超过500元。", "写加载程序时要注意什么？",
     "加载程序每天夜里读取计费系统导出的CSV文件，并把它们写入数据仓库。",
     "加载程序怎么拿到计费数据？"),
])
async def test_pin_ingest_and_recall_both(session: Client, constraint: str, question: str, document: str,
                                          asked: str) -> None:
    pinned = (await call(session, "pin", {"text": constraint})).structured_content
    assert pinned["stored"] and all(f["pinned"] for f in pinned["stored"])
    ingested = (await call(session, "ingest_document", {"text": document, "doc_id": "loader"})).structured_content
    assert ingested["status"] == "created" and ingested["chunks"] >= 1
    recalled = await call(session, "recall", {"query": asked, "budget": 300})
    block = recalled.content[0].text
    for fact in pinned["stored"]:
        assert fact["text"] in block
    assert document[:20] in block
    data = recalled.structured_content
    assert data["rendered"] == block and data["used_tokens"] <= 300
    assert [i["score"] for i in data["items"]] == sorted((i["score"] for i in data["items"]), reverse=True)
    assert {"fact", "experience"} <= {i["tier"] for i in data["items"]}
    # The pinned constraints come first whatever the question.
    other = (await call(session, "recall", {"query": question, "budget": 300})).content[0].text
    assert other.index(pinned["stored"][0]["text"]) < len(other) // 2 + 1


@pytest.mark.parametrize(("message", "expected"), [
    ("I prefer answers in British English. Please never use tabs.", "tabs"),
    ("我喜欢简洁的回答，请不要使用表情符号。", "表情符号"),
])
async def test_remember_facts_and_forget(session: Client, message: str, expected: str) -> None:
    change = (await call(session, "remember", {"text": message})).structured_content
    stored = change["stored"]
    assert any(expected in f["text"] for f in stored)
    listed = (await call(session, "facts", {})).structured_content["facts"]
    assert {f["id"] for f in stored} <= {f["id"] for f in listed}
    gone = (await call(session, "forget_fact", {"fact_id": stored[0]["id"]})).structured_content
    assert gone["deleted"] >= 1
    assert stored[0]["id"] not in {f["id"] for f in (await call(session, "facts", {})).structured_content["facts"]}


@pytest.mark.parametrize(("turns", "asked", "expected"), [
    ([{"text": "I moved to Berlin last May.", "speaker": "Anna"},
      {"text": "Nice! How do you like the city?", "speaker": "Ben"}], "Where does Anna live?", "Berlin"),
    ([{"text": "我去年五月搬到了杭州。", "speaker": "小王"},
      {"text": "真好！你喜欢那座城市吗？", "speaker": "小李"}], "小王住在哪里？", "杭州"),
])
async def test_add_memories_then_recall(session: Client, turns: list[dict[str, str]], asked: str,
                                        expected: str) -> None:
    added = (await call(session, "add_memories", {"messages": turns})).structured_content
    assert added["stored"] == len(turns) and len(added["ids"]) == len(turns)
    assert expected in (await call(session, "recall", {"query": asked, "budget": 200})).content[0].text


@pytest.mark.parametrize("line", ["row {i}: the nightly export wrote 1,204 rows to the warehouse table billing_{i}",
                                  "第{i}行：夜间导出向数据仓库表 billing_{i} 写入了1204行"])
async def test_task_put_offloads_and_task_get_reads_back_by_page(session: Client, counter: TokenCounter,
                                                                 line: str) -> None:
    text = "\n".join(line.format(i=i) for i in range(200))
    added = (await call(session, "task_put", {"task_id": "t-1", "kind": "tool_result", "text": text})
             ).structured_content
    assert added["offloaded"] and added["tokens"] == counter.count(text)
    pages = []
    page = 1
    while True:
        got = await call(session, "task_get", {"task_id": "t-1", "key": added["key"], "page": page,
                                               "page_tokens": 400})
        data = got.structured_content
        pages.append(data["text"])
        assert data["tokens"] <= 400
        if data["page"] == data["pages"]:
            assert got.content[0].text == data["text"]
            break
        assert f"page={page + 1}" in got.content[0].text  # the model is told how to read on
        page += 1
    assert len(pages) > 1 and "".join(pages) == text
    whole = (await call(session, "task_get", {"task_id": "t-1", "key": added["key"]})).structured_content
    assert whole["text"] == text


async def test_context_packs_a_turn_and_restates_a_pinned_constraint(session: Client) -> None:
    await call(session, "pin", {"text": "Never use Python 2 syntax."})
    messages = [{"role": "user", "content": "Write the loader."},
                {"role": "assistant", "content": "Which format?"},
                {"role": "user", "content": "CSV, please."}]
    packed = (await call(session, "context", {"messages": messages, "window": 4000, "output_reserve": 500})
              ).structured_content
    assert packed["report"]["tokens"]["total"] <= packed["report"]["budget"]["available"]
    assert "Never use Python 2 syntax." in json.dumps(packed["messages"], ensure_ascii=False)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_memory_read_reads_back_what_a_context_call_set_aside(session: Client, lang: str) -> None:
    rows = [{"id": f"r-{k}", "text": "a row of the report" if lang == "en" else "报告中的一行"} for k in range(400)]
    messages = [{"role": "user", "content": "Load the report." if lang == "en" else "读取报告。"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "load", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": json.dumps(rows, ensure_ascii=False)},
                {"role": "user", "content": "The last row?" if lang == "en" else "最后一行？"}]
    packed = (await call(session, "context", {"messages": messages, "window": 2048, "task_id": f"m-{lang}",
                                              "read_tool": True})).structured_content
    assert "memory_read" in {t["function"]["name"] for t in packed["tools"]}
    key = next(a["key"] for a in packed["report"]["actions"] if a["kind"] == "processed")
    text, page = "", 1
    while True:
        got = await call(session, "memory_read", {"key": key, "page": page})
        text += got.structured_content["text"]
        if got.structured_content["page"] == got.structured_content["pages"]:
            break
        assert f"page {page + 1} for the next" in got.content[0].text
        page += 1
    assert text == messages[2]["content"]


@pytest.fixture()
def rest(config: Config, memory: Memory) -> TestClient:
    return local_client(create_app(config, memory))


@pytest.mark.parametrize(("tool", "route", "arguments"), [
    ("recall", "/v1/recall", {"query": "tabs", "budget": -1}),
    ("recall", "/v1/recall", {"query": "tabs", "budget": "many"}),
    ("recall", "/v1/recall", {"budget": 100}),
    ("recall", "/v1/recall", {"query": "tabs", "colour": "red"}),
    ("recall", "/v1/recall", {"query": "tabs", "min_score": 3}),
    ("recall", "/v1/recall", {"query": "x" * 20_001}),
    ("pin", "/v1/facts/pin", {}),
    ("remember", "/v1/facts", {"text": ""}),
    ("remember", "/v1/facts", {"text": "Never use tabs.", "scope": "planet:mars"}),
    ("add_memories", "/v1/memories", {"messages": []}),
    ("ingest_document", "/v1/documents", {"text": "   "}),
    ("context", "/v1/context", {"messages": [{"role": "tool", "content": "x", "tool_call_id": "c1"}],
                                "window": 1000}),
    ("context", "/v1/context", {"messages": [], "window": 0}),
])
async def test_a_refused_call_answers_the_sentence_rest_gives(session: Client, rest: TestClient, tool: str,
                                                              route: str, arguments: dict[str, Any]) -> None:
    answer = rest.post(route, json={"namespace": "u1", **arguments})
    assert 400 <= answer.status_code < 500
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    assert result.content[0].text == answer.json()["detail"]
    assert result.structured_content == answer.json()


async def test_missing_items_answer_not_found_as_rest_does(session: Client, rest: TestClient) -> None:
    result = await session.call_tool("forget_fact", {"fact_id": "f-nope"})
    assert result.is_error and result.structured_content["error"] == "NotFound"
    assert result.content[0].text == rest.delete("/v1/facts/f-nope", params={"namespace": "u1"}).json()["detail"]
    result = await session.call_tool("task_get", {"task_id": "t-9", "key": "k-nope"})
    assert result.is_error and result.structured_content["error"] == "NotFound"
    unknown = await session.call_tool("summarise", {})
    assert unknown.is_error and "recall" in unknown.content[0].text


async def test_a_key_limited_to_some_namespaces_is_held_to_them(memory: Memory) -> None:
    alice = Access(KeyRing({"k-alice": ("alice",)}), ("alice",))
    async with Client(build_server(memory, access=alice, namespace="alice")) as client:
        await call(client, "pin", {"text": "Never use tabs."})
        refused = await client.call_tool("facts", {"namespace": "bob"})
        assert refused.is_error and refused.structured_content == {
            "error": "NotFound", "detail": "namespace 'bob' does not exist"}
    assert [f.text for f in memory.facts.list_facts("alice")] == ["Never use tabs."]
    assert memory.facts.list_facts("bob") == []


def test_the_tool_listing_costs_what_the_bench_reports(counter: TokenCounter) -> None:
    listed = json.loads(tool_schemas())
    assert [t["name"] for t in listed] == [spec.name for spec in TOOLS]
    assert all("inputSchema" in t for t in listed)  # the wire's spelling, which is what a prompt carries
    # Titles and nullable alternatives are gone; the descriptions stay short.
    for tool in listed:
        assert len(tool["description"]) <= 200, tool["name"]
        assert not titles(tool["inputSchema"]) and '{"type": "null"}' not in json.dumps(tool), tool["name"]


async def test_a_deployment_offers_only_the_tools_it_names(memory: Memory) -> None:
    chosen = select_tools("recall, pin")
    assert [spec.name for spec in chosen] == ["recall", "pin"]
    async with Client(build_server(memory, access=EVERYTHING, tools=chosen)) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["recall", "pin"]
        refused = await client.call_tool("ingest_document", {"text": "A plan."})
        assert refused.is_error and refused.content[0].text == "there is no tool 'ingest_document'; the tools are " \
                                                               "recall, pin"
    assert memory.experience.list_documents("default") == []
    for names in ("recall,summarise", " , "):
        with pytest.raises(ValidationError, match="the tools are recall, context"):
            select_tools(names)
    assert len(tool_schemas(chosen)) < len(tool_schemas()) / 3


LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
RPC = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


def test_without_keys_mcp_refuses_a_page_that_rebinds_its_name_to_loopback(config: Config, memory: Memory) -> None:
    with TestClient(create_app(config, memory), base_url="http://127.0.0.1:8000") as client:
        assert client.post("/mcp", json=LIST, headers=RPC).status_code == 200
        rebound = client.post("/mcp", json=LIST, headers={**RPC, "Host": "evil.example:8000"})  # api/guard.py
        assert rebound.status_code == 403 and rebound.json()["error"] == "Forbidden"
        assert client.post("/mcp", json=LIST, headers={**RPC, "Origin": "http://evil.example"}).status_code == 403


def test_with_keys_the_key_is_the_guard_and_a_proxys_host_passes(config: Config, memory: Memory) -> None:
    keyed = config.replace("auth", keys={"k-admin-91c2": ["*"]})
    with TestClient(create_app(keyed, memory), base_url="http://memory.example") as client:
        assert client.post("/mcp", json=LIST, headers=RPC).status_code == 401
        listed = client.post("/mcp", json=LIST, headers={**RPC, "Authorization": "Bearer k-admin-91c2"})
        assert listed.status_code == 200 and listed.json()["result"]["tools"][0]["name"] == "recall"


def test_mcp_bodies_follow_the_services_size_limit(config: Config, memory: Memory) -> None:
    big = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "facts", "arguments": {"padding": "x" * 5_000_000}}}
    with TestClient(create_app(config, memory), base_url="http://127.0.0.1:8000") as client:
        # Over the SDK's own 4 MiB default, under limits.max_request_bytes: the call is judged, not the size.
        answer = client.post("/mcp", json=big, headers=RPC).json()["result"]
        assert answer["isError"] and answer["structuredContent"]["detail"] == (
            "invalid request: padding: Extra inputs are not permitted")
        big["params"]["arguments"]["padding"] = "x" * 10_000_001  # type: ignore[index]
        refused = client.post("/mcp", json=big, headers=RPC)
        assert refused.status_code == 413 and refused.json()["error"] == "TooLarge"


async def test_an_empty_namespace_is_refused_not_taken_for_the_default(session: Client) -> None:
    refused = await session.call_tool("facts", {"namespace": ""})
    assert refused.is_error and refused.structured_content["error"] == "ValidationError"
