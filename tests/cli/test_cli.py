"""The `memory` command: every subcommand has help; stats runs against a real store."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import build_parser, main


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_serve_and_stats_exist() -> None:
    assert {"serve", "stats"} <= set(_subcommands())


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_command_has_help(name: str) -> None:
    sub = _subcommands()[name]
    assert sub.description and len(sub.description) > 15
    for action in sub._actions:
        if action.dest != "help":
            assert action.help, f"{name} {action.dest} has no help"


def test_stats_on_a_fresh_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--data", str(tmp_path / "d"), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["counts"]["facts"] == 0
    assert shown["store"] == str((tmp_path / "d" / "memory.db").resolve())


def test_bad_config_exits_2_with_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[service]\nprot = 1\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "cli", "stats", "--config", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "service.prot" in done.stderr
