"""Compaction inside context assembly, on the real store, tokenizer and fact rules: the watermark and its debounce,
the layers, constraints never lost across many compactions, forgetting first, versions, references, an edited
history, sub-task isolation, in English and Chinese."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest

from memory.config import Config
from memory.context import ContextRequest, parse_messages
from memory.context.compaction import boundary, instructions
from memory.context.identifiers import identifiers
from memory.context.messages import group
from memory.embedding import Embedder
from memory.experience import MemoryTurn
from memory.service import Memory
from tests.memory.context.chat import call
from tests.memory.context.test_assemble import CONSTRAINTS, SEARCH, agent_trace, check_fits

# Said once, early; the fact rules catch the English one (the constraints block keeps it), not the Chinese one (only
# the summary's constraints can keep it).
IN_PASSING = {"en": "Only analyse columns A and B of that sheet.", "zh": "那个库以后别用了，太慢。"}


def session(turns: int, lang: str = "en") -> list[dict[str, Any]]:
    """agent_trace with the in-passing rule and some identifiers said early on."""
    trace = agent_trace(turns, lang=lang)
    early = [{"role": "user", "content": IN_PASSING[lang]},
             {"role": "assistant", "content": "Noted. I wrote the loader to src/etl/loader.py for ticket JIRA-1183."
              if lang == "en" else "好的。加载脚本已写入 src/etl/loader.py，对应工单 JIRA-1183。"}]
    return [*trace[:3], *early, *trace[3:]]


def compacted(result: Any) -> list[Any]:
    return [a for a in result.report.actions if a.kind == "compacted"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_history_is_summarised_not_cut_and_fits(memory: Memory, lang: str) -> None:
    messages = session(120, lang)
    result = memory.context(ContextRequest("ns", messages, window=8192, tools=[SEARCH], task_id="t1", recall=False))
    check_fits(memory, result)
    report = result.report
    assert compacted(result) and report.summary is not None and report.summary.created
    assert report.summary.version == 1 and report.tokens["summary"] == report.summary.tokens + 4  # + its message
    summary = next(m["content"] for m in result.messages if m["content"] and m["content"].startswith("## Summary"))
    assert summary == memory.tasks.summary("ns", "t1", 1).text
    # Each rule is stated once: the messages that said it are compacted, so the summary holds it (the fact the rules
    # found and the rule they did not); no constraints block repeats a fact of the conversation.
    assert CONSTRAINTS[lang][0] in summary and IN_PASSING[lang] in summary
    assert result.messages[1]["content"] == summary and summary.count(CONSTRAINTS[lang][0]) == 1
    assert "src/etl/loader.py" in summary and "JIRA-1183" in summary
    # The summary keeps within its share of the history's room, and the last turns stay verbatim.
    assert report.summary.tokens <= 0.25 * report.budget.available
    assert result.messages[-1] == messages[-1]
    assert messages[-2] in result.messages and messages[-5] in result.messages
    parse_messages(list(result.messages))  # still a valid sequence: no tool result without its call
    assert "truncated" not in {a.kind for a in report.actions}


def test_compaction_waits_for_the_watermark_and_then_for_it_again(memory: Memory) -> None:
    """Turn by turn, a compaction happens only when the history passes the watermark anew; between two, the
    summary and everything before the new turns are byte for byte the same (the provider's cache keeps them)."""
    runs: list[int] = []
    previous: tuple[Any, ...] | None = None
    kept_prefix = 0
    for n in range(10, 90):
        result = memory.context(ContextRequest("ns", session(n), window=8192, tools=[SEARCH], task_id="grow", recall=False))
        check_fits(memory, result)
        if compacted(result):
            runs.append(n)
        elif previous is not None and result.report.summary is not None:
            shared = 0
            for a, b in zip(previous, result.messages, strict=False):
                if a != b:
                    break
                shared += 1
            kept_prefix += shared >= 3  # system, constraints, summary at least
        previous = result.messages
    assert 2 <= len(runs) <= 20, runs
    assert all(b - a >= 2 for a, b in itertools.pairwise(runs)), runs  # no compaction storm
    versions = memory.tasks.summaries("ns", "grow")
    assert [v.version for v in versions] == list(range(1, len(runs) + 1))
    assert all(v.first == versions[0].first for v in versions)
    assert [v.last for v in versions] == sorted({v.last for v in versions})  # each covers more
    assert kept_prefix >= (80 - len(runs)) * 0.8


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_constraints_survive_fifty_compactions(memory: Memory, lang: str) -> None:
    """A small window and a growing history: every version keeps the constraint the rules found and the one said
    in passing, and so does every assembled turn."""
    made = 0
    for n in range(6, 200, 2):
        result = memory.context(ContextRequest("ns", session(n, lang), window=6144, tools=[SEARCH], task_id=f"c-{lang}",
                                recall=False, output_reserve=1024))
        made += bool(compacted(result))
        text = "\n".join(m["content"] or "" for m in result.messages)
        assert CONSTRAINTS[lang][1] in text and IN_PASSING[lang] in text, n
        if made >= 50:
            break
    versions = memory.tasks.summaries("ns", f"c-{lang}")
    assert len(versions) >= 20
    for v in versions:
        assert IN_PASSING[lang] in v.text or IN_PASSING[lang] in text, v.version
        assert v.tokens <= len(v.text)  # counted, and no empty summary
    # The newest reference leads, item by item, back to the first span's: nothing compacted is out of reach.
    key: str | None = versions[-1].references[-1]
    walked = []
    while key is not None:
        walked.append(key)
        text = memory.tasks.read("ns", f"c-{lang}", key).text
        found = re.search(r"\[the messages before these: task item (\S+)\]$", text)
        key = found.group(1) if found else None
    assert walked[-1] == versions[0].references[0] and len(walked) == len(versions)


def test_identifiers_of_a_compacted_span_are_in_the_summary_or_behind_its_reference(memory: Memory) -> None:
    messages = session(60)
    result = memory.context(ContextRequest("ns", messages, window=8192, task_id="ids", recall=False))
    version = memory.tasks.summary("ns", "ids", result.report.summary.version)
    keys = version.references
    assert keys and all(k in version.text for k in keys)
    behind = "\n".join(memory.tasks.read("ns", "ids", k).text for k in keys)
    covered = [m for m in parse_messages(messages) if version.first <= m.index <= version.last]
    found = {i.text for m in covered for i in identifiers(m.content)}
    assert found and all(i in version.text or i in behind for i in found)
    # The reference reads back page by page.
    page = memory.tasks.read("ns", "ids", keys[0], page=1, page_tokens=200)
    assert page.pages > 1 and page.text in behind


def test_failed_attempts_retried_and_errors_fixed_later_are_forgotten_first(memory: Memory) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Make the tests in tests/test_dates.py pass."},
        {"role": "assistant", "content": None, "tool_calls": [call("a1", "run_tests", '{"path": "tests/"}')]},
        {"role": "tool", "tool_call_id": "a1", "content": "Error: ModuleNotFoundError: No module named 'dateutil'"},
        {"role": "assistant", "content": "The run failed: dateutil is missing from the environment."},
        {"role": "assistant", "content": None, "tool_calls": [call("a2", "run_tests", '{"path": "tests/"}')]},
        {"role": "tool", "tool_call_id": "a2", "content": "12 passed in 0.4s"},
        {"role": "assistant", "content": "Installed dateutil into the environment; all 12 tests passed."},
        {"role": "assistant", "content": "We ruled out pendulum because it is unmaintained."},
    ]
    for t in range(40):
        messages += [{"role": "user", "content": f"Step {t}: explain the fix in more detail."},
                     {"role": "assistant", "content": f"Detail {t}: " + "the parser reads ISO dates. " * 30}]
    messages.append({"role": "user", "content": "Anything left to do?"})
    result = memory.context(ContextRequest("ns", messages, window=6144, output_reserve=1024, task_id="fix", recall=False))
    version = memory.tasks.summary("ns", "fix", result.report.summary.version)
    reasons = {d["reason"].split(":")[0] for d in version.dropped}
    assert {"failed, tried again later", "done later", "rejected option"} <= reasons, version.dropped
    assert "dateutil is missing" not in version.text and "pendulum" not in version.text
    assert "all 12 tests passed" in version.text


def test_an_edited_history_gets_a_new_summary_not_the_stale_one(memory: Memory) -> None:
    messages = session(80)
    first = memory.context(ContextRequest("ns", messages, window=8192, task_id="edit", recall=False))
    assert first.report.summary.version == 1
    edited = [dict(m) for m in messages]
    edited[6] = {**edited[6], "content": "Question 1: what do the papers say about wave power instead?"}
    again = memory.context(ContextRequest("ns", edited, window=8192, task_id="edit", recall=False))
    assert again.report.summary.version == 2 and again.report.summary.created
    assert any("summarised afresh" in w for w in again.report.warnings)
    same = memory.context(ContextRequest("ns", edited, window=8192, task_id="edit", recall=False))
    assert same.report.summary.version == 2 and not same.report.summary.created
    assert same.messages == again.messages


def test_a_smaller_window_writes_a_smaller_summary(memory: Memory) -> None:
    messages = session(100)
    big = memory.context(ContextRequest("ns", messages, window=32768, task_id="shrink", recall=False))
    small = memory.context(ContextRequest("ns", messages, window=6144, output_reserve=1024, task_id="shrink", recall=False))
    check_fits(memory, small)
    assert small.report.summary.created and small.report.summary.version > (big.report.summary.version
                                                                             if big.report.summary else 0)


def test_a_sub_tasks_history_never_enters_its_parents_context(memory: Memory) -> None:
    memory.tasks.add("ns", "parent", "plan", "Survey tidal power stations.")
    child = session(80)
    result = memory.context(ContextRequest("ns", child, window=8192, task_id="child", parent_task_id="parent", recall=False))
    assert result.report.summary is not None
    memory.tasks.add("ns", "child", "result", "Conclusion: La Rance (1966) was the largest for 45 years.")
    parent = memory.context(ContextRequest("ns", [{"role": "user", "content": "What did the survey of La Rance conclude?"}],
                            window=8192, task_id="parent"))
    text = "\n".join(m["content"] or "" for m in parent.messages)
    assert "Conclusion: La Rance (1966)" in text
    assert "## Summary" not in text and "messages[" not in text


def test_compaction_off_leaves_the_oldest_out_as_before(config: Config, embedder: Embedder) -> None:
    with Memory(config.replace("context", compact=False), embedder=embedder) as memory:
        result = memory.context(ContextRequest("ns", session(120), window=8192, task_id="off", recall=False))
    assert result.report.summary is None and "truncated" in {a.kind for a in result.report.actions}


def test_the_boundary_compacts_the_oldest_until_the_rest_fits_and_keeps_the_last_turns() -> None:
    raw = [m for t in range(10) for m in ({"role": "user", "content": f"q{t}"},
                                          {"role": "assistant", "content": "x " * 50})]
    units = group(parse_messages(raw))
    cost = {u.first: 10 if u.messages[0].role == "user" else 100 for u in units}
    assert boundary(units, lambda u: cost[u.first], 4, 10_000) == 0  # everything fits: nothing to compact
    assert boundary(units, lambda u: cost[u.first], 4, 550) == 10  # the oldest go until the rest fits: 5 turns stay
    assert boundary(units, lambda u: cost[u.first], 4, 250, room=500) == 12  # the last 4 turns stay in the room
    assert boundary(units, lambda u: cost[u.first], 4, 250, room=300) == 16  # ... unless they are over it
    assert boundary(units, lambda u: cost[u.first], 0, 0) == len(units) - 1  # the last unit always stays


@pytest.mark.parametrize(("text", "rule"), [
    ("Sure. Don't use that library again, it leaks memory.", "Don't use that library again, it leaks memory."),
    ("好的。以后别用那个库了。", "以后别用那个库了。"),
    ("请只分析A列和B列。谢谢", "请只分析A列和B列。"),
])
def test_instructions_said_in_passing_are_found_in_both_languages(text: str, rule: str) -> None:
    found = instructions(parse_messages([{"role": "user", "content": text},
                                         {"role": "assistant", "content": "Don't worry."}]))
    assert found == [rule]


def test_json_in_the_history_is_never_cut_inside(memory: Memory) -> None:
    blob = json.dumps({"rows": [{"id": f"row-{i}", "value": i} for i in range(40)]})
    messages = [{"role": "system", "content": "Analyst."}]
    for t in range(50):
        messages += [{"role": "user", "content": f"Table {t}?"}, {"role": "assistant", "content": blob}]
    messages.append({"role": "user", "content": "Summarise."})
    result = memory.context(ContextRequest("ns", messages, window=6144, output_reserve=1024, task_id="json", recall=False))
    summary = next(m["content"] for m in result.messages if (m["content"] or "").startswith("## Summary"))
    assert blob[:200] not in summary  # pasted data is not a sentence of the brief
    for m in result.messages[2:]:
        if m["role"] == "assistant" and m["content"] and m["content"].startswith("{"):
            assert json.loads(m["content"])  # what stays verbatim stays whole


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_large_constraints_block_and_a_summary_still_fit_a_small_window(memory: Memory, lang: str) -> None:
    """Many pinned rules leave little for the history; recall must not take the summary's room (it once did, and
    the history's room went below zero)."""
    for i in range(100):
        memory.facts.pin("ns", key=f"rule-{i}", value=f"never touch module m{i} of the legacy billing code"
                         if lang == "en" else f"不要改动旧计费系统的第{i}个模块")
    memory.remember("ns", [MemoryTurn("La Rance opened in 1966.", speaker="user")])
    for n in (60, 90, 120):
        result = memory.context(ContextRequest("ns", session(n, lang), window=6144, output_reserve=1024, task_id=f"big-{lang}"))
        check_fits(memory, result)
        assert result.report.summary is not None and result.report.tokens["constraints"] > 1500


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_pasted_message_does_not_shrink_the_stored_summary(memory: Memory, lang: str) -> None:
    """A turn whose message fills most of the window sends a shortened summary for that turn only; the stored
    version, and what the next turns get, are the summary as it was."""
    messages = session(100, lang)
    first = memory.context(ContextRequest("ns", messages, window=8192, task_id=f"paste-{lang}", recall=False))
    version = first.report.summary.version
    stored = memory.tasks.summary("ns", f"paste-{lang}", version)
    # Sized to leave this turn less room than the stored summary takes.
    line = "line of the build log with details; " if lang == "en" else "构建日志的一行，包含细节；"
    room = first.report.budget.available - first.report.tokens["system"] - first.report.tokens["constraints"]
    pasted = line
    while memory.counter.count(pasted + line) < room - stored.tokens - 12:
        pasted += line
    squeezed = memory.context(ContextRequest("ns", [*messages, {"role": "assistant", "content": "OK."},
                                     {"role": "user", "content": pasted}], window=8192, task_id=f"paste-{lang}",
                              recall=False))
    check_fits(memory, squeezed)
    assert squeezed.report.summary.version == version and not squeezed.report.summary.created
    assert any("stored version is unchanged" in w for w in squeezed.report.warnings)
    sent = next(m["content"] for m in squeezed.messages if (m["content"] or "").startswith("## Summary"))
    assert memory.tasks.summary("ns", f"paste-{lang}", version) == stored
    assert stored.references[-1] in sent and len(sent) < len(stored.text)
    assert [v.version for v in memory.tasks.summaries("ns", f"paste-{lang}")][-1] == version


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_facts_of_compacted_messages_are_in_the_summary_and_pinned_ones_in_the_block(memory: Memory,
                                                                                     lang: str) -> None:
    """A long conversation states many preferences and budgets for different things: those of compacted messages
    are under the summary's User constraints, those of messages still sent are said there only, a fact pinned for the
    whole namespace is in the block; nothing is stated twice and the turn fits a small window."""
    memory.facts.pin("ns", text="Always answer in metric units." if lang == "en" else "一律使用公制单位。")
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a travel assistant."}]
    for i in range(60):
        said = (f"I love hiking near lake number {i}. My budget for trip {i} is ${100 + i}." if lang == "en"
                else f"我喜欢去第{i}号湖边徒步。第{i}次旅行的预算是{100 + i}元。")
        messages += [{"role": "user", "content": said},
                     {"role": "assistant", "content": ("Noted. " if lang == "en" else "好的。") * 40}]
    messages.append({"role": "user", "content": "Plan the next trip." if lang == "en" else "帮我规划下一次旅行。"})
    result = memory.context(ContextRequest("ns", messages, window=8192, task_id=f"cap-{lang}", recall=False))
    check_fits(memory, result)
    block = result.messages[1]["content"]
    assert ("metric units" if lang == "en" else "公制单位") in block and "湖" not in block and "lake" not in block
    summary = next(m["content"] for m in result.messages if (m["content"] or "").startswith("## Summary"))
    text = "\n".join(m["content"] or "" for m in result.messages)
    for i in (0, 30, 59):
        said = f"lake number {i}" if lang == "en" else f"第{i}号湖边"
        assert text.count(said) == 1, said  # said once: in the summary, or in its message
    oldest = "lake number 0" if lang == "en" else "第0号湖边"
    assert oldest in summary and result.report.summary is not None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_larger_window_is_not_held_to_a_small_summary(memory: Memory, lang: str) -> None:
    """A summary written for a small window is not reused when the window grows: the turn is fitted afresh, as
    given when it fits, else with a summary the larger room pays for."""
    messages = session(100, lang)
    small = memory.context(ContextRequest("ns", messages, window=2048, task_id=f"grow-{lang}", recall=False))
    assert small.report.summary is not None and small.report.summary.created
    big = memory.context(ContextRequest("ns", messages, window=32768, task_id=f"grow-{lang}", recall=False))
    check_fits(memory, big)
    assert big.report.summary is None or big.report.summary.tokens > 2 * small.report.summary.tokens
    assert big.report.tokens["total"] > 0.4 * big.report.budget.available


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_models_reading_is_not_shown_unasked_until_it_is_pinned(memory: Memory, lang: str) -> None:
    """A customer's choice the span tagger read (confidence below 1) is kept for the task but, once its message is
    left out, neither the constraints block nor the summary's constraints state it: a misreading must not take a
    small window's room in every turn. The rule's fact of the same conversation is stated; pinned, the model's is."""
    choice = ("Could you put the whole family in economy, please?" if lang == "en" else "麻烦帮我们全部改成经济舱。")
    rule = "Never use emojis in your replies." if lang == "en" else "回复里不要用表情符号。"
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an airline agent."},
                                      {"role": "user", "content": choice}, {"role": "assistant", "content": "OK."},
                                      {"role": "user", "content": rule}, {"role": "assistant", "content": "OK."}]
    for i in range(40):
        messages += [{"role": "user", "content": f"Step {i}: check flight HAT{100 + i}." if lang == "en"
                      else f"第{i}步：查一下航班HAT{100 + i}。"},
                     {"role": "assistant", "content": ("Checked, it is on time. " if lang == "en" else "查过了，准点。") * 30}]
    messages.append({"role": "user", "content": "Go on." if lang == "en" else "继续。"})

    def sent() -> str:
        result = memory.context(ContextRequest("ns", messages, window=4096, task_id=f"model-{lang}", recall=False))
        check_fits(memory, result)
        assert all(m["content"] != choice for m in result.messages)  # its message is left out
        return "\n".join(m["content"] or "" for m in result.messages if m["role"] == "system")

    first = sent()
    (cabin,) = [f for f in memory.facts.list_facts("ns") if f.key == "requirement:cabin"]
    assert (cabin.rule, cabin.certain, cabin.scope) == ("tagger", False, f"session:model-{lang}")
    assert ("emojis" if lang == "en" else "表情符号") in first and cabin.text not in first
    memory.facts.set_pinned("ns", cabin.id, pinned=True)
    assert cabin.text in sent()
