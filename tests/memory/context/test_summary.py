"""The extractive summary of a span of history: fixed sections, verbatim identifiers, constraints never cut, exact
budget, in English and Chinese."""

from __future__ import annotations

import json

import pytest

from memory.context import parse_messages
from memory.context.summary import SECTIONS, summarise
from memory.tokens import TokenCounter
from tests.memory.context.chat import call

SPAN = [
    {"role": "user", "content": "Load the sales CSV and only analyse columns A and B."},
    {"role": "assistant", "content": "I'll use pandas instead of the csv module. I wrote src/etl/loader.py."},
    {"role": "assistant", "content": None, "tool_calls": [call("c1", "run_tests", json.dumps({"path": "tests/"}))]},
    {"role": "tool", "tool_call_id": "c1", "content": "3 passed, 1 failed: test_dates (KeyError 'date')"},
    {"role": "assistant", "content": "The date test failed with KeyError. Next I need to parse 2026-12-01 dates."},
    {"role": "user", "content": "我们决定用 Python 3.12，结果写入 /data/out/result.csv，预算不超过500元。"},
    {"role": "assistant", "content": "已完成：结果已写入 /data/out/result.csv。下一步还需要检查 JIRA-1183。"},
]
CONSTRAINTS = ["Only analyse columns A and B.", "预算不超过500元。"]


def test_sections_hold_the_span_in_english_and_chinese(counter: TokenCounter) -> None:
    summary = summarise(parse_messages(SPAN), counter, 2000, constraints=CONSTRAINTS, references=["t1/r1"])
    s = summary.sections
    assert s["User constraints"] == tuple(CONSTRAINTS) and s["References"] == ("t1/r1",)
    assert any("pandas" in d for d in s["Decisions"]) and any("Python 3.12" in d for d in s["Decisions"])
    assert any("KeyError" in o for o in s["Open"]) and any("JIRA-1183" in o for o in s["Open"])
    assert any("src/etl/loader.py" in d for d in s["Done"]) or any("已完成" in d for d in s["Done"])
    for ident in ("src/etl/loader.py", "2026-12-01", "/data/out/result.csv", "500元", "JIRA-1183", "3.12"):
        assert ident in s["Key data"], ident
    assert summary.text.startswith("## Summary of messages[0] to messages[6]")
    assert [line[4:] for line in summary.text.splitlines() if line.startswith("### ")] == \
        [name for name in SECTIONS if s[name]]
    assert summary.tokens == counter.count(summary.text) <= 2000


@pytest.mark.parametrize("budget", [60, 90, 140, 250])
def test_a_small_budget_keeps_every_constraint_and_fits_exactly(counter: TokenCounter, budget: int) -> None:
    summary = summarise(parse_messages(SPAN), counter, budget, constraints=CONSTRAINTS, references=["t1/r1"])
    assert summary.sections["User constraints"] == tuple(CONSTRAINTS)
    assert summary.tokens == counter.count(summary.text) <= budget
    assert all(c in summary.text for c in CONSTRAINTS)


def test_the_same_span_gives_the_same_summary(counter: TokenCounter) -> None:
    first = summarise(parse_messages(SPAN), counter, 300, constraints=CONSTRAINTS)
    assert summarise(parse_messages(SPAN), counter, 300, constraints=CONSTRAINTS) == first


def test_code_and_json_are_never_quoted_only_their_identifiers_kept(counter: TokenCounter) -> None:
    span = parse_messages([
        {"role": "assistant", "content": "I fixed the parser.\n```python\nprint('done')  # TODO: next step\n```"},
        {"role": "assistant", "content": '{"status": "done", "next": "deploy", "path": "/srv/app/config.yaml"}'},
        {"role": "assistant", "content": "修好了解析器。\n```\n# 已完成 下一步\n```"},
    ])
    summary = summarise(span, counter, 500)
    assert "print(" not in summary.text and "TODO" not in summary.text and '"status"' not in summary.text
    assert "# 已完成" not in summary.text
    assert any("fixed the parser" in d for d in summary.sections["Done"])
    assert any("修好了解析器" in d for d in summary.sections["Done"])
    assert "/srv/app/config.yaml" in summary.sections["Key data"]


def test_references_keep_the_newest_within_a_quarter_of_the_budget(counter: TokenCounter) -> None:
    prior = {"References": tuple(f"t1/r{i}" for i in range(1, 200))}
    summary = summarise(parse_messages(SPAN), counter, 400, constraints=CONSTRAINTS, references=["t1/r999"],
                        prior=prior)
    refs = summary.sections["References"]
    assert refs[-1] == "t1/r999" and "t1/r199" in refs and "t1/r1" not in refs
    assert counter.count("\n".join(f"- {r}" for r in refs)) <= 400 // 4 + 10
    assert summary.tokens == counter.count(summary.text) <= 400
