"""bench.agent_traces: eight valid OpenAI tool-calling conversations that hold what real agent traces hold.

The sequence check is written here, independently of memory.context.messages, so that the data cannot lean on the
parser it is meant to exercise.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from bench.agent_traces import AgentTrace, traces
from memory.tokens import get_counter

TRACES = traces()
ROLES = {"system", "developer", "user", "assistant", "tool"}
MIN_TOKENS, MAX_TOKENS = 5_000, 150_000  # the data trace carries a ~2,000-row query result (~75k tokens)


def _text(content: Any) -> str:
    """A message's text: a string, or its text parts joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part["type"] == "text")


def _calls(trace: AgentTrace) -> Iterator[tuple[int, dict[str, Any]]]:
    for index, message in enumerate(trace.messages):
        for call in message.get("tool_calls") or ():
            yield index, call


def _tokens(trace: AgentTrace) -> int:
    """Every text a request with this history sends: the schemas, contents, names, call names and arguments."""
    counter = get_counter("cl100k_base")
    total = sum(counter.count(json.dumps(tool, ensure_ascii=False)) for tool in trace.tools)
    for message in trace.messages:
        total += counter.count(_text(message.get("content"))) + counter.count(message.get("name") or "")
        for call in message.get("tool_calls") or ():
            total += counter.count(call["function"]["name"]) + counter.count(call["function"]["arguments"])
    return total


def _tool_loops(trace: AgentTrace) -> list[int]:
    """For each user turn, how many tool-calling assistant messages follow before the next user message."""
    loops, current = [], 0
    for message in trace.messages[1:]:
        if message["role"] == "user":
            loops.append(current)
            current = 0
        elif message["role"] == "assistant" and message.get("tool_calls"):
            current += 1
    return [*loops, current]


def test_four_traces_per_language_with_unique_names() -> None:
    assert Counter(t.lang for t in TRACES) == {"en": 4, "zh": 4}
    assert len({t.name for t in TRACES}) == len(TRACES)
    assert all(t.name.endswith("-" + t.lang) for t in TRACES)


def test_the_traces_are_the_same_on_every_call() -> None:
    assert traces() == TRACES


@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t.name)
def test_tool_schemas_are_openai_function_schemas(trace: AgentTrace) -> None:
    names = [tool["function"]["name"] for tool in trace.tools]
    assert len(names) == len(set(names)), "a tool name is declared twice"
    for tool in trace.tools:
        assert tool["type"] == "function"
        function = tool["function"]
        assert set(function) == {"name", "description", "parameters"} and function["description"]
        parameters = function["parameters"]
        jsonschema.Draft202012Validator.check_schema(parameters)
        assert parameters["type"] == "object"
        assert set(parameters["required"]) <= set(parameters["properties"])
    called = {call["function"]["name"] for _, call in _calls(trace)}
    assert called <= set(names), f"calls to undeclared tools: {called - set(names)}"


@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t.name)
def test_each_trace_is_a_valid_openai_sequence(trace: AgentTrace) -> None:
    messages = trace.messages
    assert 30 <= len(messages) <= 80
    assert messages[0] == {"role": "system", "content": trace.system}
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in trace.tools}
    pending: dict[str, str] = {}  # call id -> function name, of the assistant message being answered
    seen_ids: set[str] = set()
    for index, message in enumerate(messages):
        where = f"{trace.name} messages[{index}]"
        role = message["role"]
        assert role in ROLES, where
        assert role != "system" or index == 0, f"{where}: a second system message"
        if role != "tool":
            assert not pending, f"{where}: calls {sorted(pending)} are unanswered before a {role} message"
        if role == "tool":
            assert message["tool_call_id"] in pending, f"{where}: answers no open call of the assistant before it"
            name = pending.pop(message["tool_call_id"])
            assert message.get("name", name) == name, f"{where}: name {message['name']!r} is not the call's {name!r}"
            assert isinstance(message["content"], str), where
            if message["content"][:1] in "[{" and message["content"]:
                json.loads(message["content"])  # a result that looks like JSON is JSON
        elif role == "assistant" and message.get("tool_calls"):
            assert message["content"] is None or (isinstance(message["content"], str) and message["content"]), where
            for call in message["tool_calls"]:
                assert call["type"] == "function" and call["id"] not in seen_ids, where
                seen_ids.add(call["id"])
                arguments = call["function"]["arguments"]
                assert isinstance(arguments, str), f"{where}: arguments must be a JSON string"
                jsonschema.validate(json.loads(arguments), schemas[call["function"]["name"]])
                pending[call["id"]] = call["function"]["name"]
        elif role == "user" and not isinstance(message["content"], str):
            for part in message["content"]:
                assert part["type"] in {"text", "image_url"}, where
                assert isinstance(part["text"], str) if part["type"] == "text" else part["image_url"]["url"], where
        else:
            assert isinstance(message["content"], str) and message["content"], where
    assert not pending, f"{trace.name}: the last calls are unanswered"
    assert messages[-1]["role"] == "assistant" and not messages[-1].get("tool_calls")


@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t.name)
def test_every_trace_has_parallel_calls_text_beside_calls_and_a_long_tool_loop(trace: AgentTrace) -> None:
    assert any(len(m.get("tool_calls") or ()) >= 2 for m in trace.messages), "no parallel calls"
    assert max(_tool_loops(trace)) >= 5, f"tool-calling messages per user turn: {_tool_loops(trace)}"
    assert any(m["role"] == "assistant" and m.get("tool_calls") and m["content"] for m in trace.messages), \
        "no assistant text beside calls"
    assert trace.given_ids and trace.constraints


def test_the_set_holds_what_real_traces_hold() -> None:
    messages = [m for t in TRACES for m in t.messages]
    tools = [m for m in messages if m["role"] == "tool"]
    assert any(m["content"] == "" for m in tools), "no empty tool result"
    assert any("name" in m for m in tools) and any("name" not in m for m in tools), "tool messages with and without name"
    assert max(len(m.get("tool_calls") or ()) for m in messages) == 3, "no message with three parallel calls"
    assert sum(any(m["role"] == "developer" for m in t.messages) for t in TRACES) >= 2
    with_images = [t.name for t in TRACES if any(
        isinstance(m["content"], list) and any(p["type"] == "image_url" for p in m["content"])
        for m in t.messages if m["role"] == "user")]
    assert len(with_images) >= 2 and {t.lang for t in TRACES if t.name in with_images} == {"en", "zh"}
    assert any(m["role"] == "user" and prev["role"] == "user" for t in TRACES
               for prev, m in zip(t.messages, t.messages[1:], strict=False)), "no user message sent twice in a row"


def test_results_come_in_every_shape() -> None:
    contents = [m["content"] for t in TRACES for m in t.messages if m["role"] == "tool" and m["content"]]
    parsed = [json.loads(c) for c in contents if c[:1] in "[{"]
    lists = [len(p) for p in parsed if isinstance(p, list)]
    assert max(lists) >= 1_500, "no JSON list of ~2,000 rows"
    assert sum(10 <= n <= 60 for n in lists) >= 5, "search-like lists of 10-60 items"
    assert any(isinstance(p, dict) and any(isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values())
                                           for v in p.values()) for p in parsed), "no nested map like payment_methods"
    assert any("\\u" in c for c in contents), "no result with escaped non-ASCII, as json.dumps writes by default"
    plain = [c for c in contents if c[:1] not in "[{"]
    assert any(len(lines := c.splitlines()) >= 10 and len({line.count(",") for line in lines[:10]}) == 1
               and lines[0].count(",") >= 3 for c in plain), "no CSV result"
    timestamp = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}")
    assert any(sum(bool(timestamp.match(line)) for line in c.splitlines()) >= 50 for c in plain), "no log result"
    counter = get_counter("cl100k_base")
    long_results = [n for c in contents if 2_000 <= (n := counter.count(c)) <= 6_000]
    assert len(long_results) >= 3, f"results of 2,000-6,000 tokens: {long_results}"


@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t.name)
def test_every_given_id_is_said_by_the_user_then_used_in_a_later_call(trace: AgentTrace) -> None:
    for given in trace.given_ids:
        said = [i for i, m in enumerate(trace.messages) if m["role"] == "user" and given in _text(m["content"])]
        assert said, f"{given!r} is in no user message"
        used = [i for i, call in _calls(trace) if i > said[0] and given in call["function"]["arguments"]]
        assert used, f"{given!r} is in no call's arguments after the user said it"


@pytest.mark.parametrize("trace", TRACES, ids=lambda t: t.name)
def test_constraints_are_quoted_from_user_messages(trace: AgentTrace) -> None:
    users = [_text(m["content"]) for m in trace.messages if m["role"] == "user"]
    for phrase in trace.constraints:
        assert any(phrase in text for text in users), f"{phrase!r} is not what a user wrote"


def test_token_totals_are_in_range() -> None:
    totals = {t.name: _tokens(t) for t in TRACES}
    print(f"\n{'trace':<14}{'lang':<6}{'messages':>9}{'tokens':>9}{'tools':>7}")
    for t in TRACES:
        print(f"{t.name:<14}{t.lang:<6}{len(t.messages):>9}{totals[t.name]:>9,}{len(t.tools):>7}")
    assert all(MIN_TOKENS <= n <= MAX_TOKENS for n in totals.values()), totals
    assert max(totals, key=totals.__getitem__) == "data-zh"
