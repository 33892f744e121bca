"""Choosing a processor for a tool result: by the tool's configured name (or an old alias), else by content; each
processor declines text not of its kind and keeps within the room when its smallest form fits."""

from __future__ import annotations

import json
from types import ModuleType

import pytest

from memory.context import processors
from memory.context.processors import ALIASES, PROCESSORS, HtmlText, JsonValue, LogLines, Processor, RowSet, process
from memory.errors import ValidationError
from memory.tokens import TokenCounter

RESULTS = [{"id": i, "title": f"Paper {i}" if i % 2 else f"论文{i}", "score": round(0.9 - i / 1000, 3),
            "authors": [{"name": "A"}], "abstract": "潮汐能。" * 200 if i == 0 else "Tides."} for i in range(500)]
JSON_TEXT = json.dumps({"results": RESULTS, "took_ms": 12}, ensure_ascii=False)
CSV_TEXT = "id,name,城市\n" + "\n".join(f"{i},n{i},北京" for i in range(2_000))
HTML_TEXT = "<html><body>" + "".join(f"<p>Paragraph {i} about tides.</p><div>潮汐{i}</div>" for i in range(500)) + \
    "</body></html>"
LOG_TEXT = "\n".join(f"2026-12-01 INFO step {i} ok" if i % 97 else f"2026-12-01 ERROR step {i} failed"
                     for i in range(2_000))
PROSE = "\n".join(f"Paragraph {i} of a long report about tidal power, in plain words." for i in range(300))
KINDS = {"json": JSON_TEXT, "rows": CSV_TEXT, "html": HTML_TEXT, "logs": LOG_TEXT}


@pytest.mark.parametrize(("kind", "text"), KINDS.items())
def test_each_kind_of_result_goes_to_its_processor(kind: str, text: str, counter: TokenCounter) -> None:
    done = process("a_tool", text, 500, counter)
    assert done is not None and done.name == kind and counter.count(done.text) <= 500 and done.left_out


@pytest.mark.parametrize("processor", PROCESSORS, ids=lambda p: p.name)
@pytest.mark.parametrize("kind", [*KINDS, "prose"])
def test_a_processor_declines_text_not_of_its_kind(processor: Processor, kind: str, counter: TokenCounter) -> None:
    text = KINDS.get(kind, PROSE)
    if kind != processor.name:
        assert processor.reduce(text, 100, counter) is None


@pytest.mark.parametrize("processor", PROCESSORS, ids=lambda p: p.name)
@pytest.mark.parametrize("room", [0, 3, 40, 150, 700, 3_000])
def test_a_processor_keeps_within_the_room_when_its_smallest_form_fits(processor: Processor, room: int,
                                                                       counter: TokenCounter) -> None:
    text = KINDS[processor.name]
    done = processor.reduce(text, room, counter)
    smallest = processor.reduce(text, 0, counter)
    assert done is not None and smallest is not None
    assert counter.count(done.text) <= max(room, counter.count(smallest.text))
    assert done.left_out  # something was left out, and it says what


def test_a_short_plain_answer_is_left_alone(counter: TokenCounter) -> None:
    assert process("search", "A short answer.", 100, counter) is None
    assert process("search", PROSE, 10, counter) is None  # prose is no processor's kind


def test_a_result_that_would_not_get_shorter_is_left_alone(counter: TokenCounter) -> None:
    compact = json.dumps([{"id": 1, "name": "a"}], separators=(",", ":"))
    assert process("t", compact, 1_000, counter) is None


def test_a_tool_configured_with_a_processor_uses_it(counter: TokenCounter) -> None:
    flat = json.dumps([{"id": i, "name": f"n{i}", "note": None} for i in range(300)])
    chosen = process("table_tool", flat, 200, counter, by_tool={"table_tool": "rows"})
    assert chosen is not None and chosen.name == "rows" and chosen.text.startswith("[showing rows 1-")
    by_content = process("other", flat, 200, counter, by_tool={"table_tool": "rows"})
    assert by_content is not None and by_content.name == "json"


def test_the_old_name_json_list_still_chooses_the_json_processor(counter: TokenCounter) -> None:
    assert ALIASES == {"json_list": "json"}
    done = process("search", JSON_TEXT, 300, counter, by_tool={"search": "json_list"})
    assert done is not None and done.name == "json"
    assert process("search", CSV_TEXT, 300, counter, by_tool={"search": "json_list"}) is None  # not JSON


def test_an_unknown_processor_name_is_refused_with_the_known_ones(counter: TokenCounter) -> None:
    with pytest.raises(ValidationError, match="processor 'nope', which does not exist; the processors are json, rows, "
                                              "html, logs; json_list is another name for json"):
        process("t", JSON_TEXT, 100, counter, by_tool={"t": "nope"})


def test_the_processors_are_tried_in_order() -> None:
    assert [p.name for p in PROCESSORS] == ["json", "rows", "html", "logs"]
    assert [type(p) for p in PROCESSORS] == [JsonValue, RowSet, HtmlText, LogLines]


def test_processing_is_deterministic(counter: TokenCounter) -> None:
    for text in KINDS.values():
        assert process("s", text, 400, counter) == process("s", text, 400, counter)


def test_all_is_true() -> None:
    public = {name for name, value in vars(processors).items()
              if not name.startswith("_") and not isinstance(value, ModuleType)}
    assert set(processors.__all__) == public
