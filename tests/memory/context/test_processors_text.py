"""Row sets, HTML pages and logs reduced to a token room on the real tokenizer, in English and Chinese."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from memory.context.processors import HtmlText, LogLines, RowSet
from memory.tokens import TokenCounter

ORDERS_CSV = "订单号,商品,数量,备注,城市\n" + "\n".join(f"DD{i:08d},无线耳机{i},{i % 5 + 1},,{'北京' if i % 2 else '上海'}"
                                                          for i in range(3_000))


def test_a_row_set_keeps_the_header_and_fills_the_room_with_rows(counter: TokenCounter) -> None:
    done = RowSet().reduce(ORDERS_CSV, 1_000, counter)
    assert done is not None and 1_000 - 40 < counter.count(done.text) <= 1_000
    note, header, *rows = done.text.split("\n")
    shown = len(rows)
    assert header == "订单号,商品,数量,城市" and rows[0] == "DD00000000,无线耳机0,1,上海"
    assert rows == [f"DD{i:08d},无线耳机{i},{i % 5 + 1},{'北京' if i % 2 else '上海'}" for i in range(shown)]
    assert note == f"[showing rows 1-{shown:,} of 3,000; columns empty in every row left out: 备注]"
    assert done.left_out == f"rows {shown + 1:,}-3,000 of 3,000; the columns 备注, empty in every row"


def test_a_json_list_of_flat_objects_becomes_rows_with_every_column(counter: TokenCounter) -> None:
    items = [{"id": f"w{i}", "name": f"Widget, size {i}", "price": i + 0.5, "note": None, "in_stock": i % 2 == 0}
             for i in range(500)]
    done = RowSet().reduce(json.dumps(items), 400, counter)
    assert done is not None and counter.count(done.text) <= 400
    rows = list(csv.reader(io.StringIO(done.text.split("\n", 1)[1])))
    assert rows[0] == ["id", "name", "price", "in_stock"]  # `note` is null in every row
    assert rows[1] == ["w0", "Widget, size 0", "0.5", "true"] and len(rows) > 10
    assert done.left_out == f"rows {len(rows):,}-500 of 500; the columns note, empty in every row"


def test_a_row_set_that_fits_is_left_alone(counter: TokenCounter) -> None:
    assert RowSet().reduce("id,name\n1,a\n2,b\n3,c", 100, counter) is None
    items = json.dumps([{"id": i, "name": f"n{i}"} for i in range(20)])
    assert RowSet().reduce(items, 1_000, counter) is None
    done = RowSet().reduce(items, counter.count(items) - 1, counter)  # as JSON it does not fit; as rows it does
    assert done is not None and done.left_out == "" and done.text.split("\n")[:2] == ["id,name", "0,n0"]


@pytest.mark.parametrize("text", [
    "\n".join(f"Paragraph {i} of a long report about tidal power, in plain words." for i in range(50)),
    "\n".join(f"第{i}段,关于潮汐能的报告。" for i in range(50)),
    "a,a\n1,2\n3,4\n5,6",  # the same name twice: no header
    "id,name\n1,a\n2\n3,c",  # a row of another width
])
def test_text_that_only_looks_like_rows_is_not_a_row_set(text: str, counter: TokenCounter) -> None:
    assert RowSet().reduce(text, 5, counter) is None


PAGE = ("<html><head><style>p {color: red}</style><script>var tracking = 'x'.repeat(1000);</script></head><body>"
        "<h1>Tides</h1>" + "".join(f"<p>Paragraph {i}: the La Rance plant opened in 1966.</p><div>朗斯潮汐电站，第{i}段。</div>"
                                   for i in range(300)) + "</body></html>")


def test_html_becomes_its_text_and_is_cut_at_a_line_end(counter: TokenCounter) -> None:
    small = ("<html><head><style>p {color: red}</style><script>alert(1)</script></head><body>"
             "<h1>Tides</h1><p>The La Rance plant opened in 1966.</p><div>朗斯潮汐电站。</div></body></html>")
    done = HtmlText().reduce(small, 100, counter)
    assert done is not None and done.text == "Tides\n\nThe La Rance plant opened in 1966.\n\n朗斯潮汐电站。"
    assert done.left_out == "the page's markup (tags and link addresses), scripts and styles"
    cut = HtmlText().reduce(PAGE, 500, counter)
    assert cut is not None and counter.count(cut.text) <= 500
    note, *lines = cut.text.split("\n")
    whole = HtmlText().reduce(PAGE, 1_000_000, counter)
    assert whole is not None and whole.text.split("\n")[:len(lines)] == lines  # a prefix, cut at a line end
    total = len(whole.text.split("\n"))
    assert note == f"[showing lines 1-{len(lines):,} of the page's {total:,} lines of text]"
    assert cut.left_out.startswith(f"lines {len(lines) + 1:,}-{total:,} of the page's {total:,} lines of text")
    assert "tracking" not in whole.text and "color" not in whole.text


def test_a_page_whose_first_line_is_too_long_shows_its_beginning(counter: TokenCounter) -> None:
    page = "<html><body><p>" + "潮汐能是一种可再生能源。" * 400 + "</p><p>End.</p></body></html>"
    done = HtmlText().reduce(page, 100, counter)
    assert done is not None and counter.count(done.text) <= 100
    note, start = done.text.split("\n")
    assert note.startswith("[showing the beginning of line 1") and start.startswith("潮汐能") and start.endswith("…")


def log(lines: int) -> list[str]:
    out = [f"2026-12-01 10:{i // 60 % 60:02d}:{i % 60:02d} INFO step {i} ok" for i in range(lines)]
    out[400] = "2026-12-01 10:06:40 ERROR disk full on /data"
    out[900] = "2026-12-01 10:15:00 写入失败：权限不足"
    out[1500] = "2026-12-01 10:25:00 错误 连接数据库超时"
    return out


def test_a_log_keeps_head_tail_and_every_error_line_with_markers(counter: TokenCounter) -> None:
    lines = log(3_000)
    done = LogLines().reduce("\n".join(lines), 800, counter)
    assert done is not None and counter.count(done.text) <= 800
    note, *out = done.text.split("\n")
    errors = [lines[400], lines[900], lines[1500]]
    assert [line for line in out if line in errors] == errors
    head = out.index(next(line for line in out if line.startswith("[…")))
    tail = len(out) - 1 - max(i for i, line in enumerate(out) if line.startswith("[…"))
    assert out[:head] == lines[:head] and out[len(out) - tail:] == lines[len(lines) - tail:]
    assert head > 10 and tail > 10  # the room left after the error lines went to more head and tail
    shown = head + tail + 3
    assert note == (f"[showing {shown:,} of 3,000 lines: the first {head:,}, the last {tail:,} and 3 of the 3 error "
                    f"lines between]")
    assert done.left_out == (f"{3_000 - shown:,} of the 3,000 lines (lines {head + 1:,}-{3_000 - tail:,} but the 3 "
                             f"error lines shown), none of them an error line")
    assert f"[… {400 - head:,} lines]" in out and "[… 499 lines]" in out and "[… 599 lines]" in out


def test_a_log_with_more_error_lines_than_room_counts_those_left_out(counter: TokenCounter) -> None:
    lines = [f"2026-12-01 错误 第{i}次重试失败" if i % 2 else f"2026-12-01 INFO 第{i}步" for i in range(2_000)]
    done = LogLines().reduce("\n".join(lines), 300, counter)
    assert done is not None and counter.count(done.text) <= 300
    counts = re.search(r"and (\d+) of the (\d+) error lines between]", done.text.split("\n")[0])
    assert counts is not None
    shown, between = map(int, counts.groups())
    assert 0 < shown < between and done.left_out.endswith(f", {between - shown} error lines among them")


def test_a_log_that_fits_or_prose_is_left_alone(counter: TokenCounter) -> None:
    assert LogLines().reduce("\n".join(log(3_000)[:20]), 1_000, counter) is None
    prose = "\n".join(f"Paragraph {i} of a long report about tidal power." for i in range(200))
    assert LogLines().reduce(prose, 50, counter) is None  # not a log: never cut as one


@pytest.mark.parametrize("room", [0, 1, 5, 20, 60, 200])
def test_a_tight_room_still_gives_the_smallest_form(room: int, counter: TokenCounter) -> None:
    for processor, text in [(RowSet(), ORDERS_CSV), (HtmlText(), PAGE), (LogLines(), "\n".join(log(3_000)))]:
        done = processor.reduce(text, room, counter)
        smallest = processor.reduce(text, 0, counter)
        assert done is not None and smallest is not None
        assert counter.count(done.text) <= max(room, counter.count(smallest.text)), processor.name
