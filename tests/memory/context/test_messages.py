"""Chat messages: checked with the index named, counted by OpenAI's formula, grouped so tool pairs never split."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.context import count_tokens, group, message_tokens, parse_messages
from memory.context.messages import IMAGE_LOW_TOKENS, IMAGE_TOKENS, PER_MESSAGE, PER_NAME, REPLY_PRIMING
from memory.errors import ValidationError
from memory.tokens import TokenCounter, get_counter
from tests.memory.context.chat import call

COUNTER = get_counter("cl100k_base")


HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a careful research assistant."},
    {"role": "user", "content": "以后不要用Python 2的语法。Find papers on tidal energy."},
    {"role": "assistant", "content": None, "tool_calls": [call("c1", arguments='{"q": "tides"}'),
                                                           call("c2", "fetch", '{"id": 7}')]},
    {"role": "tool", "tool_call_id": "c1", "content": '[{"title": "La Rance"}]'},
    {"role": "tool", "tool_call_id": "c2", "content": "朗斯潮汐电站于1966年投入运行。"},
    {"role": "assistant", "content": "Two sources found."},
    {"role": "user", "content": "Summarise them.", "pinned": True},
]


def test_a_history_parses_and_groups_its_tool_pair_into_one_unit() -> None:
    messages = parse_messages(HISTORY)
    assert [m.role for m in messages] == [h["role"] for h in HISTORY]
    assert messages[2].tool_calls[1].name == "fetch" and messages[6].pinned
    units = group(messages)
    assert [[m.index for m in u.messages] for u in units] == [[0], [1], [2, 3, 4], [5], [6]]


@pytest.mark.parametrize(("history", "expected"), [
    ([{"role": "tool", "tool_call_id": "x", "content": "42"}], r"messages\[0\] answers tool call 'x'"),
    ([{"role": "assistant", "content": "", "tool_calls": [call("a")]}, {"role": "user", "content": "hi"}],
     r"messages\[0\] calls tool 'a', but no tool message answers it before messages\[1\]"),
    ([{"role": "assistant", "content": "", "tool_calls": [call("a")]}], r"messages\[0\] calls tool 'a'"),
    ([{"role": "user", "content": "hi"}, {"role": "robot", "content": "beep"}], r"messages\[1\]\.role must be one of"),
    ([{"role": "tool", "content": "42"}], r"messages\[0\] is a tool answer without tool_call_id"),
    ([{"role": "user", "content": "   "}], r"messages\[0\] \(user\) has no content"),
    ([{"role": "user", "content": "\x00\x00"}], r"messages\[0\] \(user\) has no content: it is empty, blank or NUL"),
    ([{"role": "user", "content": [{"text": "no type"}]}], r"messages\[0\]\.content\[0\] must be a content part"),
    ([{"role": "user", "content": "hi", "pinned": "yes"}], r"messages\[0\]\.pinned must be true or false"),
    ([{"role": "user", "content": "你好", "tool_calls": [call("a")]}], r"only an assistant message may call"),
    ([{"role": "assistant", "content": "", "tool_calls": [{"id": "a"}]}], r"messages\[0\]\.tool_calls\[0\] must be"),
    ("not a list", "messages must be a list"),
])
def test_bad_messages_are_refused_naming_the_index(history: Any, expected: str) -> None:
    with pytest.raises(ValidationError, match=expected):
        parse_messages(history)


def test_counts_follow_the_documented_formula_in_english_and_chinese() -> None:
    hello = parse_messages([{"role": "user", "content": "hello"}])
    assert count_tokens(COUNTER, hello) == 8  # OpenAI's own example: "hello" as one user message costs 8
    assert count_tokens(COUNTER, ()) == REPLY_PRIMING
    plain, named = parse_messages([{"role": "user", "content": "预算不超过500元"},
                                   {"role": "user", "content": "预算不超过500元", "name": "alice"}])
    assert message_tokens(COUNTER, plain) == PER_MESSAGE + COUNTER.count("user") + COUNTER.count("预算不超过500元")
    assert message_tokens(COUNTER, named) - message_tokens(COUNTER, plain) == PER_NAME + COUNTER.count("alice")
    messages = parse_messages(HISTORY)
    assert count_tokens(COUNTER, messages) == sum(message_tokens(COUNTER, m) for m in messages) + REPLY_PRIMING
    assert message_tokens(COUNTER, messages[2]) > PER_MESSAGE + COUNTER.count('{"q": "tides"}')


def test_text_parts_are_read_as_their_text() -> None:
    (message,) = parse_messages([{"role": "user", "content": [{"type": "text", "text": "Never use emojis."},
                                                             {"type": "text", "text": "别用表情符号。"}]}])
    assert message.content == "Never use emojis.\n别用表情符号。"


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Valid histories: plain messages and tool-calling turns with all their answers, in any mix."""
    out: list[dict[str, Any]] = []
    serial = 0
    for kind in draw(st.lists(st.sampled_from(["user", "assistant", "tools", "system"]), min_size=1, max_size=25)):
        if kind != "tools":
            out.append({"role": kind, "content": draw(st.sampled_from(["ok", "预算不超过500元", "Never use tabs."]))})
            continue
        ids = []
        for _ in range(draw(st.integers(1, 3))):
            serial += 1
            ids.append(f"call-{serial}")
        out.append({"role": "assistant", "content": None, "tool_calls": [call(i) for i in ids]})
        out += [{"role": "tool", "tool_call_id": i, "content": f"result of {i}"} for i in ids]
    return out


@settings(max_examples=200, deadline=None)
@given(history=histories(), data=st.data())
def test_dropping_any_units_never_orphans_a_tool_message(history: list[dict[str, Any]], data: st.DataObject) -> None:
    messages = parse_messages(history)
    units = group(messages)
    assert [m for u in units for m in u.messages] == list(messages)
    kept = [u for u in units if data.draw(st.booleans())]
    remaining = [history[m.index] for u in kept for m in u.messages]
    parse_messages(remaining)  # raises on any orphaned call or answer
    for unit in units:
        calls = {c.id for c in unit.messages[0].tool_calls}
        assert {m.tool_call_id for m in unit.messages[1:]} == calls


def test_the_counter_is_cl100k() -> None:
    assert isinstance(COUNTER, TokenCounter) and COUNTER.name == "cl100k_base"


def test_what_real_traces_send_is_accepted_and_written_back_as_it_came() -> None:
    """Empty tool answers, `name` on a tool message, text beside calls, several calls, the developer role, and
    content parts of any type (in English and Chinese)."""
    image = {"type": "image_url", "image_url": {"url": "https://example.com/receipt.png", "detail": "low"}}
    raw: list[dict[str, Any]] = [
        {"role": "developer", "content": "Answer briefly. 回答要简短。"},
        {"role": "user", "content": [{"type": "text", "text": "这张收据对吗？"}, image]},
        {"role": "assistant", "content": "Checking both.", "tool_calls": [call("a"), call("b", "fetch")]},
        {"role": "tool", "tool_call_id": "a", "content": "", "name": "search"},
        {"role": "tool", "tool_call_id": "b", "content": None, "name": "fetch"},
        {"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}]},
    ]
    messages = parse_messages(raw, COUNTER)
    assert [m.role for m in messages] == ["developer", "user", "assistant", "tool", "tool", "user"]
    assert messages[1].content == "这张收据对吗？" and messages[1].media == IMAGE_LOW_TOKENS
    assert messages[3].content == "" and messages[3].name == "search"
    audio = COUNTER.count(json.dumps(raw[5]["content"][0], ensure_ascii=False, sort_keys=True, separators=(",", ":")))
    assert messages[5].media == audio and messages[5].content == ""
    assert message_tokens(COUNTER, messages[1]) == (PER_MESSAGE + COUNTER.count("user") + COUNTER.count("这张收据对吗？")
                                                    + IMAGE_LOW_TOKENS)
    full = parse_messages([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], COUNTER)
    assert full[0].media == IMAGE_TOKENS


def test_a_call_id_used_again_names_the_call_just_before_its_answer() -> None:
    # Real agents give a later call an id an earlier one had (τ-bench's traces do): an answer belongs to the
    # assistant message just before it, and is that call's tool.
    messages = parse_messages([
        {"role": "user", "content": "find my booking"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "get_user")]},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1", "get_reservation"), call("c2", "think")]},
        {"role": "tool", "tool_call_id": "c2", "content": ""},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
    ])
    assert [m.tool for m in messages if m.role == "tool"] == ["get_user", "think", "get_reservation"]


@pytest.mark.parametrize("name", ["", "  "])
def test_a_call_without_a_function_name_is_refused_by_its_place(name: str) -> None:
    raw = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [call("c1", name)]},
           {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    with pytest.raises(ValidationError, match=r"messages\[1\]\.tool_calls\[0\]\.function\.name is empty"):
        parse_messages(raw)
