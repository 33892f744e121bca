"""back_reference: an item identical to one of an earlier result the agent still sees becomes a reference to that
call; items that merely share an id stay whole."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memory.context.processors import back_reference


def hits(paths: str, lines: int) -> str:
    """A search_code result whose hits are numbered m0..m39 afresh by every call."""
    return json.dumps([{"id": f"m{i}", "path": f"{paths}/file{i}.py", "line": lines + i, "text": f"def f{i}():"}
                       for i in range(40)])


PAPERS = [{"id": f"p{i}", "title": f"Tidal power {i}" if i % 2 else f"潮汐能研究{i}", "year": 2000 + i,
           "abstract": "The La Rance plant opened in 1966. 朗斯潮汐电站。" * 3} for i in range(6)]


def test_hits_that_reuse_ids_for_other_content_are_kept_whole() -> None:
    earlier = [("call_1", hits("src/api", 10))]
    assert back_reference(hits("src/store", 200), earlier) is None


def test_an_identical_item_becomes_a_reference_to_the_call_that_showed_it() -> None:
    first = json.dumps(PAPERS[:4], ensure_ascii=False)
    again = json.dumps({"results": [PAPERS[2], PAPERS[4], PAPERS[3], PAPERS[5]], "took_ms": 8}, ensure_ascii=False)
    done = back_reference(again, [("call_0", "no JSON here"), ("call_1", first)])
    assert done is not None and done.name == "back_reference"
    value = json.loads(done.text)
    assert value == {"results": [PAPERS[4], PAPERS[5], {"id": "p2", "same_as": "call_1"},
                                 {"id": "p3", "same_as": "call_1"}], "took_ms": 8}  # new items first
    assert done.left_out == ("2 items identical to items of earlier results, replaced by references to those results "
                             "and moved after the new items: call_1 (2)")


def test_each_reference_names_the_first_earlier_call_holding_the_item() -> None:
    earlier = [("call_1", json.dumps(PAPERS[:2])), ("call_2", json.dumps(PAPERS[1:4])), ("call_3", json.dumps(PAPERS))]
    done = back_reference(json.dumps([PAPERS[0], PAPERS[3]]), earlier)
    assert done is not None
    assert json.loads(done.text) == [{"id": "p0", "same_as": "call_1"}, {"id": "p3", "same_as": "call_2"}]
    assert done.left_out.endswith("call_1 (1), call_2 (1)")


def test_an_identical_item_without_an_id_is_referenced_by_the_call_alone() -> None:
    row = {"path": "docs/潮汐.md", "title": "潮汐能概述", "text": "潮汐能是一种可再生能源。" * 5}
    done = back_reference(json.dumps([row, {"path": "b.md"}]), [("c9", json.dumps([row]))])
    assert done is not None and json.loads(done.text) == [{"path": "b.md"}, {"same_as": "c9"}]


@pytest.mark.parametrize(("text", "earlier"), [
    (json.dumps(PAPERS[:3]), []),  # the earlier result is not passed: the agent no longer sees it
    (json.dumps(PAPERS[:3]), [("c1", json.dumps(PAPERS[3:]))]),  # nothing repeats
    (json.dumps([{**PAPERS[0], "year": 1999}]), [("c1", json.dumps(PAPERS))]),  # same id, one field differs
    (json.dumps([{"id": "p0"}]), [("c1", json.dumps([{"id": "p0"}]))]),  # the reference would be no shorter
    ("Plain text about tides.", [("c1", json.dumps(PAPERS))]),
    (json.dumps({"a": [1], "b": [2]}), [("c1", json.dumps({"a": [1], "b": [2]}))]),  # no single list
    (json.dumps(PAPERS), [("c1", "[not json")]),
])
def test_nothing_is_replaced_without_an_identical_item_in_a_result_passed_in(text: str,
                                                                             earlier: list[tuple[str, str]]) -> None:
    assert back_reference(text, earlier) is None


def test_keys_in_another_order_are_the_same_item() -> None:
    reordered: dict[str, Any] = dict(reversed(list(PAPERS[1].items())))
    done = back_reference(json.dumps([reordered]), [("c1", json.dumps(PAPERS))])
    assert done is not None and json.loads(done.text) == [{"id": "p1", "same_as": "c1"}]
