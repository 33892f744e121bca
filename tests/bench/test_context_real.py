"""bench/context_real.py: the fixed split, the needed values of a tool call, and a smoke run on real conversations."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench import _tau
from bench.context_real import SPLITS, kept_share, needed_values, run, split_of

needs_data = pytest.mark.skipif(_tau.missing() is not None,
                                reason=f"the data folder is missing: {_tau.missing()}")

SYSTEM = {"role": "system", "content": "You are an airline agent. Today is 2024-05-15. Cancel fees: 150.0 dollars."}
TOOLS = [{"type": "function", "function": {"name": "book", "description": "Book a flight.", "parameters": {
    "type": "object", "properties": {"cabin": {"type": "string", "enum": ["economy", "business"]}}}}}]


def call(arguments: dict[str, Any], call_id: str = "call_1") -> dict[str, Any]:
    """An assistant message calling `book` with these arguments."""
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "book", "arguments": json.dumps(arguments)}}]}


def needed(conversation: list[dict[str, Any]], arguments: dict[str, Any]) -> list[str]:
    """needed_values of a call made after the system prompt and `conversation`."""
    traj = [SYSTEM, *conversation, call(arguments)]
    return needed_values(traj, len(traj) - 1, _tau.fixed_text(traj, TOOLS))


def test_split_is_fixed() -> None:
    assert dict(SPLITS) == {"dev": 1, "held-out": 3}
    for task_id in range(1, 200, 2):
        assert split_of(task_id) == ("held-out" if task_id % 4 == 3 else "dev")
    with pytest.raises(ValueError, match="no split"):
        split_of(4)


@needs_data
def test_split_covers_every_trajectory() -> None:
    trajectories = _tau.load_trajectories()
    held_out = {t.key for t in trajectories if split_of(t.task_id) == "held-out"}
    dev = {t.key for t in trajectories if split_of(t.task_id) == "dev"}
    assert not held_out & dev
    assert held_out | dev == {t.key for t in trajectories}
    assert all(t.task_id % 4 == 3 for t in trajectories if t.key in held_out)
    assert held_out and dev


def test_an_id_the_user_gave_is_needed() -> None:
    said = [{"role": "user", "content": "My reservation is ZFA04Y, user mia_li_3668."}]
    assert needed(said, {"reservation_id": "ZFA04Y", "user_id": "mia_li_3668"}) == ["ZFA04Y", "mia_li_3668"]


def test_values_a_tool_answered_and_nested_ones_are_needed() -> None:
    said = [{"role": "user", "content": "Book it."}, call({"q": "x"}, "call_0"),
            {"role": "tool", "tool_call_id": "call_0", "name": "book", "content": '{"flight": "HAT136", "price": 1234}'}]
    assert needed(said, {"flights": [{"flight_number": "HAT136"}], "amount": 1234}) == ["HAT136", "1234"]


def test_what_the_system_prompt_or_schemas_hold_is_not_needed() -> None:
    said = [{"role": "user", "content": "On 2024-05-15 in economy please, fee 150"}]
    assert needed(said, {"date": "2024-05-15", "cabin": "economy", "fee": 150.0}) == []


def test_booleans_null_short_and_unseen_values_are_not_needed() -> None:
    said = [{"role": "user", "content": "True, None, no, 42 bags, and insurance false"}]
    assert needed(said, {"insurance": False, "ok": True, "x": None, "bags": 42, "note": "never said"}) == []


def test_a_whole_float_counts_written_as_an_integer() -> None:
    said = [{"role": "user", "content": "Pay 300 from gift card 7325."}]
    assert needed(said, {"amount": 300.0, "card": 7325, "tip": 12.5}) == ["300", "7325"]


def test_kept_share_reads_contents_and_arguments() -> None:
    sent = [{"role": "user", "content": [{"type": "text", "text": "ZFA04Y"}]}, call({"user": "mia_li_3668"})]
    assert kept_share(["ZFA04Y", "mia_li_3668", "HAT136"], sent) == pytest.approx(2 / 3)
    assert kept_share([], sent) == 1.0


@needs_data
def test_a_quick_replay_holds_its_floors_on_both_splits_and_our_traces() -> None:
    """A floor, not the figures (bench/RESULTS.md has those): on the first conversations of the held-out split (never
    tuned on), of dev and of our own, nothing is refused, over budget or an invalid sequence; a turn that fits goes
    untouched and keeps every value; under pressure ours keeps at least what recency keeps."""
    result = run([6144, 16384], "all", 8)
    assert list(result["splits"]) == ["held-out", "dev", "own"] and result["refusals"] == []
    for name, split in result["splits"].items():
        assert split["trajectories"] == 8 and split["steps"] > 0
        for window, at in split["windows"].items():
            for manager in ("trim_messages", "recency"):
                peer = at["managers"][manager]
                assert peer["answered"] == peer["steps"] == split["steps"] and peer["kept"] <= peer["needed"]
            ours = at["managers"]["ours"]
            assert ours["refused"] == 0 and ours["over_budget"] == 0 and ours["invalid_sequences"] == 0
            assert ours["miscounted"] == 0 and ours["touched_although_fit"] == 0, (name, window)
            if window == "16384" and name != "own":
                assert ours["kept"] == ours["needed"]
            assert ours["kept_share"] >= at["managers"]["recency"]["kept_share"], (name, window)
