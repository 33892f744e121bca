"""`memory context FILE.json`: a /v1/context body in a file, fitted on the store and printed as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli.main import main

# recall off: nothing to embed, so the command never loads the model (the API tests recall with it).
TURN: dict[str, Any] = {
    "window": 8192, "recall": False,
    "messages": [
        {"role": "user", "content": "预算不超过500元。帮我找北京的川菜馆。"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "search_restaurants", "arguments": "{\"city\": \"北京\"}"}}]},
        {"role": "tool", "tool_call_id": "c1",
         "content": json.dumps([{"名称": f"川味小馆{i}号店", "人均": 60 + 7 * i} for i in range(30)], ensure_ascii=False)},
        {"role": "user", "content": "哪一家人均最便宜？"},
    ],
}


def _file(tmp_path: Path, body: Any, name: str = "turn.json") -> Path:
    path = tmp_path / name
    path.write_text(body if isinstance(body, str) else json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return path


def test_context_prints_the_fitted_turn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = str(tmp_path / "d")
    assert main(["context", str(_file(tmp_path, {**TURN, "namespace": "cli-zh"})), "--data", data]) == 0
    printed = capsys.readouterr().out
    assert "预算不超过500元" in printed  # ensure_ascii=False: the Chinese is printed as it is
    answer = json.loads(printed)
    report = answer["report"]
    assert report["tokens"]["total"] <= report["budget"]["available"]
    # It fits: it goes as it came, the rule said once, in its own message.
    assert answer["messages"] == TURN["messages"] and report["as_given"] and report["actions"] == []
    # --report prints the report alone; the namespace comes from -n when the file names none.
    assert main(["context", str(_file(tmp_path, TURN)), "--data", data, "-n", "cli-zh", "--report"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert set(alone) >= {"budget", "tokens", "grants", "actions", "prefix_hash", "task_id"}
    assert alone["prefix_hash"] == report["prefix_hash"] and alone["task_id"] == report["task_id"]


@pytest.mark.parametrize(("content", "named"), [
    ('{"window": 8192, "messages": [', "not valid JSON: Expecting value at line 1"),
    ("[1, 2]", "holds a JSON list"),
    ({**TURN, "window": "8192"}, "window: Input should be a valid integer"),
    ({**TURN, "colour": "blue"}, "colour: Extra inputs are not permitted"),
    ({**TURN, "messages": [{"role": "tool", "tool_call_id": "c9", "content": "42"}]}, "messages[0]"),
    ({**TURN, "allocation": "huge"}, "allocation 'huge'"),
])
def test_a_bad_file_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: Any,
                                           named: str) -> None:
    assert main(["context", str(_file(tmp_path, content)), "--data", str(tmp_path / "d")]) == 2
    shown = capsys.readouterr()
    assert shown.out == ""
    assert shown.err.startswith("memory context: ") and shown.err.count("\n") == 1 and named in shown.err, shown.err


def test_a_missing_file_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["context", str(tmp_path / "absent.json"), "--data", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "absent.json" in err and "No such file" in err
