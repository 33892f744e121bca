"""The budget plan of a turn: sent as given under the watermark, shares as caps over it, tools' grant steady, and a
ledger that names the step that overspends."""

from __future__ import annotations

import pytest

from memory.context import budget
from memory.context.allocation import PRESETS
from memory.context.plan import Ledger, Overspent, decide

FIXED = {"system": 1000, "constraints": 50, "current": 30, "pinned_tools": 0}


def test_a_turn_under_the_watermark_goes_as_given_and_retrieval_takes_only_what_is_left() -> None:
    plan = decide(budget(8192, 1024), 0.9, PRESETS["agent"], FIXED, {"tools": 1900, "history": 2000,
                                                                      "tool_results": 500})
    assert plan.as_given and plan.raw == 1080 + 4400 and plan.threshold == int(6451 * 0.9)
    assert plan.retrieval_room() == 6451 - plan.raw
    assert plan.grants({"tools": 1900, "history": 2000}) == {"tools": 1900, "retrieval": 0, "history": 2000,
                                                             "tool_results": 0}


def test_over_the_watermark_the_shares_cap_and_what_one_does_not_use_flows_on() -> None:
    plan = decide(budget(8192, 1024), 0.9, PRESETS["agent"], FIXED, {"tools": 1900, "history": 9000,
                                                                      "tool_results": 9000})
    assert not plan.as_given
    without = plan.grants({"tools": 1900, "retrieval": 0, "history": 9000, "tool_results": 9000})
    with_recall = plan.grants({"tools": 1900, "retrieval": 3000, "history": 9000, "tool_results": 9000})
    assert without["retrieval"] == 0 and without["tools"] > with_recall["tools"]  # retrieval's unused part flowed
    assert plan.pool - 3 <= sum(without.values()) <= plan.pool  # whole tokens, rounded down
    # The tools' grant follows neither the history's size nor the current message: the tool block is cached.
    bigger = decide(budget(8192, 1024), 0.9, PRESETS["agent"], {**FIXED, "current": 900},
                    {"tools": 1900, "history": 20_000, "tool_results": 1})
    assert bigger.tools_grant(1900, 0) == plan.tools_grant(1900, 0)


def test_the_history_room_leaves_a_long_current_message_out_of_the_watermark() -> None:
    plan = decide(budget(8192, 1024), 0.9, PRESETS["agent"], {**FIXED, "current": 3000}, {"history": 9000})
    under, hard = plan.history_room(4050)
    assert under == plan.threshold - 4050 + 3000 and hard == 6451 - 4050


def test_the_ledger_names_the_step_that_overspends() -> None:
    ledger = Ledger(100)
    ledger.spend("read", "system", 60)
    with pytest.raises(Overspent, match="context step 'history' spent 50 tokens on history with 40 of 100 left"):
        ledger.spend("history", "history", 50)
    assert ledger.total == 60
    ledger.set("constraints", "system", 90)
    with pytest.raises(Overspent, match="'again'"):
        ledger.set("again", "system", 101)
    assert ledger.spent == {"system": 90}
