"""The JSON processor on the real tokenizer: every key and identifier kept, lists cut to the room, prose shortened,
the note outside the JSON, in English and Chinese, and fast on a 2 MB result."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from memory.context.processors import JsonValue, Processed
from memory.tokens import TokenCounter

NOTES_EN = ("Mia prefers aisle seats on morning flights and has asked twice to be rebooked after schedule changes. "
            "She travels with her mother, who needs wheelchair assistance at every airport. ") * 12
NOTES_ZH = "米娅喜欢早班航班的靠过道座位，航班时间变更后曾两次要求改签。她与母亲同行，母亲在每个机场都需要轮椅协助。" * 12
RESERVATIONS = ["NO6JO3", "AIXC49", "HKEG34", "8C8K4E", "3GRKZV", "VBXUD8", "Z5FFYP", "VPGS3X", "MNM8Y6",
                "ZSJUAT", "4NQLHD", "PYGVQA"]


def profile(lang: str) -> dict[str, Any]:
    """A τ-bench-like airline user: nested payment methods, reservation ids, an address and a long prose note."""
    zh = lang == "zh"
    return {
        "user_id": "mia_li_3668",
        "name": {"first_name": "米娅" if zh else "Mia", "last_name": "李" if zh else "Li"},
        "address": {"address1": "南京西路1266号" if zh else "975 Sunset Drive", "address2": "Suite 217",
                    "city": "上海" if zh else "Austin", "country": "CN" if zh else "USA", "zip": "200040"},
        "email": "mia.li3818@example.com",
        "dob": "1990-04-05",
        "payment_methods": {
            "credit_card_4421": {"source": "credit_card", "brand": "visa", "last_four": "4421",
                                 "id": "credit_card_4421"},
            "certificate_7504": {"source": "certificate", "amount": 250, "id": "certificate_7504"},
            "gift_card_8309": {"source": "gift_card", "amount": 61.5, "id": "gift_card_8309"},
        },
        "saved_passengers": [{"first_name": "Amelia", "last_name": "Ahmed", "dob": "1957-03-21"}],
        "membership": "gold",
        "reservations": RESERVATIONS,
        "notes": NOTES_ZH if zh else NOTES_EN,
    }


def widgets(n: int) -> dict[str, Any]:
    """A product search: `n` rows, each with nested tags; names in English and Chinese."""
    return {"query": "widgets", "results": [
        {"id": f"w{i:05d}", "name": f"Widget {i}" if i % 2 else f"商品{i}", "price": round(1 + (i * 7919 % 10_000) / 100, 2),
         "sku": f"SKU-{i:06d}", "tags": ["metal", "blue", f"t{i % 7}"], "in_stock": i % 3 == 0} for i in range(n)]}


def split(done: Processed) -> tuple[str | None, Any]:
    """The note line (None when nothing was left out) and the parsed JSON after it."""
    lines = done.text.split("\n")
    assert len(lines) == (2 if done.left_out else 1)
    note = lines[0] if done.left_out else None
    return note, json.loads(lines[-1])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_user_profile_keeps_every_key_and_id_and_cuts_only_the_prose(lang: str, counter: TokenCounter) -> None:
    text = json.dumps(profile(lang), ensure_ascii=False, indent=2)
    room = counter.count(text) // 3
    done = JsonValue().reduce(text, room, counter)
    assert done is not None and counter.count(done.text) <= room
    note, value = split(done)
    assert note == "[long text fields cut: notes]" and done.left_out == "the end of 1 long text field (notes)"
    for ident in ["mia_li_3668", "credit_card_4421", "certificate_7504", "gift_card_8309", "mia.li3818@example.com",
                  *RESERVATIONS]:
        assert ident in done.text
    original = profile(lang)
    assert value.keys() == original.keys() and value["payment_methods"] == original["payment_methods"]
    assert value["reservations"] == RESERVATIONS and value["address"] == original["address"]
    assert value["notes"].endswith("…") and original["notes"].startswith(value["notes"][:-1])


def test_a_profile_that_fits_comes_back_whole_and_compact(counter: TokenCounter) -> None:
    text = json.dumps(profile("en"), indent=2)
    done = JsonValue().reduce(text, counter.count(text), counter)
    assert done is not None and done.left_out == "" and json.loads(done.text) == profile("en")
    assert JsonValue().reduce(done.text, counter.count(text), counter) is None  # already compact: nothing to do


def test_a_15000_row_result_fills_the_room_with_whole_rows(counter: TokenCounter) -> None:
    text = json.dumps(widgets(15_000), ensure_ascii=False)
    started = time.perf_counter()
    done = JsonValue().reduce(text, 11_000, counter)
    took = time.perf_counter() - started
    print(f"\njson: {len(text.encode()):,} bytes, 15,000 rows reduced to room 11,000 in {took:.3f} s")
    assert done is not None
    tokens = counter.count(done.text)
    note, value = split(done)
    shown = len(value["results"])
    assert shown >= 100 and 11_000 - 200 < tokens <= 11_000  # the room is filled, not left mostly empty
    assert value["results"] == widgets(shown)["results"]  # nested tags and every field kept on the rows shown
    assert note == f"[showing items 1-{shown:,} of 15,000 of results]"
    assert done.left_out == f"items {shown + 1:,}-15,000 of 15,000 of results"
    assert took < 1.0


def test_nested_lists_are_cut_in_step_with_the_list_holding_them(counter: TokenCounter) -> None:
    files = [{"path": f"src/mod{f}.py", "matches": [{"line": n, "text": f"def handler_{n}(request):"}
                                                      for n in range(50)]} for f in range(40)]
    text = json.dumps({"files": files})
    done = JsonValue().reduce(text, 2_000, counter)
    assert done is not None and counter.count(done.text) <= 2_000
    _, value = split(done)
    kept = len(value["files"])
    assert 1 < kept < 40 and all(len(f["matches"]) == kept for f in value["files"])
    assert done.left_out == (f"items {kept + 1}-40 of 40 of files; {(50 - kept) * kept:,} items past the first "
                             f"{kept} of {kept} files[].matches lists")


def test_a_short_list_stays_whole_beside_a_long_one(counter: TokenCounter) -> None:
    flights = [{"flight_number": f"HAT{n:03d}", "origin": "SFO", "destination": "JFK", "date": "2026-05-20",
                "price": 300 + n, "note": "Operated by a partner airline. " * 12} for n in range(100)]
    text = json.dumps({"reservations": RESERVATIONS, "flights": flights})
    done = JsonValue().reduce(text, 1_500, counter)
    assert done is not None and counter.count(done.text) <= 1_500
    _, value = split(done)
    assert value["reservations"] == RESERVATIONS and 1 < len(value["flights"]) < 100
    assert "long text fields cut: note" in done.text


DEEP: Any = {"items": [{"id": i, "名称": f"商品{i}"} for i in range(1_000)]}
for _ in range(300):
    DEEP = {"level": DEEP}


@pytest.mark.parametrize(("text", "room"), [
    (json.dumps(widgets(2_000)), 1),  # the room is smaller than the smallest form
    (json.dumps(widgets(2_000)), 30),
    (json.dumps(DEEP, ensure_ascii=False), 500),  # deeply nested
    (json.dumps([{"订单号": f"DD{i:08d}", "商品": "无线耳机", "备注": "客户要求周末送货，并请在送货前电话联系。" * 20}
                 for i in range(300)], ensure_ascii=False), 800),  # non-ASCII keys, values and prose
    (json.dumps([[i, [i, [i, f"x{i}"]]] for i in range(3_000)]), 400),  # lists of lists
])
def test_edge_cases_stay_parseable_and_within_the_room_when_the_smallest_form_fits(text: str, room: int,
                                                                                   counter: TokenCounter) -> None:
    done = JsonValue().reduce(text, room, counter)
    smallest = JsonValue().reduce(text, 0, counter)
    assert done is not None and smallest is not None
    split(done)
    assert counter.count(done.text) <= max(room, counter.count(smallest.text))
    assert "\\u" not in done.text  # non-ASCII written as it is


@pytest.mark.parametrize("text", ["[]", "{}", '{"a": []}', '[{"id": 1}]', "[1, 2, 3]"])
def test_a_small_value_is_left_alone(text: str, counter: TokenCounter) -> None:
    done = JsonValue().reduce(text, 100, counter)
    assert done is None or (done.left_out == "" and json.loads(done.text) == json.loads(text))


def test_nesting_deeper_than_the_interpreter_follows_is_not_json_to_it(counter: TokenCounter) -> None:
    assert JsonValue().reduce("[" * 100_000 + "]" * 100_000, 100, counter) is None


def test_identifiers_urls_and_paths_are_never_cut_however_long(counter: TokenCounter) -> None:
    url = "https://example.com/search?" + "&".join(f"q{i}=v{i}" for i in range(60))
    path = "/srv/data/" + "/".join(f"dir{i}" for i in range(60)) + "/file.csv"
    text = json.dumps({"url": url, "path": path, "hash": "ab" * 150, "rows": list(range(5_000))})
    done = JsonValue().reduce(text, 600, counter)
    assert done is not None and counter.count(done.text) <= 600
    _, value = split(done)
    assert (value["url"], value["path"], value["hash"]) == (url, path, "ab" * 150)
