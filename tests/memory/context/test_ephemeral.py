"""Ephemeral messages and tools: used in their own turn, dropped from later ones, never orphaning a call."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memory.context import drop_ephemeral, parse_messages
from tests.memory.context.chat import call, dump

HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "What time is it, and find papers on tides."},
    {"role": "assistant", "content": None, "tool_calls": [call("t1", "clock"), call("s1", "search")]},
    {"role": "tool", "tool_call_id": "t1", "content": "2026-12-01T18:00:00Z"},
    {"role": "tool", "tool_call_id": "s1", "content": "La Rance, 1966."},
    {"role": "user", "content": "今天北京天气如何？", "ephemeral": True},
    {"role": "assistant", "content": "晴，5度。"},
    {"role": "user", "content": "And the time now?"},
    {"role": "assistant", "content": None, "tool_calls": [call("t2", "clock")]},
    {"role": "tool", "tool_call_id": "t2", "content": "2026-12-01T18:05:00Z"},
]


def test_earlier_turns_lose_their_ephemeral_messages_and_tool_answers() -> None:
    out, dropped = drop_ephemeral(parse_messages(HISTORY), tools={"clock"})
    assert [(d.index, d.tool) for d in dropped] == [(2, "clock"), (4, None)]
    assert [m.index for m in out] == [0, 1, 3, 5, 6, 7, 8]
    assert [c.name for c in out[1].tool_calls] == ["search"]  # the clock call left with its answer
    assert out[-1].content == "2026-12-01T18:05:00Z"  # this turn's clock result is used
    parse_messages([dump(m) for m in out])


def test_a_call_left_with_nothing_goes_with_its_answers() -> None:
    history = [
        {"role": "user", "content": "几点了？"},
        {"role": "assistant", "content": None, "tool_calls": [call("t1", "clock")]},
        {"role": "tool", "tool_call_id": "t1", "content": "18:00"},
        {"role": "assistant", "content": "现在是18点。"},
        {"role": "user", "content": "谢谢。"},
    ]
    out, dropped = drop_ephemeral(parse_messages(history), tools={"clock"})
    assert [d.index for d in dropped] == [1, 2] and [m.index for m in out] == [0, 3, 4]


def test_without_ephemeral_anything_nothing_changes() -> None:
    messages = parse_messages([h for h in HISTORY if not h.get("ephemeral")])
    out, dropped = drop_ephemeral(messages)
    assert out == messages and dropped == ()


@st.composite
def flagged_histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    serial = 0
    for kind in draw(st.lists(st.sampled_from(["user", "assistant", "tools"]), min_size=1, max_size=20)):
        flag = draw(st.booleans())
        if kind != "tools":
            out.append({"role": kind, "content": "预算不超过500元", "ephemeral": flag})
            continue
        names = draw(st.lists(st.sampled_from(["clock", "search", "fetch"]), min_size=1, max_size=3))
        calls = []
        for name in names:
            serial += 1
            calls.append(call(f"c{serial}", name))
        out.append({"role": "assistant", "content": draw(st.sampled_from([None, "checking"])), "tool_calls": calls,
                    "ephemeral": flag})
        out += [{"role": "tool", "tool_call_id": c["id"], "content": "r", "ephemeral": draw(st.booleans())}
                for c in calls]
    return out


@settings(max_examples=200, deadline=None)
@given(history=flagged_histories())
def test_the_result_is_always_a_valid_sequence(history: list[dict[str, Any]]) -> None:
    messages = parse_messages(history)
    out, dropped = drop_ephemeral(messages, tools={"clock"})
    parse_messages([dump(m) for m in out])
    assert len(out) + sum(1 for d in dropped if d.index not in {m.index for m in out}) == len(messages)
