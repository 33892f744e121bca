"""Old and oversized tool results go behind a task-memory reference; every call keeps its answer (real store)."""

from __future__ import annotations

import json
from typing import Any

from memory.context import Message, parse_messages, prune_tool_results
from memory.context.tool_results import placeholder
from memory.service import Memory
from tests.memory.context.chat import dump

ABSTRACT = ("The La Rance tidal power station in Brittany opened in 1966 and was for 45 years the largest of its "
            "kind. Its 24 bulb turbines give a peak output of 240 MW.")
ZH = "朗斯潮汐电站于1966年在布列塔尼投入运行，装有24台灯泡式水轮机，峰值功率240兆瓦。"


def trace(results: list[str]) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "user", "content": "Find sources on tidal power. 请用中文回答。"}]
    for i, text in enumerate(results):
        history.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": f"search_{i % 2}", "arguments": "{}"}}]})
        history.append({"role": "tool", "tool_call_id": f"c{i}", "content": text})
    history.append({"role": "user", "content": "Summarise what you found."})
    return history


def offloader(memory: Memory, stored: dict[str, str]):  # type: ignore[no-untyped-def]
    def offload(message: Message, tool: str) -> str:
        key = memory.tasks.add("ns", "t1", "tool_result", message.content, metadata={"tool": tool}).key
        stored[key] = message.content
        return key
    return offload


def test_older_results_become_placeholders_whose_text_reads_back(memory: Memory) -> None:
    results = [f"{ABSTRACT} (result {i})" if i % 2 else f"{ZH}（第{i}条）" for i in range(6)]
    messages = parse_messages(trace(results))
    stored: dict[str, str] = {}
    out, actions = prune_tool_results(messages, memory.counter, offloader(memory, stored), keep=3)
    assert [a.kind for a in actions] == ["pruned"] * 3
    assert [a.index for a in actions] == [2, 4, 6]  # the three oldest answers, in order
    for action in actions:
        message = out[action.index]
        assert message.role == "tool" and message.tool_call_id == messages[action.index].tool_call_id
        assert message.content == placeholder(action.tool, action.tokens_before, action.key)
        assert action.tool == f"search_{(action.index // 2 - 1) % 2}"
        assert memory.tasks.read("ns", "t1", action.key).text == messages[action.index].content
    assert [m.content for m in out[8:]] == [m.content for m in messages[8:]]  # the recent three untouched
    parse_messages([dump(m) for m in out])  # still a valid sequence: no call without its answer


def test_a_recent_result_over_the_cap_keeps_its_head_and_is_offloaded(memory: Memory) -> None:
    rows = [{"id": i, "title": f"Paper {i}", "abstract": ABSTRACT if i % 2 else ZH} for i in range(60)]
    big = "\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
    messages = parse_messages(trace(["small result", big]))
    stored: dict[str, str] = {}
    out, actions = prune_tool_results(messages, memory.counter, offloader(memory, stored), keep=3, cap_tokens=200)
    (action,) = actions
    assert action.kind == "offloaded" and action.index == 4 and action.tokens_after < action.tokens_before
    head, _, tail = out[4].content.rpartition("\n")
    assert big.startswith(head) and head.count("\n") < big.count("\n")
    assert all(json.loads(line) for line in head.splitlines())  # cut at a line end: no JSON object split
    assert memory.counter.count(head) <= 200 and action.key in tail
    assert memory.tasks.read("ns", "t1", action.key).text == big


def test_nothing_to_do_leaves_every_message_as_it_was(memory: Memory) -> None:
    messages = parse_messages(trace([ABSTRACT, ZH]))
    out, actions = prune_tool_results(messages, memory.counter, offloader(memory, {}), keep=3)
    assert out == messages and actions == ()
