"""POST /v1/context: an agent turn in English and in Chinese fitted into its window, every token accounted for,
offloaded tool results readable back, and bad turns refused with a sentence naming the problem."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from memory.config import Config
from memory.errors import NotFoundError
from memory.service import Memory
from tests import local_client

CATEGORIES = ("system", "tools", "constraints", "summary", "retrieval", "history", "tool_results", "current")

_FILES = [{"path": f"data/sales-2026-{m:02d}.csv", "bytes": 10_000 + 137 * m, "rows": 400 + m,
           "columns": ["date", "region", "product", "unit_price", "quantity"]} for m in range(1, 13)] * 4
_PLACES = [{"名称": f"川味小馆{i}号店", "地址": f"北京市朝阳区建国路{i}号", "人均": 60 + 7 * i, "评分": 4.0 + i % 9 / 10}
           for i in range(40)]


def _tool(name: str, description: str, **properties: str) -> dict[str, Any]:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {k: {"type": "string", "description": v}
                                                        for k, v in properties.items()}}}}


def _call(call_id: str, name: str, **arguments: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


TURNS: dict[str, dict[str, Any]] = {
    "en": {
        "namespace": "ctx-en", "task_id": "t-en", "window": 16_000,
        "system": "You are a coding agent working in the user's repository.",
        "tools": [_tool("list_files", "List the files under a folder.", dir="the folder"),
                  _tool("read_file", "Read a text file.", path="the file")],
        "constraint": "Never use Python 2 syntax.",
        "messages": [
            {"role": "user", "content": "Never use Python 2 syntax. Write a loader for the sales CSV files."},
            _call("c1", "list_files", dir="data"),
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(_FILES)},
            _call("c2", "read_file", path="data/sales-2026-01.csv"),
            {"role": "tool", "tool_call_id": "c2",
             "content": "date,region,product,unit_price,quantity\n2026-01-02,north,widget,3.50,12\n"},
            {"role": "assistant", "content": "The files share one header; unit_price is a decimal."},
            {"role": "user", "content": "Which columns hold the prices?"},
        ],
        "next": "And which hold the quantities?",
    },
    "zh": {
        "namespace": "ctx-zh", "task_id": "t-zh", "window": 16_000,
        "system": "你是一个帮用户订餐的助手。",
        "tools": [_tool("search_restaurants", "按城市和菜系搜索餐厅。", city="城市", cuisine="菜系")],
        "constraint": "预算不超过500元。",
        "messages": [
            {"role": "user", "content": "预算不超过500元。帮我找北京的川菜馆。"},
            _call("c1", "search_restaurants", city="北京", cuisine="川菜"),
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(_PLACES, ensure_ascii=False)},
            {"role": "assistant", "content": "找到了40家川菜馆，人均从60元起。"},
            {"role": "user", "content": "哪一家人均最便宜？"},
        ],
        "next": "那家店几点关门？",
    },
}


def _body(turn: dict[str, Any], **changes: Any) -> dict[str, Any]:
    body = {k: turn[k] for k in ("namespace", "task_id", "window", "system", "tools", "messages")}
    return {**body, **changes}


def _fitted(client: TestClient, body: dict[str, Any]) -> dict[str, Any]:
    answer = client.post("/v1/context", json=body)
    assert answer.status_code == 200, answer.text
    fitted: dict[str, Any] = answer.json()
    report = fitted["report"]
    assert sum(report["tokens"][c] for c in CATEGORIES) == report["tokens"]["total"]
    assert report["tokens"]["total"] <= report["budget"]["available"]
    return fitted


@pytest.mark.parametrize("language", sorted(TURNS))
def test_a_turn_that_fits_goes_as_given(client: TestClient, language: str) -> None:
    turn = TURNS[language]
    fitted = _fitted(client, _body(turn))
    messages, report = fitted["messages"], fitted["report"]
    budget = report["budget"]
    assert budget["window"] == turn["window"] and budget["available"] < turn["window"] - budget["output_reserve"]
    assert report["task_id"] == turn["task_id"] and re.fullmatch(r"[0-9a-f]{64}", report["prefix_hash"])
    # Nothing processed, pruned, compacted or left out: the system prompt, then the messages as they came (the rule
    # the user stated is in its own message, not stated twice; a call-only message keeps "content": null).
    assert report["as_given"] and report["actions"] == [] and report["tools_left_out"] == []
    assert messages == [{"role": "system", "content": turn["system"]}, *turn["messages"]]
    assert sorted(t["function"]["name"] for t in fitted["tools"]) == sorted(
        t["function"]["name"] for t in turn["tools"])


@pytest.mark.parametrize("language", sorted(TURNS))
def test_under_pressure_a_turn_fits_and_the_answer_is_a_valid_next_turn(client: TestClient, language: str) -> None:
    turn = TURNS[language]
    fitted = _fitted(client, _body(turn, window=3000))
    messages, report = fitted["messages"], fitted["report"]
    assert not report["as_given"] and messages[0] == {"role": "system", "content": turn["system"]}
    assert messages[-1] == turn["messages"][-1]
    text = "\n".join(m["content"] or "" for m in messages)
    assert turn["constraint"] in text  # in its message, or in what stands for it
    calls = [m for m in messages if m.get("tool_calls")]
    assert calls and all("content" in m and m["content"] is None for m in calls)
    # The long JSON list was reduced or compacted, and its whole text is a task item of the turn's task.
    kept = [a for a in report["actions"] if a["key"]]
    assert kept and {"processed", "pruned", "offloaded", "compacted"} >= {a["kind"] for a in kept}
    assert all(set(a) == {"kind", "index", "tokens_before", "tokens_after", "key", "tool", "detail"}
               for a in report["actions"])
    for action in kept:
        assert action["tokens_after"] < action["tokens_before"]
        item = client.get(f"/v1/tasks/{turn['task_id']}/items/{action['key']}",
                          params={"namespace": turn["namespace"]})
        assert item.status_code == 200, item.text
        original = turn["messages"][action["index"]]["content"]
        assert item.json()["text"] == original if action["kind"] != "compacted" else original in item.json()["text"]
    # What came out is valid input: sent back with a new question, it is accepted and fitted again.
    again = _fitted(client, {"namespace": turn["namespace"], "task_id": turn["task_id"], "window": 3000,
                             "tools": fitted["tools"],
                             "messages": [*messages, {"role": "user", "content": turn["next"]}]})
    assert again["messages"][-1] == {"role": "user", "content": turn["next"]}


def test_the_next_turn_keeps_the_prefix_and_metrics_count_it(client: TestClient) -> None:
    turn = TURNS["en"]
    first = _fitted(client, _body(turn, window=3000))
    follow_up = [*turn["messages"], {"role": "assistant", "content": "unit_price."},
                 {"role": "user", "content": turn["next"]}]
    second = _fitted(client, _body(turn, messages=follow_up, window=3000))
    assert second["report"]["prefix_hash"] == first["report"]["prefix_hash"]  # the provider's cache holds
    changed = _fitted(client, _body(turn, messages=follow_up, system="You are a careful coding agent.", window=3000))
    assert changed["report"]["prefix_hash"] != first["report"]["prefix_hash"]
    text = client.get("/metrics").text
    assert "memory_context_prefix_changes_total 1.0" in text
    counted = {c: 0 for c in CATEGORIES}
    for fitted in (first, second, changed):
        for c in CATEGORIES:
            counted[c] += fitted["report"]["tokens"][c]
    for category in CATEGORIES:
        assert f'memory_context_tokens_total{{category="{category}"}} {float(counted[category])}' in text, category
    assert 'category="total"' not in text
    done = Counter(a["kind"] for f in (first, second, changed) for a in f["report"]["actions"])
    assert done
    for kind, times in done.items():
        assert f'memory_context_actions_total{{kind="{kind}"}} {float(times)}' in text, kind
    # Another task's first turn is no change, whatever its prefix.
    _fitted(client, _body(turn, task_id="t-other", system="Something else entirely."))
    assert "memory_context_prefix_changes_total 1.0" in client.get("/metrics").text


LONG_SYSTEM = "Follow the house rules for every answer, and explain each step before you take it. " * 40


@pytest.mark.parametrize(("changes", "named"), [
    ({"messages": [{"role": "user", "content": "Hi."}, {"role": "tool", "tool_call_id": "c9", "content": "42"}]},
     ["messages[1]", "c9"]),
    ({"messages": [{"role": "robot", "content": "Beep."}]}, ["messages[0]", "role", "robot"]),
    ({"window": 4200, "output_reserve": 4096, "system": LONG_SYSTEM}, ["window", "system prompt"]),
    ({"window": "8192"}, ["window", "integer"]),
    ({"window": 8192.5}, ["window", "integer"]),
    ({"allocation": "huge"}, ["allocation", "huge", "agent"]),
    ({"processors": {"list_files": "magic"}}, ["processors", "magic", "json_list"]),
    ({"colour": "blue"}, ["colour"]),
])
def test_bad_turns_are_refused_in_a_sentence(client: TestClient, changes: dict[str, Any], named: list[str]) -> None:
    answer = client.post("/v1/context", json=_body(TURNS["en"], **changes))
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"] == "ValidationError"
    detail = answer.json()["detail"]
    assert all(word in detail for word in named), detail
    assert "\n" not in detail and "Traceback" not in detail


def test_a_key_cannot_fit_a_turn_in_another_namespace(config: Config, memory: Memory) -> None:
    # API.md: another key's namespace answers 404, exactly as if it did not exist (as /v1/recall does).
    keyed = local_client(create_app(config.replace("auth", keys={"k-alice-7f3a": ["alice"]}), memory))
    alice = {"Authorization": "Bearer k-alice-7f3a"}
    refused = keyed.post("/v1/context", headers=alice, json=_body(TURNS["en"], namespace="bob"))
    assert refused.status_code == 404 and refused.json()["error"] == "NotFound"
    assert keyed.post("/v1/context", json=_body(TURNS["en"], namespace="alice")).status_code == 401
    assert keyed.post("/v1/context", headers=alice, json=_body(TURNS["en"], namespace="alice")).status_code == 200
    assert memory.facts.list_facts("bob") == []  # nothing of the refused turn was observed or offloaded
    with pytest.raises(NotFoundError):
        memory.tasks.list_items("bob", "t-en")


def test_the_schema_documents_the_route(client: TestClient) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/v1/context"]["post"]
    assert operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("ContextPublic")
    assert {"401", "404", "413", "422"} <= set(operation["responses"])


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_compacted_history_is_traced_through_its_versions(client: TestClient, language: str) -> None:
    """A long conversation is compacted; the summary version it reports reads back whole, with its reference."""
    rule, said = (("Never use Python 2 syntax in any code.", "Python 2") if language == "en"
                  else ("预算不超过500元，只分析A列和B列。", "500元"))
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an analyst."},
                                      {"role": "user", "content": rule}, {"role": "assistant", "content": "OK."}]
    for t in range(60):
        messages += [{"role": "user", "content": f"Question {t} about sheet sales-{t}.csv?"},
                     {"role": "assistant", "content": f"Sheet sales-{t}.csv holds {400 + t} rows. " * 12}]
    messages.append({"role": "user", "content": "Which sheet had the most rows?"})
    body = {"namespace": f"cmp-{language}", "task_id": f"cmp-{language}", "window": 8192, "messages": messages,
            "recall": False}
    fitted = _fitted(client, body)
    summary = fitted["report"]["summary"]
    assert summary["created"] and summary["version"] == 1 and summary["summariser"] == "extractive"
    assert fitted["report"]["tokens"]["summary"] > 0
    assert [a["kind"] for a in fitted["report"]["actions"]].count("compacted") == 1
    listed = client.get(f"/v1/tasks/cmp-{language}/summaries", params={"namespace": body["namespace"]})
    assert listed.status_code == 200 and [v["version"] for v in listed.json()["summaries"]] == [1]
    shown = client.get(f"/v1/tasks/cmp-{language}/summaries/1", params={"namespace": body["namespace"]}).json()
    assert shown["text"] in [m["content"] for m in fitted["messages"]]
    assert said in fitted["messages"][1]["content"]  # its message is compacted: the summary, first, states it
    [key] = shown["references"]
    whole = client.get(f"/v1/tasks/cmp-{language}/items/{key}", params={"namespace": body["namespace"]}).json()
    assert "Question 0 about sheet sales-0.csv?" in whole["text"]
    again = _fitted(client, body)  # the same messages: the stored version, byte for byte
    assert not again["report"]["summary"]["created"] and again["messages"] == fitted["messages"]
