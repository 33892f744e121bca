"""A call's line in a compacted span: what its result holds that a next call needs (ids, codes, names, dates) before
counts, times and prices, in the result's shape and within a size that scales; what a result printed; which lines
found nothing; a line cut to fit. English and Chinese."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from memory.context import parse_messages
from memory.context.tool_calls import DETAIL, IDS, call_lines, informative, printed, shorten
from tests.memory.context.chat import call

ORDER = {"order_id": "ORD-88213", "customer": {"first_name": "Mia", "last_name": "Li"}, "status": "shipped",
         "items": [{"sku": "KB-204", "qty": 2, "price": 49.5, "ship_date": "2026-12-03", "warehouse": "SEA",
                    "ship_time": "14:00:00"},
                   {"sku": "MS-310", "qty": 1, "price": 19.0, "ship_date": "2026-12-05", "warehouse": "PDX",
                    "ship_time": "09:30:00"}],
         "payments": {"card_4421": {"brand": "visa", "amount": 118}, "gift_77": {"amount": 0.5}},
         "created_at": "2026-11-30T10:00:00", "loyalty_points": 1180}
ORDER_ZH = {"订单号": "DD20261130-8842", "状态": "已发货", "收件人": "李伟", "金额": "1299元",
            "商品": [{"商品编号": "YS-DJ2026-LX", "数量": 1, "仓库": "嘉兴仓"}], "物流单号": "SF1234567890"}
HITS = [{"ticket_id": f"TCK-{n}", "city": "Lisbon", "title": f"Printer jam on floor {n}", "priority": "low",
         "opened": f"2026-11-{n:02d}", "views": 100 + n} for n in range(1, 13)]


def line(tool: str, arguments: dict[str, Any], result: Any, *forms: tuple[int, int]) -> tuple[str, ...]:
    """The call's line in each form, as one assistant call and its answer."""
    raw = [{"role": "assistant", "content": None,
            "tool_calls": [call("c1", tool, json.dumps(arguments, ensure_ascii=False))]},
           {"role": "tool", "tool_call_id": "c1",
            "content": result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)}]
    [lines] = call_lines(parse_messages(raw), forms or ((160, DETAIL),))
    return lines


def found(text: str) -> str:
    return text.split(" → ", 1)[1]


def test_a_record_keeps_its_ids_codes_names_and_dates_per_item_before_counts_times_and_prices() -> None:
    ids, detail = (found(f) for f in line("get_order", {"order_id": "ORD-88213"}, ORDER, (220, IDS), (600, DETAIL)))
    for value in ("ORD-88213", "Mia Li", "KB-204", "2026-12-03", "SEA", "MS-310", "2026-12-05", "PDX",
                  "card_4421", "gift_77"):
        assert value in ids, value
    for value in ("49.5", "14:00:00", "1180", "visa", "shipped"):
        assert value not in ids, value
    # grouped as the result is: each item's values together, under the key that holds them
    assert "items [KB-204 2026-12-03 SEA; MS-310 2026-12-05 PDX]" in ids
    assert ids.startswith("order_id ORD-88213; customer Mia Li;")
    # with room, the details too: a number in an item goes with its key
    for value in ("qty 2", "price 49.5", "14:00:00", "shipped", "loyalty_points 1180"):
        assert value in detail, value


def test_a_chinese_record_keeps_its_order_number_recipient_and_tracking_number() -> None:
    [text] = line("查询订单", {"订单号": "DD20261130-8842"}, ORDER_ZH, (120, IDS))
    for value in ("订单号 DD20261130-8842", "收件人 李伟", "YS-DJ2026-LX", "物流单号 SF1234567890"):
        assert value in found(text), value
    assert "1299元" not in found(text) and "已发货" not in found(text)  # an amount and a status: details


@pytest.mark.parametrize("chars", [80, 160, 320, 640])
def test_a_finding_fits_its_size_and_a_larger_size_keeps_more(chars: int) -> None:
    [small, large] = (found(f) for f in line("list_tickets", {"city": "Lisbon"}, HITS, (chars, DETAIL),
                                             (2 * chars, DETAIL)))
    assert len(small) <= chars + len("12 items: ") and len(large) <= 2 * chars + len("12 items: ")
    assert small.startswith("12 items: TCK-1") and len(large) > len(small)
    assert set(small.replace(";", " ").split()) <= set(large.replace(";", " ").split())
    assert "Lisbon" not in large  # each item repeats the call's argument: left out


def test_a_listing_gives_every_items_id_before_any_items_other_values() -> None:
    text = found(line("list_tickets", {"city": "Lisbon"}, HITS, (200, DETAIL))[0])
    assert all(f"TCK-{n}" in text for n in range(1, 13))
    assert text.count("2026-11-") < 12  # the dates come after every id, while they fit


def test_printed_gives_a_records_identifiers_and_a_listings_ids() -> None:
    record = printed(json.dumps(ORDER))
    assert record[:3] == ("ORD-88213", "Mia", "Li") and {"KB-204", "2026-12-03", "SEA", "card_4421"} <= set(record)
    assert "49.5" not in record and "14:00:00" not in record and "shipped" not in record
    assert printed(json.dumps(HITS)) == tuple(f"TCK-{n}" for n in range(1, 13))
    assert printed(json.dumps(ORDER_ZH, ensure_ascii=False))[:3] == ("DD20261130-8842", "李伟", "YS-DJ2026-LX")
    assert printed("Deployed build 7f3a9c2 to /srv/app/releases/42 at 2026-12-01 10:02.") == (
        "7f3a9c2", "/srv/app/releases/42", "2026-12-01 10:02")
    assert printed('{"error": "not found", "order_id": "ORD-1"}') == ("ORD-1",) and printed("") == ()


@pytest.mark.parametrize(("result", "has_data"), [
    ("", False), ("1023.0", False), ("3 passed in 0.38s", False), ("done\nall good\n", False),
    (json.dumps({"status": "queued"}), True), ("Error: seat 22D is taken", True), (json.dumps(ORDER), True),
    ("订单 DD20261130-8842 已发货", True),
])
def test_informative_tells_a_line_that_found_something_from_one_that_found_nothing(result: str,
                                                                                   has_data: bool) -> None:
    assert informative(line("tool", {"q": 1}, result)[0]) is has_data


def test_a_line_is_cut_at_a_separator_and_marked() -> None:
    [text] = line("get_order", {"order_id": "ORD-88213"}, ORDER, (400, DETAIL))
    half = shorten(text, 2)
    assert half is not None and half.endswith(" …") and half.startswith('get_order {"order_id": "ORD-88213"} → ')
    assert len(found(half)) <= len(found(text)) // 2 + 2 and found(text).startswith(found(half)[:-2])
    assert shorten("think {} → (empty)", 4) is None


@pytest.mark.parametrize("result", [
    json.dumps([{"sku": f"SKU-{n}", "qty": n} for n in range(200_000)]),
    '{"id": "N-1", "child": ' * 900 + '"x"' + "}" * 900,
    "[" * 100_000 + "]" * 100_000,
], ids=["long", "deep", "deeper than JSON reads"])
def test_a_huge_result_is_read_in_bounded_time(result: str) -> None:
    started = time.perf_counter()
    [text] = line("dump", {}, result, (400, DETAIL))
    # A bound on growth, not a speed target: a reading that grew with the result's square would take minutes, and
    # a machine busy with other work must not fail the linear one (bench/ has the timings).
    assert time.perf_counter() - started < 6.0 and len(found(text)) <= 420
