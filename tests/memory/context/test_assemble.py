"""Context assembly end to end on the real store, model and tokenizer: budget, order, constraints, offload,
stable prefix, tool selection, processors and errors, in English and Chinese."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import TextInput
from memory.context import ContextRequest, count_tokens, parse_messages
from memory.context.constraints import BLOCK_HEADER, RESTATE_PREFIX
from memory.errors import ValidationError
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
    result = memory.context(ContextRequest("ns", agent_trace(120, lang=lang), window=8192, tools=[SEARCH], task_id="t1"))
    check_fits(memory, result)
    out = result.messages
    assert out[0] == {"role": "system", "content": "You are a research assistant."}
    phrase = CONSTRAINTS[lang][1]
    # Its message is compacted: the summary, first after the system prompt, states it, and it is restated last.
    assert out[1]["role"] == "system" and out[1]["content"].startswith("## Summary") and phrase in out[1]["content"]
    assert out[-2]["content"].startswith(RESTATE_PREFIX) and phrase in out[-2]["content"]
    assert out[-1] == agent_trace(120, lang=lang)[-1]
    kinds = {a.kind for a in result.report.actions}
    # 120 turns do not fit 8k: the oldest were summarised, none left out.
    assert "compacted" in kinds and "truncated" not in kinds and not result.report.as_given
    assert all(phrase not in m["content"] for m in out[2:-2] if m["role"] == "user")
    assert result.report.summary is not None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_turn_that_fits_goes_as_given(memory: Memory, lang: str) -> None:
    """Under the watermark nothing is processed, pruned, compacted or left out, whatever the shares say: the
    messages go as they came (content parts, names, empty answers and all) and every tool stays."""
    history = agent_trace(12, lang=lang)
    history[3] = {**history[3], "name": "search_papers"}
    history.insert(3 + 1, {"role": "assistant", "content": "Checking.",
                           "tool_calls": [call("e1", "search_papers"), call("e2", "search_papers")]})
    history[5:5] = [{"role": "tool", "tool_call_id": "e1", "content": ""},
                    {"role": "tool", "tool_call_id": "e2", "content": "[]", "name": "search_papers"}]
    history.append({"role": "user", "content": [{"type": "text", "text": "And this one?" if lang == "en" else "这个呢？"},
                                                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]})
    tools = [SEARCH, *({"type": "function", "function": {"name": f"tool_{k}", "description": "x " * 80}}
                       for k in range(40))]
    result = memory.context(ContextRequest("ns", history, window=32768, tools=tools, task_id="t1"))
    check_fits(memory, result)
    assert result.report.as_given and not result.report.actions and not result.report.tools_left_out
    sent = [m for m in result.messages if not (m["role"] == "system" and m["content"] != history[0]["content"])]
    assert sent == [{**m, "content": m.get("content")} for m in history]
    assert len(result.tools) == len(tools)


def test_a_result_too_large_for_the_window_is_reduced_and_read_back_under_the_same_key(memory: Memory) -> None:
    items = [{"id": f"w-{k}", "name": f"widget {k}", "price": round(3 + k % 97 * 0.37, 2), "tags": ["a", f"t{k % 7}"]}
             for k in range(15000)]
    history = [{"role": "user", "content": "Which widgets are cheapest?"},
               {"role": "assistant", "content": None, "tool_calls": [call("c1", "query_db")]},
               {"role": "tool", "tool_call_id": "c1", "content": json.dumps(items)}]
    first = memory.context(ContextRequest("ns", history, window=16384, task_id="t1"))
    check_fits(memory, first)
    (action,) = [a for a in first.report.actions if a.kind == "processed"]
    assert action.index == 2 and action.detail == "json" and action.key
    sent = first.messages[-1]["content"]
    assert sent.startswith("[showing items 1-") and action.key in sent and '"tags":["a","t' in sent
    assert first.report.tokens["total"] > 0.8 * first.report.budget.available  # the room is used, not 5 rows
    assert memory.tasks.read("ns", "t1", action.key).text == history[2]["content"]
    again = memory.context(ContextRequest("ns", [*history, {"role": "assistant", "content": "w-0."},
                                  {"role": "user", "content": "And the next?"}], window=16384, task_id="t1"))
    (later,) = [a for a in again.report.actions if a.kind == "processed"]
    assert later.key == action.key and len(memory.tasks.list_items("ns", "t1")) == 1  # stored once


def test_turns_append_to_the_history_and_keep_the_prefix_until_a_constraint_changes(memory: Memory) -> None:
    history = agent_trace(0)
    previous = None
    changes = appended = turns = 0
    for t in range(30):
        history = history[:-1] + agent_trace(t + 1)[-5:]  # the next turn's question, search, answer, question
        result = memory.context(ContextRequest("ns", history, window=32768, tools=[SEARCH], task_id="t1"))
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
    after = memory.context(ContextRequest("ns", history, window=32768, tools=[SEARCH], task_id="t1"))
    assert after.report.prefix_hash != previous.report.prefix_hash and "French" in after.messages[1]["content"]


@pytest.mark.parametrize("text", ["Only analyse columns A and B for this task.", "这次只分析A列和B列。",
                                  "Write a 300-word summary of the paper without commas.", "帮我写一段摘要，不超过100字。",
                                  "Never use Python 2 syntax.", "代码用 Python 3。"])
def test_constraints_in_user_messages_bind_their_task(memory: Memory, text: str) -> None:
    """What a conversation says is stored for its task (restated nowhere while its message is sent), never for the
    namespace, and goes when the task ends."""
    history = [{"role": "user", "content": text}, {"role": "assistant", "content": "OK."},
               {"role": "user", "content": "Go on."}]
    result = memory.context(ContextRequest("ns", history, window=8192, task_id="t9"))
    facts = memory.facts.list_facts("ns")
    assert facts and {f.scope for f in facts} == {"session:t9"}, facts
    assert [m["content"] for m in result.messages] == [m["content"] for m in history]  # said once: where it was
    other = memory.context(ContextRequest("ns", [{"role": "user", "content": "Go on."}], window=8192, task_id="t10"))
    assert all(f.text not in m["content"] for f in facts for m in other.messages)
    memory.tasks.end_task("ns", "t9")
    assert memory.facts.list_facts("ns") == []


@pytest.mark.parametrize(("text", "items"), [("I'm allergic to peanuts and shellfish.", ("peanuts", "shellfish")),
                                             ("我对花生和芒果过敏。", ("花生", "芒果"))])
def test_a_sentence_that_states_two_facts_is_said_once_in_the_block(memory: Memory, text: str,
                                                                     items: tuple[str, str]) -> None:
    memory.facts.pin("ns", text=text)
    facts = memory.facts.list_facts("ns")
    assert len(facts) == 2 and all(any(i in f.value for f in facts) for i in items)
    result = memory.context(ContextRequest("ns", [{"role": "user", "content": "Dinner ideas?"}], window=8192,
                                           recall=False))
    block = result.messages[0]["content"]
    assert block.startswith(BLOCK_HEADER) and all(block.count(f.text) == 1 for f in facts)


def test_retrieval_comes_from_memory_and_facts_stay_in_their_block(memory: Memory) -> None:
    memory.add_document("ns", TextInput(ABSTRACT + "\n\n" + ZH, title="La Rance"))
    memory.facts.observe("ns", "预算不超过500元。")  # told to the memory: pinned (a remembered turn's would not be)
    result = memory.context(ContextRequest("ns", [{"role": "user", "content": "When did the La Rance tidal station open?"}],
                            window=8192))
    check_fits(memory, result)
    (block, retrieval, question) = result.messages
    assert question["role"] == "user"
    assert block["content"].startswith(BLOCK_HEADER) and "500元" in block["content"]
    assert "1966" in retrieval["content"] and "500元" not in retrieval["content"]
    assert result.report.retrieved >= 1 and result.report.tokens["retrieval"] > 0
    off = memory.context(ContextRequest("ns", [{"role": "user", "content": "When did the La Rance tidal station open?"}],
                         window=8192, recall=False))
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
    result = memory.context(ContextRequest("ns", [{"role": "user", "content": "Convert 20 euros to yen, please."}], window=8192,
                            tools=list(reversed(tools))))
    names = [t["function"]["name"] for t in result.tools]
    assert names == sorted(names) and "zz_read_file" in names and "convert_currency" in names
    assert 0 < len(names) < len(tools) and all("pinned" not in t for t in result.tools)
    (action,) = [a for a in result.report.actions if a.kind == "tools_selected"]
    assert action.index is None and action.tokens_after < action.tokens_before
    assert set(result.report.tools_left_out) == {t["function"]["name"] for t in tools} - set(names)
    check_fits(memory, result)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_processors_reduce_results_by_content_unless_a_tool_says_none(memory: Memory, lang: str) -> None:
    items = [{"id": k, "title": f"Paper {k}" if lang == "en" else f"论文{k}", "abstract": ABSTRACT if lang == "en"
              else ZH, "authors": ["A", "B"]} for k in range(50)]
    history = [{"role": "user", "content": "Find tidal papers." if lang == "en" else "找潮汐发电的论文。"},
               {"role": "assistant", "content": None, "tool_calls": [call("c1", "search_papers")]},
               {"role": "tool", "tool_call_id": "c1", "content": json.dumps(items, ensure_ascii=False)}]
    fits = memory.context(ContextRequest("ns", history, window=32768, task_id="t1"))
    assert fits.report.as_given and not fits.report.actions  # under the watermark: nothing is processed
    result = memory.context(ContextRequest("ns", history, window=4096, task_id="t1"))
    check_fits(memory, result)
    (action,) = [a for a in result.report.actions if a.kind == "processed"]
    assert action.detail == "json" and action.index == 2
    sent = result.messages[-1]["content"]
    first = sent.splitlines()[0]
    assert first.startswith("[") and ("abstract" in first or "of 50" in first)  # it says what it left out
    assert '"id":0,' in sent and '"authors":["A","B"]' in sent  # no field of an item it shows is dropped
    assert memory.tasks.read("ns", "t1", action.key).text == history[2]["content"]
    plain = memory.context(ContextRequest("ns", history, window=4096, task_id="t1", processors={"search_papers": "none"}))
    assert not [a for a in plain.report.actions if a.kind == "processed"]
    check_fits(memory, plain)


def test_ephemeral_tool_results_count_only_in_their_turn(memory: Memory) -> None:
    history = [{"role": "user", "content": "几点了？"},
               {"role": "assistant", "content": None, "tool_calls": [call("t1", "get_time")]},
               {"role": "tool", "tool_call_id": "t1", "content": "18:00"},
               {"role": "assistant", "content": "现在是18点。"},
               {"role": "user", "content": "谢谢，再查一下时间。"},
               {"role": "assistant", "content": None, "tool_calls": [call("t2", "get_time")]},
               {"role": "tool", "tool_call_id": "t2", "content": "18:05"}]
    result = memory.context(ContextRequest("ns", history, window=8192, ephemeral_tools=["get_time"], recall=False))
    contents = [m["content"] for m in result.messages]
    assert "18:00" not in contents and "18:05" in contents
    assert [a.index for a in result.report.actions if a.kind == "dropped_ephemeral"] == [1, 2]


@pytest.mark.parametrize(("change", "expected"), [
    ({"window": 1000, "system": "You are helpful. " * 200}, "system prompt"),
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
        memory.context(ContextRequest("ns", messages, **request))
    assert memory.facts.list_facts("ns") == [] and memory.store.db.execute("SELECT count(*) FROM task_items").fetchone()[0] == 0


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
        result = memory.context(ContextRequest("ns", history, window=window, task_id="t1", ephemeral_tools=["get_time"]))
    except ValidationError as error:  # only what is never cut may be refused for size (pinned, the current turn)
        assert any(part in str(error) for part in ("pinned", "current turn", "latest user message")), error
        return
    check_fits(memory, result)


def test_a_processed_result_pruned_later_points_at_its_original(memory: Memory) -> None:
    items = [{"id": k, "title": f"论文{k}", "abstract": ZH} for k in range(40)]
    history = [{"role": "user", "content": "查一下潮汐发电的论文。"},
               {"role": "assistant", "content": None, "tool_calls": [call("first", "search_papers")]},
               {"role": "tool", "tool_call_id": "first", "content": json.dumps(items, ensure_ascii=False)},
               {"role": "user", "content": "哪篇讲布列塔尼？"}]
    result = memory.context(ContextRequest("ns", history, window=4096, task_id="t1", recall=False))
    (processed,) = [a for a in result.report.actions if a.kind == "processed"]
    pinned = [{**history[0], "pinned": True}, *history[1:3], {"role": "user", "content": "哪篇讲布列塔尼？" * 200}]
    squeezed = memory.context(ContextRequest("ns", pinned, window=4096, task_id="t1", recall=False))
    (pruned,) = [a for a in squeezed.report.actions if a.kind == "pruned"]
    assert pruned.key == processed.key and memory.tasks.read("ns", "t1", pruned.key).text == history[2]["content"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_tool_loop_after_the_question_is_compacted_naming_its_calls(memory: Memory, lang: str) -> None:
    history: list[dict[str, Any]] = [{"role": "user", "content": "Summarise the forty log files." if lang == "en"
                                      else "总结这四十个日志文件。"}]
    for i in range(40):
        line = f"word{{j}} of file {i}." if lang == "en" else f"第{i}个文件的第{{j}}个词。"
        history += [{"role": "assistant", "content": None,
                     "tool_calls": [call(f"c{i}", "read_file", json.dumps({"path": f"/var/log/app-{i}.log"}))]},
                    {"role": "tool", "tool_call_id": f"c{i}", "content": " ".join(line.replace("{j}", str(j))
                                                                                  for j in range(400))}]
    result = memory.context(ContextRequest("ns", history, window=8192, recall=False, task_id="t1"))
    check_fits(memory, result)
    assert result.messages[0] == history[0]  # the question stays; the loop's oldest units are summarised after it
    assert "compacted" in {a.kind for a in result.report.actions}
    summary = next(m["content"] for m in result.messages if (m["content"] or "").startswith("## Summary"))
    # The calls are named with their arguments and findings, not only a reference (the most salient that fit).
    assert summary.count('read_file {"path": "/var/log/app-') >= 3
    newest = result.messages[-1]["content"]  # the newest result, whole, or reduced with its whole text behind a key
    key = re.search(r"task item (\S+)\]$", newest)
    assert newest == history[-1]["content"] or (
        key is not None and memory.tasks.read("ns", "t1", key.group(1)).text == history[-1]["content"])
    assert newest.startswith(history[-1]["content"][:40])


def test_pinned_tools_are_never_left_out_and_must_fit(memory: Memory) -> None:
    big = {"type": "function", "pinned": True, "function": {"name": "huge", "description": "d " * 20000}}
    with pytest.raises(ValidationError, match="pinned tools"):
        memory.context(ContextRequest("ns", [{"role": "user", "content": "go"}], window=8192, recall=False, tools=[big]))
    small = {**big, "function": {"name": "huge", "description": "Reads everything."}}
    result = memory.context(ContextRequest("ns", [{"role": "user", "content": "go"}], window=8192, recall=False, tools=[small]))
    assert [t["function"]["name"] for t in result.tools] == ["huge"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_retrieval_searches_for_what_the_task_is_about(memory: Memory, lang: str) -> None:
    """A generic latest message ("write the full plan") is searched with the first one, which says what the task is
    about; a query that finds nothing relevant adds nothing."""
    memory.add_document("ns", TextInput(ABSTRACT if lang == "en" else ZH, title="La Rance"))
    for k, (en, zh) in enumerate([("Quarterly sales of garden furniture rose in the north region.",
                                   "北方地区花园家具的季度销量上升。"),
                                  ("The office moves to the third floor in spring.", "办公室春天搬到三楼。"),
                                  ("Invoices are paid within thirty days.", "发票在三十天内付清。"),
                                  ("The cafeteria serves soup on Mondays.", "食堂每周一供应汤。")]):
        memory.add_document("ns", TextInput(en if lang == "en" else zh, title=f"Other {k}"))
    first = ("Plan a field trip to the La Rance tidal power station." if lang == "en"
             else "安排一次去朗斯潮汐电站的考察。")
    history = [{"role": "user", "content": first}, {"role": "assistant", "content": "OK."},
               {"role": "user", "content": "Write the full plan." if lang == "en" else "写出完整的计划。"}]
    # The default encoder is English: Chinese passages score lower, and the test asks for less (min_score).
    floor = None if lang == "en" else 0.1
    result = memory.context(ContextRequest("ns", history, window=8192, min_score=floor))
    retrieval = [m["content"] for m in result.messages if m["role"] == "system"]
    assert retrieval and ("1966" in retrieval[0]) and ("furniture" not in retrieval[0] and "家具" not in retrieval[0])
    alone = memory.context(ContextRequest("ns", history[-1:], window=8192, min_score=floor))  # the generic message alone
    assert all("1966" not in m["content"] for m in alone.messages)
    nothing = memory.context(ContextRequest("ns", [{"role": "user", "content": "zzqx vlorp?"}], window=8192))
    assert nothing.report.retrieved == 0 and nothing.report.tokens["retrieval"] == 0


def test_the_read_tool_is_offered_counted_and_cannot_be_shadowed(memory: Memory) -> None:
    history = [{"role": "user", "content": "go"}]
    result = memory.context(ContextRequest("ns", history, window=8192, recall=False, read_tool=True, tools=[SEARCH]))
    assert [t["function"]["name"] for t in result.tools] == ["search_papers", "memory_read"]
    check_fits(memory, result)
    mine = {"type": "function", "function": {"name": "memory_read", "description": "my own"}}
    with pytest.raises(ValidationError, match="read tool's name"):
        memory.context(ContextRequest("ns", history, window=8192, recall=False, read_tool=True, tools=[mine]))
    assert memory.context(ContextRequest("ns", history, window=8192, recall=False, tools=[mine])).tools[0]["function"] == \
        mine["function"]


def test_under_pressure_the_tools_the_history_called_stay(memory: Memory) -> None:
    tools = [{"type": "function", "function": {"name": f"tool_{k:02d}", "description": "does a thing " * 60}}
             for k in range(60)]
    history: list[dict[str, Any]] = [{"role": "user", "content": "Start."}]
    for k in (3, 17, 29):
        history += [{"role": "assistant", "content": None, "tool_calls": [call(f"c{k}", f"tool_{k:02d}")]},
                    {"role": "tool", "tool_call_id": f"c{k}", "content": "ok"}]
    history.append({"role": "user", "content": "Next."})
    result = memory.context(ContextRequest("ns", history, window=8192, recall=False, task_id="called", tools=tools))
    kept = {t["function"]["name"] for t in result.tools}
    assert result.report.tools_left_out and {"tool_03", "tool_17", "tool_29"} <= kept
    again = memory.context(ContextRequest("ns", [*history, {"role": "assistant", "content": "OK."},
                                  {"role": "user", "content": "Something else entirely."}],
                           window=8192, recall=False, task_id="called", tools=tools))
    assert again.report.prefix_hash == result.report.prefix_hash  # the selection is kept while it fits
