"""Context assembly end to end on the real store, model and tokenizer: budget, order, constraints, offload,
stable prefix, tool selection, processors and errors, in English and Chinese."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.context import count_tokens, parse_messages
from memory.context.constraints import BLOCK_HEADER, RESTATE_PREFIX
from memory.errors import ValidationError
from memory.experience import MemoryTurn
from memory.service import Memory
from tests.memory.context.chat import call

ABSTRACT = ("The La Rance tidal power station in Brittany opened in 1966 and was for 45 years the largest of its "
            "kind. Its 24 bulb turbines give a peak output of 240 MW, and its barrage carries a road across the "
            "estuary of the Rance between Saint-Malo and Dinard.")
ZH = "朗斯潮汐电站于1966年在布列塔尼投入运行，装有24台灯泡式水轮机，峰值功率240兆瓦，大坝上还有一条公路。"
SEARCH = {"type": "function", "function": {"name": "search_papers", "description": "Search scientific abstracts",
                                            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}

CONSTRAINTS = {
    "en": ("By the way, never use Python 2 syntax in any code you give me.", "Python 2"),
    "zh": ("顺便说一下，预算不超过500元。", "500元"),
}


def agent_trace(turns: int, *, lang: str = "en", constraint: bool = True) -> list[dict[str, Any]]:
    """A conversation: a constraint said in passing, then turns of questions, searches and answers."""
    text = ABSTRACT if lang == "en" else ZH
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a research assistant."}]
    if constraint:
        out += [{"role": "user", "content": CONSTRAINTS[lang][0]}, {"role": "assistant", "content": "OK."}]
    for t in range(turns):
        out.append({"role": "user", "content": f"Question {t}: what do the papers say about tidal power?"
                    if lang == "en" else f"第{t}个问题：关于潮汐发电，论文怎么说？"})
        out.append({"role": "assistant", "content": None, "tool_calls": [call(f"c{t}", "search_papers",
                                                                              json.dumps({"q": f"tide {t}"}))]})
        out.append({"role": "tool", "tool_call_id": f"c{t}", "content": "\n".join(f"[{t}.{k}] {text}"
                                                                                  for k in range(6))})
        out.append({"role": "assistant", "content": f"Answer {t}: La Rance opened in 1966." if lang == "en"
                    else f"回答{t}：朗斯电站1966年投入运行。"})
    out.append({"role": "user", "content": "When did La Rance open?" if lang == "en" else "朗斯电站哪一年投入运行？"})
    return out


def check_fits(memory: Memory, result: Any) -> None:
    """The answer is a valid sequence whose counted tokens are the report's total, within the budget."""
    report = result.report
    sent = count_tokens(memory.counter, parse_messages(list(result.messages)))
    tools = sum(memory.counter.count(json.dumps(t, ensure_ascii=False, sort_keys=True, separators=(",", ":")))
                for t in result.tools)
    assert sent + tools == report.tokens["total"] <= report.budget.available
    assert sum(v for k, v in report.tokens.items() if k != "total") == report.tokens["total"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_turn_fits_its_window_with_constraints_first_and_restated(memory: Memory, lang: str) -> None:
    result = memory.context("ns", agent_trace(120, lang=lang), window=8192, tools=[SEARCH], task_id="t1")
    check_fits(memory, result)
    out = result.messages
    assert out[0] == {"role": "system", "content": "You are a research assistant."}
    phrase = CONSTRAINTS[lang][1]
    assert out[1]["role"] == "system" and out[1]["content"].startswith(BLOCK_HEADER) and phrase in out[1]["content"]
    assert out[-2]["content"].startswith(RESTATE_PREFIX) and phrase in out[-2]["content"]
    assert out[-1] == agent_trace(120, lang=lang)[-1]
    kinds = {a.kind for a in result.report.actions}
    # 120 turns do not fit 8k even with their results pruned: the oldest were summarised, none left out.
    assert "compacted" in kinds and "truncated" not in kinds
    assert all(phrase not in m["content"] for m in out[2:-2] if m["role"] == "user")  # its message is summarised
    assert result.report.summary is not None and out[2]["content"].startswith("## Summary")


def test_pruned_results_read_back_and_keep_their_key_on_later_turns(memory: Memory) -> None:
    history = agent_trace(30)
    first = memory.context("ns", history, window=32768, task_id="t1")
    pruned = [a for a in first.report.actions if a.kind == "pruned"]
    assert pruned, "results older than the three most recent, in full batches, are put behind a reference"
    raw = {i: m for i, m in enumerate(history)}
    for action in pruned:
        assert action.key and action.key in first.messages[[m.get("tool_call_id") for m in first.messages].index(
            raw[action.index]["tool_call_id"])]["content"]
        assert memory.tasks.read("ns", "t1", action.key).text == raw[action.index]["content"]
        assert action.tokens_after < action.tokens_before
    later = [*history, {"role": "assistant", "content": "1966."}, {"role": "user", "content": "And its power?"}]
    second = memory.context("ns", later, window=32768, task_id="t1")
    again = {a.index: a.key for a in second.report.actions if a.kind == "pruned"}
    assert all(again[a.index] == a.key for a in pruned)  # the same key: the placeholder text does not change
    assert len(memory.tasks.list_items("ns", "t1")) == len(set(again.values()))  # each text offloaded once


def test_turns_append_to_the_history_and_keep_the_prefix_until_a_constraint_changes(memory: Memory) -> None:
    history = agent_trace(0)
    previous = None
    changes = appended = turns = 0
    for t in range(30):
        history = history[:-1] + agent_trace(t + 1)[-5:]  # the next turn's question, search, answer, question
        result = memory.context("ns", history, window=32768, tools=[SEARCH], task_id="t1")
        check_fits(memory, result)
        if previous is not None:
            turns += 1
            changes += result.report.prefix_hash != previous.report.prefix_hash
            before = [m for m in previous.messages if not str(m["content"]).startswith(RESTATE_PREFIX)][:-1]
            now = [m for m in result.messages if not str(m["content"]).startswith(RESTATE_PREFIX)]
            appended += now[:len(before)] == before
        previous = result
    assert changes == 0
    assert appended / turns >= 0.8, f"history append-only in {appended} of {turns} turns"
    memory.facts.pin("ns", text="Always answer in French.")
    after = memory.context("ns", history, window=32768, tools=[SEARCH], task_id="t1")
    assert after.report.prefix_hash != previous.report.prefix_hash and "French" in after.messages[1]["content"]


@pytest.mark.parametrize(("text", "scope"), [("Only analyse columns A and B for this task.", "session:t9"),
                                               ("这次只分析A列和B列。", "session:t9"),
                                               ("Write a 300-word summary of the paper without commas.", "session:t9"),
                                               ("帮我写一段摘要，不超过100字。", "session:t9"),
                                               ("Never use Python 2 syntax.", "global")])
def test_constraints_in_user_messages_are_observed_into_fact_memory(memory: Memory, text: str, scope: str) -> None:
    history = [{"role": "user", "content": text}, {"role": "assistant", "content": "OK."},
               {"role": "user", "content": "Go on."}]
    result = memory.context("ns", history, window=8192, task_id="t9")
    facts = [f for f in memory.facts.list("ns") if f.scope == scope]
    assert facts, f"no fact was stored under {scope}"
    assert any(f.text in result.messages[0]["content"] for f in facts)
    if scope != "global":  # a request-only constraint binds its task, not the next conversation
        assert not [f for f in memory.facts.list("ns") if f.scope == "global"]
        other = memory.context("ns", [{"role": "user", "content": "Go on."}], window=8192, task_id="t10")
        assert all(f.text not in other.messages[0]["content"] for f in facts)


def test_retrieval_comes_from_memory_and_facts_stay_in_their_block(memory: Memory) -> None:
    memory.add_document("ns", ABSTRACT + "\n\n" + ZH, title="La Rance")
    memory.remember("ns", [MemoryTurn(text="预算不超过500元。", speaker="user")])
    result = memory.context("ns", [{"role": "user", "content": "When did the La Rance tidal station open?"}],
                            window=8192)
    check_fits(memory, result)
    (block, retrieval, question) = result.messages
    assert question["role"] == "user"
    assert block["content"].startswith(BLOCK_HEADER) and "500元" in block["content"]
    assert "1966" in retrieval["content"] and "500元" not in retrieval["content"]
    assert result.report.retrieved >= 1 and result.report.tokens["retrieval"] > 0
    off = memory.context("ns", [{"role": "user", "content": "When did the La Rance tidal station open?"}],
                         window=8192, recall=False)
    assert len(off.messages) == 2 and off.report.tokens["retrieval"] == 0


def test_schemas_over_their_share_keep_the_pinned_and_the_relevant_sorted_by_name(memory: Memory) -> None:
    def tool(name: str, description: str, pinned: bool = False) -> dict[str, Any]:
        props = {f"field_{k}": {"type": "string", "description": f"{description} ({k})"} for k in range(12)}
        return {"type": "function", "pinned": pinned,
                "function": {"name": name, "description": description, "parameters": {"type": "object",
                                                                                      "properties": props}}}
    tools = [tool(f"tool_{k:02d}", f"Does unrelated thing number {k}") for k in range(30)]
    tools += [tool("convert_currency", "Convert an amount of money between currencies"),
              tool("zz_read_file", "Read a file from the workspace", pinned=True)]
    result = memory.context("ns", [{"role": "user", "content": "Convert 20 euros to yen, please."}], window=8192,
                            tools=list(reversed(tools)))
    names = [t["function"]["name"] for t in result.tools]
    assert names == sorted(names) and "zz_read_file" in names and "convert_currency" in names
    assert 0 < len(names) < len(tools) and all("pinned" not in t for t in result.tools)
    (action,) = [a for a in result.report.actions if a.kind == "tools_selected"]
    assert action.index is None and action.tokens_after < action.tokens_before
    assert set(result.report.tools_left_out) == {t["function"]["name"] for t in tools} - set(names)
    check_fits(memory, result)


def test_processors_reduce_results_by_content_unless_a_tool_says_none(memory: Memory) -> None:
    items = [{"id": k, "title": f"Paper {k}", "abstract": ABSTRACT, "authors": ["A", "B"]} for k in range(50)]
    history = [{"role": "user", "content": "Find tidal papers."},
               {"role": "assistant", "content": None, "tool_calls": [call("c1", "search_papers")]},
               {"role": "tool", "tool_call_id": "c1", "content": json.dumps(items)}]
    result = memory.context("ns", history, window=32768, task_id="t1")
    (action,) = [a for a in result.report.actions if a.kind == "processed"]
    assert action.detail == "json_list" and action.index == 2
    assert result.messages[-1]["content"].startswith("50 results, 5 shown")
    assert memory.tasks.read("ns", "t1", action.key).text == json.dumps(items)
    plain = memory.context("ns", history, window=32768, task_id="t1", processors={"search_papers": "none"})
    assert not [a for a in plain.report.actions if a.kind == "processed"]


def test_ephemeral_tool_results_count_only_in_their_turn(memory: Memory) -> None:
    history = [{"role": "user", "content": "几点了？"},
               {"role": "assistant", "content": None, "tool_calls": [call("t1", "get_time")]},
               {"role": "tool", "tool_call_id": "t1", "content": "18:00"},
               {"role": "assistant", "content": "现在是18点。"},
               {"role": "user", "content": "谢谢，再查一下时间。"},
               {"role": "assistant", "content": None, "tool_calls": [call("t2", "get_time")]},
               {"role": "tool", "tool_call_id": "t2", "content": "18:05"}]
    result = memory.context("ns", history, window=8192, ephemeral_tools=["get_time"], recall=False)
    contents = [m["content"] for m in result.messages]
    assert "18:00" not in contents and "18:05" in contents
    assert [a.index for a in result.report.actions if a.kind == "dropped_ephemeral"] == [1, 2]


@pytest.mark.parametrize(("change", "expected"), [
    ({"window": 4200, "system": "You are helpful. " * 200}, "system prompt"),
    ({"allocation": "everything"}, "not a preset"),
    ({"allocation": {"system": 0.5}}, "never cut"),
    ({"allocation": {"history": 0}}, "share of 0"),
    ({"window": "8192"}, "whole number"),
    ({"window": 8192.5}, "whole number"),
    ({"messages": []}, "at least one message"),
    ({"messages": [{"role": "tool", "tool_call_id": "x", "content": "r"}]}, "messages[0]"),
    ({"messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role"),
    ({"processors": {"search_papers": "magic"}}, "not a processor"),
    ({"tools": [{"type": "function", "function": {"description": "no name"}}]}, "tools[0].function.name"),
    ({"ephemeral_tools": "get_time"}, "list of tool names"),
    ({"task_id": "a/b"}, "task"),
])
def test_bad_requests_get_one_sentence_and_change_nothing(memory: Memory, change: dict[str, Any],
                                                          expected: str) -> None:
    request: dict[str, Any] = {"messages": [{"role": "user", "content": "Never use Python 2 syntax."}],
                               "window": 8192, **change}
    messages = request.pop("messages")
    with pytest.raises(ValidationError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        memory.context("ns", messages, **request)
    assert memory.facts.list("ns") == [] and memory.store.counts()["task_items"] == 0


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    texts = st.sampled_from([ABSTRACT, ZH, ABSTRACT * 8, ZH * 20, "ok", "预算不超过500元。", "Never use Python 2."])
    out: list[dict[str, Any]] = []
    serial = 0
    for kind in draw(st.lists(st.sampled_from(["user", "assistant", "tools"]), min_size=1, max_size=40)):
        if kind != "tools":
            out.append({"role": kind, "content": draw(texts), "pinned": draw(st.booleans()) and draw(st.booleans())})
            continue
        calls = []
        for name in draw(st.lists(st.sampled_from(["get_time", "search", "fetch"]), min_size=1, max_size=3)):
            serial += 1
            calls.append(call(f"c{serial}", name))
        out.append({"role": "assistant", "content": None, "tool_calls": calls})
        out += [{"role": "tool", "tool_call_id": c["id"], "content": draw(texts)} for c in calls]
    out.append({"role": "user", "content": draw(texts)})
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories(), window=st.integers(min_value=5000, max_value=40000))
def test_any_history_comes_back_valid_and_within_its_budget(memory: Memory, history: list[dict[str, Any]],
                                                             window: int) -> None:
    try:
        result = memory.context("ns", history, window=window, task_id="t1", ephemeral_tools=["get_time"])
    except ValidationError as error:  # only what is never cut may be refused for size (pinned, the current turn)
        assert any(part in str(error) for part in ("pinned", "current turn", "latest user message")), error
        return
    check_fits(memory, result)


def test_a_processed_result_pruned_later_points_at_its_original(memory: Memory) -> None:
    items = [{"id": k, "title": f"论文{k}", "abstract": ZH} for k in range(40)]
    history = [{"role": "user", "content": "查一下潮汐发电的论文。"},
               {"role": "assistant", "content": None, "tool_calls": [call("first", "search_papers")]},
               {"role": "tool", "tool_call_id": "first", "content": json.dumps(items, ensure_ascii=False)},
               *agent_trace(30, lang="zh", constraint=False)[1:]]
    result = memory.context("ns", history, window=32768, task_id="t1")
    processed = {a.index: a for a in result.report.actions if a.kind == "processed"}
    pruned = {a.index: a for a in result.report.actions if a.kind == "pruned"}
    assert 2 in processed and 2 in pruned and pruned[2].key == processed[2].key
    assert memory.tasks.read("ns", "t1", pruned[2].key).text == history[2]["content"]


def test_a_long_tool_loop_after_the_question_is_pruned_like_any_history(memory: Memory) -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "Summarise the forty log files. 总结这四十个日志文件。"}]
    for i in range(40):
        history += [{"role": "assistant", "content": None, "tool_calls": [call(f"c{i}", "read_file")]},
                    {"role": "tool", "tool_call_id": f"c{i}", "content": " ".join(f"word{j} of file {i}."
                                                                                  for j in range(400))}]
    result = memory.context("ns", history, window=8192, recall=False, task_id="t1")
    check_fits(memory, result)
    assert result.messages[0] == history[0]  # the question stays; the loop's oldest units go behind it
    kinds = {a.kind for a in result.report.actions}
    assert {"pruned", "offloaded"} & kinds
    assert result.messages[-1]["content"].startswith("word0 of file 39.")  # the newest result, its head at least


def test_pinned_tools_are_never_left_out_and_must_fit(memory: Memory) -> None:
    big = {"type": "function", "pinned": True, "function": {"name": "huge", "description": "d " * 20000}}
    with pytest.raises(ValidationError, match="pinned tools"):
        memory.context("ns", [{"role": "user", "content": "go"}], window=8192, recall=False, tools=[big])
    small = {**big, "function": {"name": "huge", "description": "Reads everything."}}
    result = memory.context("ns", [{"role": "user", "content": "go"}], window=8192, recall=False, tools=[small])
    assert [t["function"]["name"] for t in result.tools] == ["huge"]
