"""Every method of the sync Client against the real service, in English and Chinese: each sends to the route the
route table declares, and the route table is the service's OpenAPI schema, no more and no less."""

from __future__ import annotations

import ast
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.server_process import ServerProcess
from memory_client import (
    Client,
    Context,
    DocumentResult,
    FactChange,
    Health,
    InvalidAnswer,
    Job,
    NotFound,
    Recall,
)
from memory_client._calls import ROUTES
from memory_client._decode import decode
from tests.client.conftest import Recording, template_matches, write

PINNED = {"en": ("Never use Python 2 syntax.", "What syntax rules apply to my code?", "Never use Python 2 syntax"),
          "zh": ("以后不要用Python 2的语法，预算不超过500元。", "预算是多少？", "预算不超过500元")}
OBSERVED = {"en": "I'm allergic to peanuts.", "zh": "我对花生过敏。"}
DOCUMENTS = {"en": ("notes/../tides.md", "The La Rance tidal plant opened in 1966 in Brittany.",
                    "When did the La Rance tidal plant open?"),
             "zh": ("笔记/潮汐 记录.md", "朗斯潮汐电站于1966年在布列塔尼投入运行。", "朗斯潮汐电站何时投入运行？")}


@pytest.fixture(scope="module")
def recording() -> Recording:
    return Recording()


@pytest.fixture(scope="module")
def client(server: ServerProcess, recording: Recording) -> Iterator[Client]:
    with Client(server.url, namespace="calls", transport=recording) as opened:
        yield opened


def call(client: Client, recording: Recording, name: str, *args: Any, **kwargs: Any) -> Any:
    """client.<name>(...), checking that every request it sent went to the method's declared route."""
    before = len(recording.requests)
    result = getattr(client, name)(*args, **kwargs)
    sent = recording.requests[before:]
    route = ROUTES[name]
    assert sent and all(r.method == route.method and template_matches(route.template, r) for r in sent), \
        (name, [str(r.url) for r in sent])
    return result


def test_every_client_method_is_called_in_this_module() -> None:
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    called = {node.args[2].value for node in ast.walk(tree) if isinstance(node, ast.Call)
              and getattr(node.func, "id", None) == "call" and len(node.args) > 2
              and isinstance(node.args[2], ast.Constant)}
    assert called == set(ROUTES)


def test_the_route_table_is_the_services_openapi_schema(server: ServerProcess) -> None:
    schema = httpx.get(server.url + "/openapi.json").json()
    served = {(method.upper(), path) for path, ops in schema["paths"].items() for method in ops}
    declared = {(r.method, r.template) for r in ROUTES.values()}
    assert served - declared == set(), "endpoints the client has no method for"
    assert declared - served == set(), "client routes the service does not have"


def test_health_and_metrics(client: Client, recording: Recording, server: ServerProcess) -> None:
    health = call(client, recording, "health")
    assert isinstance(health, Health) and health.status == "ok" and health.tokenizer == "cl100k_base"
    assert "facts" in health.counts and health.raw == httpx.get(server.url + "/healthz").json()
    text = call(client, recording, "metrics")
    assert isinstance(text, str) and 'memory_requests_total{method="GET",route="/healthz"' in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_pinned_constraint_is_recalled(client: Client, recording: Recording, lang: str) -> None:
    text, query, expected = PINNED[lang]
    change = call(client, recording, "pin", text, namespace=f"pin-{lang}")
    assert isinstance(change, FactChange) and change.stored and all(f.pinned for f in change.stored)
    recalled = call(client, recording, "recall", query, budget=300, namespace=f"pin-{lang}")
    assert isinstance(recalled, Recall) and expected in recalled.rendered
    assert recalled.used_tokens <= recalled.budget == 300
    assert recalled.items[0].tier == "fact" and recalled.items[0].pinned and recalled.items[0].score == 1.0
    assert [i.score for i in recalled.items] == sorted((i.score for i in recalled.items), reverse=True)
    assert recalled.omitted.pinned_over_budget == ()


def test_pin_by_key_and_value(client: Client, recording: Recording) -> None:
    change = call(client, recording, "pin", key="format:dates", value="ISO 8601", namespace="pin-kv")
    assert [(f.key, f.value, f.pinned) for f in change.stored] == [("format:dates", "ISO 8601", True)]
    with pytest.raises(ValueError, match="key= and value="):
        client.pin(key="format:dates", namespace="pin-kv")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_fact_through_its_versions(client: Client, recording: Recording, lang: str) -> None:
    ns = f"facts-{lang}"
    change = call(client, recording, "observe_facts", OBSERVED[lang], source="message m-1", namespace=ns)
    [fact] = change.stored
    assert change.outcomes[0].outcome == "stored" and change.outcomes[0].facts == (fact.id,)
    assert fact.source == "message m-1" and fact.version == 1
    listed = call(client, recording, "list_facts", pinned=fact.pinned, namespace=ns)
    assert [f.id for f in listed.facts] == [fact.id]
    assert call(client, recording, "list_facts", pinned=not fact.pinned, namespace=ns).facts == ()
    unpinned = call(client, recording, "unpin_fact", fact.id, namespace=ns)
    assert not unpinned.pinned and unpinned.version == 2
    pinned = call(client, recording, "pin_fact", unpinned.id, namespace=ns)
    assert pinned.pinned and pinned.version == 3
    history = call(client, recording, "fact_history", pinned.id, namespace=ns)
    assert [(f.version, f.pinned) for f in history.facts] == [(1, fact.pinned), (2, False), (3, True)]
    assert call(client, recording, "delete_fact", pinned.id, namespace=ns).deleted == 3
    with pytest.raises(NotFound):
        client.fact_history(pinned.id, namespace=ns)
    client.observe_facts(OBSERVED[lang], namespace=ns)
    assert call(client, recording, "delete_facts", namespace=ns).deleted == 1
    assert client.list_facts(namespace=ns).facts == ()


def test_memories_are_recalled(client: Client, recording: Recording) -> None:
    stored = call(client, recording, "add_memories", [
        "I moved to Berlin last May.",
        {"text": "我上个月开始学习德语。", "speaker": "Anna", "timestamp": "2026-06-01T10:00:00Z",
         "metadata": {"turn": "D3:4"}}], namespace="memories")
    assert stored.stored == 2 and len(stored.ids) == 2
    recalled = client.recall("Where did I move?", namespace="memories")
    assert any(i.tier == "experience" and i.doc_id in stored.ids and "Berlin" in i.text for i in recalled.items)
    learned = client.recall("我在学什么语言？", namespace="memories")
    assert any("德语" in i.text and i.metadata.get("turn") == "D3:4" for i in learned.items)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_document_round_trips_by_its_id(client: Client, recording: Recording, lang: str) -> None:
    doc_id, text, query = DOCUMENTS[lang]
    ns = f"docs-{lang}"
    added = call(client, recording, "add_document", text, doc_id=doc_id, title="Tides", tags=["energy", "能源"],
                 metadata={"lang": lang}, namespace=ns)
    assert added == DocumentResult(doc_id=doc_id, chunks=1, status="created")
    shown = call(client, recording, "get_document", doc_id, namespace=ns)
    assert (shown.doc_id, shown.title, shown.tags, shown.metadata) == (doc_id, "Tides", ("energy", "能源"),
                                                                       {"lang": lang})
    recalled = client.recall(query, namespace=ns)
    assert "1966" in recalled.rendered and recalled.items[0].doc_id == doc_id
    found = call(client, recording, "search", query, k=3, namespace=ns)
    assert found.results[0].doc_id == doc_id and found.results[0].dense is not None
    assert found.terms and 0.0 <= found.cjk_share <= 1.0
    assert [d.doc_id for d in call(client, recording, "list_documents", namespace=ns).documents] == [doc_id]
    listed = client.list_documents(kind="document", limit=1, offset=0, namespace=ns)
    assert [d.doc_id for d in listed.documents] == [doc_id] and listed.total == 1
    assert client.list_documents(kind="memory", namespace=ns).total == 0
    assert call(client, recording, "delete_document", doc_id, namespace=ns).deleted == doc_id
    with pytest.raises(NotFound) as gone:
        client.get_document(doc_id, namespace=ns)
    assert repr(doc_id) in gone.value.detail


@pytest.mark.parametrize("doc_id", ["..", ".", "a?b#c&d=e", "50% done", "/leading", "a//b"])
def test_ids_that_http_clients_mangle_still_round_trip(client: Client, doc_id: str) -> None:
    client.add_document(f"The document called {doc_id}.", doc_id=doc_id, namespace="odd-ids")
    assert client.get_document(doc_id, namespace="odd-ids").doc_id == doc_id
    assert client.delete_document(doc_id, namespace="odd-ids").deleted == doc_id


def test_files_upload_by_path_and_by_bytes(client: Client, recording: Recording, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    path = write(folder / "潮汐.md", "# 潮汐\n\n朗斯潮汐电站于1966年在布列塔尼投入运行。\n")
    uploaded = call(client, recording, "upload_document", path, tags=["能源"], namespace="uploads")
    assert uploaded == DocumentResult(doc_id="潮汐.md", chunks=1, status="created")
    assert call(client, recording, "upload_document", path, namespace="uploads").status == "unchanged"
    sent = call(client, recording, "upload_document", b"Tidal power notes: La Rance opened in 1966.",
                filename="other/notes.txt", project="tides", namespace="uploads")
    assert sent.doc_id == "other/notes.txt" and sent.status == "created"
    shown = client.get_document("other/notes.txt", namespace="uploads")
    assert shown.project == "tides"
    assert client.get_document("潮汐.md", namespace="uploads").tags == ("能源",)
    with pytest.raises(ValueError, match="filename="):
        client.upload_document(b"no name", namespace="uploads")


def test_a_background_ingest_is_a_job(client: Client, recording: Recording, tmp_path: Path) -> None:
    job = call(client, recording, "add_document", "Background text about tidal power. " * 20, doc_id="bg-1",
               background=True, namespace="jobs")
    assert isinstance(job, Job) and job.namespace == "jobs" and job.state in ("queued", "running", "done")
    deadline = time.monotonic() + 60
    while (current := call(client, recording, "get_job", job.job_id, namespace="jobs")).state != "done":
        assert time.monotonic() < deadline and current.state in ("queued", "running"), current
        time.sleep(0.2)
    assert (current.doc_id, current.status) == ("bg-1", "created")
    assert job.job_id in [j.job_id for j in call(client, recording, "list_jobs", namespace="jobs").jobs]
    left = call(client, recording, "cancel_job", job.job_id, namespace="jobs")  # a finished job stays as it is
    assert left.state == "done"
    upload = client.upload_document(write(tmp_path / "bg.txt", "Uploaded in the background."), background=True,
                                    namespace="jobs")
    assert isinstance(upload, Job)


@pytest.mark.parametrize("task_id", ["t-42", ".."])
def test_a_task_item_is_read_back_page_by_page_and_promoted(client: Client, recording: Recording,
                                                            task_id: str) -> None:
    text = "Step one reads the CSV files. 第二步校验每一行。 " * 20
    added = call(client, recording, "add_task_item", task_id, text, kind="note", metadata={"step": 1},
                 namespace="tasks")
    assert added.key == f"{task_id}/r1" and added.tokens > 20
    [item] = call(client, recording, "list_task_items", task_id, namespace="tasks").items
    assert (item.key, item.kind, item.metadata) == (added.key, "note", {"step": 1})
    assert call(client, recording, "read_task_item", task_id, added.key, namespace="tasks").text == text
    page = client.read_task_item(task_id, added.key, page=2, page_tokens=20, namespace="tasks")
    assert page.page == 2 and page.pages > 2 and page.tokens <= 20
    [promoted] = call(client, recording, "promote", task_id, [added.key], tags=["csv"], namespace="tasks")
    assert promoted.doc_id == f"task:{task_id}:{added.key}" and promoted.status == "created"
    assert client.get_document(promoted.doc_id, namespace="tasks").metadata["key"] == added.key
    assert call(client, recording, "end_task", task_id, namespace="tasks").deleted == 1
    with pytest.raises(NotFound):
        client.list_task_items(task_id, namespace="tasks")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_turn_is_fitted_with_its_constraints(client: Client, recording: Recording, lang: str) -> None:
    rule, said = ("Never use Python 2 syntax. Find papers on tidal power.", "Python 2") if lang == "en" else \
        ("以后不要用Python 2的语法，帮我找潮汐能的论文。", "Python 2的语法")
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": rule},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search_papers", "arguments": "{\"q\": \"tidal\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps([{"id": i, "title": f"Paper {i}"}
                                                                         for i in range(40)])},
        {"role": "user", "content": "Which one is about Brittany?" if lang == "en" else "哪一篇是关于布列塔尼的？",
         "pinned": True}]
    tools = [{"type": "function", "function": {"name": "search_papers", "description": "Search papers.",
                                               "parameters": {"type": "object", "properties": {}}}}]
    fitted = call(client, recording, "context", messages, window=4096, output_reserve=512, task_id=f"ctx-{lang}",
                  system="You are a research assistant.", tools=tools, namespace=f"ctx-{lang}")
    assert isinstance(fitted, Context)
    report = fitted.report
    assert report.tokens.total <= report.budget.available == int((4096 - 512) * (1 - report.budget.margin))
    assert report.task_id == f"ctx-{lang}" and fitted.messages[0]["content"] == "You are a research assistant."
    assert said in fitted.messages[1]["content"] and fitted.messages[-1]["content"] == messages[-1]["content"]
    assert [t["function"]["name"] for t in fitted.tools] == ["search_papers"]
    assert any(m.get("tool_call_id") == "c1" for m in fitted.messages)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_compacted_history_reads_back_as_summary_versions(client: Client, recording: Recording,
                                                            lang: str) -> None:
    rule = "Never use Python 2 syntax in any code." if lang == "en" else "预算不超过500元，只分析A列和B列。"
    messages: list[dict[str, Any]] = [{"role": "user", "content": rule}, {"role": "assistant", "content": "OK."}]
    for t in range(60):
        messages += [{"role": "user", "content": f"Question {t} about sheet sales-{t}.csv?"},
                     {"role": "assistant", "content": f"Sheet sales-{t}.csv holds {400 + t} rows. " * 12}]
    messages.append({"role": "user", "content": "Which sheet had the most rows?"})
    task = f"cmp-{lang}"
    fitted = client.context(messages, window=8192, task_id=task, recall=False, namespace="summaries")
    assert fitted.report.summary is not None and fitted.report.summary.created
    assert "compacted" in [a.kind for a in fitted.report.actions]
    [brief] = call(client, recording, "list_summaries", task, namespace="summaries").summaries
    assert brief.version == fitted.report.summary.version == 1 and brief.summariser == "extractive"
    whole = call(client, recording, "read_summary", task, 1, namespace="summaries")
    assert whole.text in [m["content"] for m in fitted.messages] and whole.references
    with pytest.raises(NotFound):
        client.read_summary(task, 2, namespace="summaries")


def test_deleting_a_namespace_forgets_it(client: Client, recording: Recording) -> None:
    client.pin("预算不超过500元。", namespace="forget-me")
    client.add_document("A note to forget.", doc_id="n1", namespace="forget-me")
    gone = call(client, recording, "delete_namespace", "forget-me")
    assert (gone.facts, gone.documents) == (1, 1)
    assert (client.delete_namespace("forget-me").facts, client.list_documents(namespace="forget-me").documents) == \
        (0, ())


def test_the_clients_namespace_is_the_default_and_a_call_may_name_another(server: ServerProcess) -> None:
    recording = Recording()
    with Client(server.url, namespace="default-ns", transport=recording) as client:
        client.recall("anything")
        client.recall("anything", namespace="other-ns")
        client.list_facts()
    bodies = [json.loads(r.content) for r in recording.requests[:2]]
    assert [b["namespace"] for b in bodies] == ["default-ns", "other-ns"]
    assert recording.requests[2].url.params["namespace"] == "default-ns"
    with Client(server.url) as bare, pytest.raises(ValueError, match="no namespace"):
        bare.recall("anything")


def test_the_address_and_key_come_from_the_environment(server: ServerProcess,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_URL", server.url + "/")
    monkeypatch.setenv("MEMORY_API_KEY", "k-from-env")
    recording = Recording()
    with Client(transport=recording) as client:
        assert client.base_url == server.url and client.health().status == "ok"
    assert recording.requests[0].headers["authorization"] == "Bearer k-from-env"
    monkeypatch.delenv("MEMORY_URL")
    assert Client().base_url == "http://127.0.0.1:8000"


def test_a_given_http_client_is_used_and_left_open(server: ServerProcess) -> None:
    with httpx.Client(base_url=server.url) as http:
        with Client(http_client=http, namespace="given") as client:
            assert client.base_url == server.url and client.health().status == "ok"
        assert not http.is_closed and http.get("/healthz").status_code == 200


def test_fields_a_newer_service_adds_are_kept_in_raw() -> None:
    answer = {"doc_id": "d1", "chunks": 2, "status": "created", "language": "zh"}
    result = decode(DocumentResult, answer)
    assert result == DocumentResult("d1", 2, "created") and result.raw["language"] == "zh"


def test_an_answer_missing_a_field_the_contract_promises_is_an_invalid_answer() -> None:
    with pytest.raises(InvalidAnswer, match="no field 'chunks', which DocumentResult needs"):
        decode(DocumentResult, {"doc_id": "d1", "status": "created"})
    with pytest.raises(InvalidAnswer, match=r"the answer\.items should be a JSON array, got an object"):
        decode(Recall, {"items": {}, "used_tokens": 0, "budget": 0, "rendered": "", "omitted": {}})
