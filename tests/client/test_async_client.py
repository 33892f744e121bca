"""AsyncClient on the main flows against the real service: pin and recall, ingest and recall, a fitted turn, a task,
errors and connection retries, in English and Chinese."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from bench.server_process import ServerProcess, free_port
from memory_client import AsyncClient, ConnectionFailed, DocumentResult, NotFound, ValidationFailed
from tests.client.conftest import AsyncRecording

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(("text", "query", "expected"), [
    ("以后不要用Python 2的语法，预算不超过500元。", "预算是多少？", "预算不超过500元"),
    ("Never use Python 2 syntax.", "Which Python version may I use?", "Never use Python 2 syntax"),
])
async def test_pin_then_recall(server: ServerProcess, text: str, query: str, expected: str) -> None:
    async with AsyncClient(server.url, namespace="async-pin") as client:
        change = await client.pin(text)
        assert change.stored and all(f.pinned for f in change.stored)
        recalled = await client.recall(query, budget=200)
        assert expected in recalled.rendered and recalled.items[0].pinned


async def test_ingest_then_recall_in_both_languages(server: ServerProcess) -> None:
    async with AsyncClient(server.url, namespace="async-docs") as client:
        added, uploaded = await asyncio.gather(
            client.add_document("朗斯潮汐电站于1966年在布列塔尼投入运行。", doc_id="笔记/潮汐.md"),
            client.upload_document(b"The Sihwa Lake tidal station opened in 2011 in South Korea.",
                                   filename="notes/sihwa.txt"))
        assert added == DocumentResult("笔记/潮汐.md", 1, "created")
        assert isinstance(uploaded, DocumentResult) and uploaded.doc_id == "notes/sihwa.txt"
        zh, en = await asyncio.gather(client.recall("朗斯潮汐电站何时投入运行？"),
                                      client.recall("When did the Sihwa Lake station open?"))
        assert "1966" in zh.rendered and zh.items[0].doc_id == "笔记/潮汐.md"
        assert "2011" in en.rendered and en.items[0].doc_id == "notes/sihwa.txt"
        assert {d.doc_id for d in (await client.list_documents()).documents} == {"笔记/潮汐.md", "notes/sihwa.txt"}
        assert (await client.delete_document("笔记/潮汐.md")).deleted == "笔记/潮汐.md"
        with pytest.raises(NotFound):
            await client.get_document("笔记/潮汐.md")


async def test_a_turn_is_fitted_and_its_offload_read_back(server: ServerProcess) -> None:
    rows = [{"id": i, "title": f"潮汐论文 {i}", "abstract": "Tidal power in Brittany and Korea. " * 5}
            for i in range(60)]
    messages = [
        {"role": "user", "content": "预算不超过500元。帮我找潮汐能的论文。"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": str(rows)},
        {"role": "user", "content": "哪一篇最便宜？"}]
    async with AsyncClient(server.url, namespace="async-ctx") as client:
        fitted = await client.context(messages, window=4096, output_reserve=512, task_id="t-async")
        report = fitted.report
        assert report.tokens.total <= report.budget.available
        assert "预算不超过500元" in fitted.messages[0]["content"]
        key = next(a.key for a in report.actions if a.key)
        whole = await client.read_task_item("t-async", key)
        assert "潮汐论文 0" in whole.text
        assert (await client.end_task("t-async")).deleted >= 1


async def test_errors_and_retries(server: ServerProcess) -> None:
    raw = httpx.post(server.url + "/v1/recall", json={"namespace": "async-err", "query": "x", "budget": -1})
    recording = AsyncRecording()
    async with AsyncClient(server.url, namespace="async-err", transport=recording, retries=3) as client:
        with pytest.raises(ValidationFailed) as refused:
            await client.recall("x", budget=-1)
    assert refused.value.detail == raw.json()["detail"] and len(recording.requests) == 1
    unreachable = AsyncRecording()
    async with AsyncClient(f"http://127.0.0.1:{free_port()}", retries=2, transport=unreachable) as client:
        with pytest.raises(ConnectionFailed, match="after 3 attempts"):
            await client.health()
    assert len(unreachable.requests) == 3


async def test_a_given_async_http_client_is_left_open(server: ServerProcess) -> None:
    async with httpx.AsyncClient(base_url=server.url) as http:
        async with AsyncClient(http_client=http) as client:
            assert (await client.health()).status == "ok"
        assert not http.is_closed
