"""MemoryRetriever against the real service: LangChain's own standard retriever suite (langchain-tests), then what
the suite does not ask: metadata, score order, the budget, async through the AsyncClient, callbacks, batch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_tests.integration_tests import RetrieversIntegrationTests

from bench.server_process import ServerProcess
from memory_client import AsyncClient, Client
from memory_client.langchain import MemoryRetriever
from tests.client.conftest import AsyncRecording, Recording

pytestmark = pytest.mark.anyio
NS = "lc"
DOCUMENTS = {
    "rance.md": "The La Rance tidal plant opened in 1966 in Brittany, France.",
    "sihwa.md": "The Sihwa Lake tidal station opened in 2011 in South Korea.",
    "潮汐.md": "朗斯潮汐电站于1966年在布列塔尼投入运行，是世界上第一座潮汐电站。",
    "swansea.md": "A tidal lagoon in Swansea Bay was proposed but never built.",
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def seeded(server: ServerProcess) -> Iterator[str]:
    """The server's URL, its namespace holding two pinned facts and four documents on tidal power."""
    with Client(server.url, namespace=NS) as client:
        client.pin("以后不要用Python 2的语法，预算不超过500元。")
        for doc_id, text in DOCUMENTS.items():
            client.add_document(text, doc_id=doc_id)
    yield server.url


class TestMemoryRetrieverStandard(RetrieversIntegrationTests):
    """LangChain's standard retriever tests, run as they are (none overridden, none expected to fail)."""

    url = ""

    @pytest.fixture(autouse=True)
    def _served(self, seeded: str) -> None:
        type(self).url = seeded

    @property
    def retriever_constructor(self) -> type[MemoryRetriever]:
        return MemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        # A fresh AsyncClient each time: an httpx pool belongs to the event loop that first used it.
        return {"client": Client(self.url, namespace=NS), "async_client": AsyncClient(self.url, namespace=NS)}

    @property
    def retriever_query_example(self) -> str:
        return "When did the La Rance tidal plant open?"


def test_documents_carry_the_recall_items_in_score_order(seeded: str) -> None:
    with Client(seeded, namespace=NS) as client:
        recalled = client.recall("When did the La Rance tidal plant open?", budget=400)
        documents = MemoryRetriever(client=client, budget=400).invoke("When did the La Rance tidal plant open?")
    assert [d.page_content for d in documents] == [i.text for i in recalled.items]
    scores = [d.metadata["score"] for d in documents]
    assert scores == sorted(scores, reverse=True) and sum(d.metadata["tokens"] for d in documents) <= 400
    fact, *_ = documents
    assert fact.metadata["tier"] == "fact" and fact.metadata["pinned"] and fact.id == fact.metadata["id"]
    rance = next(d for d in documents if d.metadata["doc_id"] == "rance.md")
    assert rance.metadata["tier"] == "experience" and "1966" in rance.page_content
    assert set(rance.metadata) == {"id", "tier", "score", "tokens", "pinned", "source", "doc_id", "key",
                                   "updated_at", "freshness", "trimmed", "low_confidence", "metadata", "why"}
    assert "fused" in rance.metadata["why"]


def test_a_small_budget_keeps_the_pinned_constraints_only(seeded: str) -> None:
    with Client(seeded, namespace=NS) as client:
        documents = MemoryRetriever(client=client, budget=30).invoke("朗斯潮汐电站何时投入运行？")
    assert [d.metadata["tier"] for d in documents] == ["fact", "fact"]
    assert {d.page_content for d in documents} == {"预算不超过500元", "不要用Python 2的语法"}


def test_fields_are_overridden_per_call_and_unknown_ones_refused(seeded: str) -> None:
    with Client(seeded) as client:
        retriever = MemoryRetriever(client=client, namespace="lc-empty")
        assert retriever.invoke("tidal") == []
        [first] = retriever.invoke("朗斯潮汐电站何时投入运行？", namespace=NS, k=1)
        assert first.metadata["pinned"]
        with pytest.raises(TypeError, match="budgt"):
            retriever.invoke("tidal", budgt=10)


async def test_ainvoke_goes_through_the_async_client(seeded: str) -> None:
    sync_transport, async_transport = Recording(), AsyncRecording()
    async with AsyncClient(seeded, namespace=NS, transport=async_transport) as async_client:
        retriever = MemoryRetriever(client=Client(seeded, namespace=NS, transport=sync_transport),
                                    async_client=async_client)
        documents = await retriever.ainvoke("朗斯潮汐电站何时投入运行？")
    assert any(d.metadata["doc_id"] == "潮汐.md" for d in documents)
    assert (len(async_transport.requests), len(sync_transport.requests)) == (1, 0)


async def test_ainvoke_without_an_async_client_runs_the_sync_one(seeded: str) -> None:
    transport = Recording()
    retriever = MemoryRetriever(client=Client(seeded, namespace=NS, transport=transport))
    assert await retriever.ainvoke("When did the Sihwa Lake station open?", k=2)
    assert len(transport.requests) == 1


def test_invoke_without_a_sync_client_says_so(seeded: str) -> None:
    with pytest.raises(ValueError, match="ainvoke"):
        MemoryRetriever(async_client=AsyncClient(seeded, namespace=NS)).invoke("tidal")
    with pytest.raises(ValueError, match="needs client="):
        MemoryRetriever()


class Seen(BaseCallbackHandler):
    """Keeps what LangChain's retriever callbacks report."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.ended: list[list[Document]] = []

    def on_retriever_start(self, serialized: dict[str, Any], query: str, *, run_id: UUID, **kwargs: Any) -> None:
        self.started.append(query)

    def on_retriever_end(self, documents: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.ended.append(list(documents))


def test_batch_and_callbacks(seeded: str) -> None:
    seen = Seen()
    queries = ["When did the Sihwa Lake station open?", "朗斯潮汐电站何时投入运行？"]
    with Client(seeded, namespace=NS) as client:
        answers = MemoryRetriever(client=client, k=3).batch(queries, config={"callbacks": [seen]})
    assert [len(a) for a in answers] == [3, 3]
    assert any(d.metadata["doc_id"] == "sihwa.md" for d in answers[0])
    assert any(d.metadata["doc_id"] == "潮汐.md" for d in answers[1])
    assert sorted(seen.started) == sorted(queries) and sorted(map(len, seen.ended)) == [3, 3]
