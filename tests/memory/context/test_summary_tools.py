"""What the summary of a tool-heavy span keeps for the agent's next call, within the same budget: the identifiers
tools printed (after those people wrote), call lines in place of the identifiers they show, the far span's
identifiers through later compactions, and the calls that found nothing and the older references dropped first.
Our own agent traces in English and Chinese (bench/agent_traces.py), the real tokenizer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from bench.agent_traces import AgentTrace, traces
from memory.context import parse_messages
from memory.context.summary import GIVEN, Summary, summarise
from memory.tokens import TokenCounter
from tests.memory.context.test_summary_loops import loop

ORDERS = {
    "en": [{"order_id": f"ORD-{n}1730", "customer": "Mia Li", "placed": f"2026-11-{n:02d}", "status": "delivered",
            "lines": [{"sku": f"KB-{n}04", "qty": 2, "price": 49.5}, {"sku": f"MS-{n}10", "qty": 1, "price": 19.0}],
            "payment": {"method_id": f"card_44{n:02d}", "amount": 118.0}} for n in range(1, 6)],
    "zh": [{"订单号": f"DD2026113{n}-88{n}2", "收件人": "李伟", "下单日期": f"2026-11-{n:02d}", "状态": "已签收",
            "商品": [{"商品编号": f"YS-DJ{n}-LX", "数量": 1}], "支付": {"支付单号": f"PAY-77{n}3", "金额": "1299元"}}
           for n in range(1, 6)],
}
ASK = {"en": "Where are my orders? My account is mia_li_3668.", "zh": "我的订单到哪了？账号 mia_li_3668。"}


def order_loop(language: str) -> list[dict[str, Any]]:
    """A user asks; the agent thinks, then looks up five orders, one call each."""
    key = "order_id" if language == "en" else "订单号"
    return loop([("think", {"thought": "Look up each order."}, ""),
                 *(("get_order", {key: o[key]}, json.dumps(o, ensure_ascii=False)) for o in ORDERS[language])],
                ASK[language])


def ids_of(order: dict[str, Any]) -> list[str]:
    """The identifiers of an order a next call would take: its id, dates, skus and payment id."""
    def leaves(value: Any) -> Iterator[str]:
        if isinstance(value, dict):
            for inner in value.values():
                yield from leaves(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from leaves(inner)
        elif isinstance(value, str) and any(c.isdigit() for c in value) and not value.endswith("元"):
            yield value
    return list(leaves(order))


def fits(summary: Summary, counter: TokenCounter, budget: int) -> bool:
    return summary.tokens == counter.count(summary.text) <= budget


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("budget", [250, 400, 800])
def test_what_the_tools_printed_is_kept_after_what_the_user_gave(counter: TokenCounter, language: str,
                                                                 budget: int) -> None:
    summary = summarise(parse_messages(order_loop(language)), counter, budget, references=["t1/r1"])
    assert fits(summary, counter, budget) and summary.sections[GIVEN] == ("mia_li_3668",)
    printed = [i for o in ORDERS[language] for i in ids_of(o)]
    kept = [i for i in printed if i in summary.text]
    assert len(kept) >= min(len(printed), budget // 20), kept  # more as the budget grows: 12, 20, all
    if budget == 250:
        assert "(empty)" not in summary.text  # the call that found nothing goes first
    if budget == 800:  # each order a line, its identifiers not listed again
        assert sum(line.startswith("get_order") for line in summary.sections["Tool calls"]) == 5
        assert not set(printed) & set(summary.sections["Key data"])


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_far_spans_identifiers_survive_a_compaction_that_drops_its_lines(counter: TokenCounter,
                                                                             language: str) -> None:
    first = summarise(parse_messages(order_loop(language)), counter, 800, references=["t1/r1"])
    assert sum(line.startswith("get_order") for line in first.sections["Tool calls"]) == 5
    chatter = [{"role": "user", "content": "Thanks, and the weather in Lisbon?" if language == "en" else "谢谢。"},
               {"role": "assistant", "content": "Sunny, 18 °C." if language == "en" else "晴，18度。"}] * 3
    second = summarise(parse_messages(chatter), counter, 250, prior=first.sections, references=["t1/r2"])
    assert fits(second, counter, 250) and second.sections["References"][-1] == "t1/r2"
    assert len(second.sections["Tool calls"]) < 5  # not every line fits any more
    printed = [i for o in ORDERS[language] for i in ids_of(o)]
    assert sum(i in second.text for i in printed) >= 10  # but their identifiers stay, listed one by one


def test_the_line_the_later_turns_are_about_is_kept_before_the_others(counter: TokenCounter) -> None:
    messages = parse_messages(order_loop("en"))
    later = parse_messages([{"role": "user", "content": "Please return KB-304 from ORD-31730."}])
    summary = summarise(messages, counter, 180, later=later, query="return KB-304 from ORD-31730")
    assert fits(summary, counter, 180)
    assert any("ORD-31730" in line and "MS-310" in line for line in summary.sections["Tool calls"])


def test_older_references_go_before_identifiers_the_newest_stays(counter: TokenCounter) -> None:
    prior = {"References": tuple(f"t1/r{i}" for i in range(1, 40))}
    summary = summarise(parse_messages(order_loop("en")), counter, 250, prior=prior, references=["t1/r40"])
    assert summary.sections["References"][-1] == "t1/r40" and len(summary.sections["References"]) < 5
    assert sum(i in summary.text for o in ORDERS["en"] for i in ids_of(o)) >= 12 and fits(summary, counter, 250)


def test_a_long_listing_takes_at_most_half_the_budget_and_its_line_is_cut_to_fit(counter: TokenCounter) -> None:
    hits = [{"ticket_id": f"TCK-{n:05d}", "title": f"Printer jam {n}", "opened": "2026-11-30"} for n in range(3000)]
    raw = loop([("search_tickets", {"query": "printer"}, json.dumps(hits))], "Any printer tickets? I'm on floor 3.")
    for budget in (150, 300):
        summary = summarise(parse_messages(raw), counter, budget)
        [line] = summary.sections["Tool calls"]
        assert line.startswith('search_tickets {"query": "printer"} → 3000 items: TCK-00000; TCK-00001')
        listed = [d for d in summary.sections["Key data"] if d.startswith("TCK-")]
        assert counter.count("\n".join(f"- {d}" for d in listed)) <= budget // 2 and fits(summary, counter, budget)


def test_people_s_identifiers_are_kept_before_those_tools_printed(counter: TokenCounter) -> None:
    raw = loop([("get_order", {"order_id": "ORD-11730"}, json.dumps(ORDERS["en"][0]))],
               "Refund ORD-11730 to card_4401, and cc ops@example.com.")
    raw.append({"role": "assistant", "content": "I will refund ORD-11730 via card_4401 and copy ops@example.com."})
    summary = summarise(parse_messages(raw), counter, 60)
    assert fits(summary, counter, 60)
    assert all(i in summary.text for i in ("ORD-11730", "card_4401", "ops@example.com"))


def steps(trace: AgentTrace, keep: int = 4) -> Iterator[tuple[list[dict[str, Any]], int, list[str]]]:
    """Each later call of a trace: the messages before it, where the span to compact ends (the last `keep`
    messages stay verbatim, a call with its answers), and the values its arguments take from the span's tool
    results that no message after the span nor the system prompt shows."""
    raw = list(trace.messages[1:])
    for j, message in enumerate(raw):
        if message["role"] != "assistant" or not message.get("tool_calls") or j < keep + 4:
            continue
        cut = j - keep
        while raw[cut]["role"] == "tool":
            cut -= 1
        results = "\n".join(m["content"] for m in raw[:cut] if m["role"] == "tool")
        shown = json.dumps(raw[cut:j], ensure_ascii=False) + trace.system
        needed = [v for c in message["tool_calls"] for v in _scalars(json.loads(c["function"]["arguments"]))
                  if len(v) >= 3 and v in results and v not in shown]
        if needed:
            yield raw[:j], cut, needed


def _scalars(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for inner in value.values():
            yield from _scalars(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _scalars(inner)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield str(value)


@pytest.mark.parametrize(("budget", "share"), [(250, 0.45), (400, 0.6), (600, 0.7)])
def test_our_traces_next_calls_find_what_the_compacted_tool_results_showed(counter: TokenCounter, budget: int,
                                                                           share: float) -> None:
    kept = needed = 0
    languages = set()
    for trace in traces():
        for raw, cut, values in steps(trace):
            messages = parse_messages(raw)
            summary = summarise(messages[:cut], counter, budget, later=messages[cut:], references=["t1/r1"])
            assert fits(summary, counter, budget)
            kept += sum(v in summary.text for v in values)
            needed += len(values)
            languages.add(trace.lang)
    assert languages == {"en", "zh"} and needed >= 50
    assert kept / needed >= share, f"{kept} / {needed}"
