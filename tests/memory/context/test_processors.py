"""Tool-output processors: JSON lists, row sets, HTML and logs reduced deterministically, in English and Chinese."""

from __future__ import annotations

import json

import pytest

from memory.context.processors import PROCESSORS, HtmlText, JsonList, LogLines, RowSet, process
from memory.errors import ValidationError

RESULTS = [{"id": i, "title": f"Paper {i}" if i % 2 else f"论文{i}", "score": 0.9 - i / 100,
            "authors": [{"name": "A"}], "abstract": "潮汐能。" * 200 if i == 0 else "Tides."} for i in range(50)]


@pytest.mark.parametrize("text", [json.dumps(RESULTS, ensure_ascii=False),
                                  json.dumps({"results": RESULTS, "took_ms": 12}, ensure_ascii=False)])
def test_a_json_list_keeps_its_first_items_and_says_how_many(text: str) -> None:
    reduced = JsonList(shown=5).reduce(text)
    assert reduced is not None
    first, *items = reduced.splitlines()
    assert first == "50 results, 5 shown:" and len(items) == 5
    shown = [json.loads(line) for line in items]
    assert [s["id"] for s in shown] == [0, 1, 2, 3, 4] and shown[2]["title"] == "论文2"
    assert all("authors" not in s for s in shown)  # nested fields left out
    assert shown[0]["abstract"].endswith("…") and len(shown[0]["abstract"]) == 301


def test_a_short_list_or_plain_text_is_left_alone() -> None:
    assert JsonList(shown=5).reduce(json.dumps(RESULTS[:3])) is None
    assert JsonList().reduce("not json at all") is None
    assert process("search", "A short answer.", PROCESSORS) is None


def test_a_row_set_drops_empty_columns_and_keeps_the_first_rows() -> None:
    csv_text = "id,name,empty,城市\n" + "\n".join(f"{i},n{i},,北京" for i in range(30))
    reduced = RowSet(shown=3).reduce(csv_text)
    assert reduced == "30 rows, 3 shown; 1 empty columns left out:\nid,name,城市\n0,n0,北京\n1,n1,北京\n2,n2,北京"
    assert process("sql", csv_text, PROCESSORS) is not None


def test_html_becomes_its_text() -> None:
    page = ("<html><head><style>p {color: red}</style><script>alert(1)</script></head><body>"
            "<h1>Tides</h1><p>The La Rance plant opened in 1966.</p><div>朗斯潮汐电站。</div></body></html>")
    reduced = HtmlText().reduce(page)
    assert reduced == "Tides\n\nThe La Rance plant opened in 1966.\n\n朗斯潮汐电站。"
    assert HtmlText().reduce("a < b and c > d") is None


def test_a_long_log_keeps_head_tail_and_the_error_lines() -> None:
    lines = [f"2026-12-01 INFO step {i} ok" for i in range(200)]
    lines[90] = "2026-12-01 ERROR disk full on /data"
    lines[120] = "2026-12-01 写入失败：权限不足"
    reduced = LogLines(head=5, tail=5).reduce("\n".join(lines))
    assert reduced is not None
    out = reduced.splitlines()
    assert out[:5] == lines[:5] and out[-5:] == lines[-5:]
    assert out[5] == "[… 188 lines left out; the error lines among them follow]"
    assert out[6:8] == [lines[90], lines[120]]
    prose = "\n".join(f"Paragraph {i} of a long report about tidal power." for i in range(200))
    assert LogLines(head=5, tail=5).reduce(prose) is None  # not a log: never cut as one


def test_a_tool_configured_with_a_processor_uses_it_and_a_wrong_name_is_refused() -> None:
    flat = json.dumps([{"id": i, "name": f"n{i}", "note": None} for i in range(30)])
    chosen = process("table_tool", flat, PROCESSORS, by_tool={"table_tool": "rows"})
    assert chosen is not None and chosen.name == "rows" and chosen.text.startswith("30 rows, 10 shown")
    assert process("other", flat, PROCESSORS).name == "json_list"  # type: ignore[union-attr]
    with pytest.raises(ValidationError, match="processor 'nope', which does not exist"):
        process("t", flat, PROCESSORS, by_tool={"t": "nope"})


def test_processing_is_deterministic() -> None:
    text = json.dumps(RESULTS, ensure_ascii=False)
    assert process("s", text, PROCESSORS) == process("s", text, PROCESSORS)
