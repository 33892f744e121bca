"""`memory ingest FOLDER` counts passages: a bar with passages/s and an ETA on stderr, the file summary on stdout;
the pipeline under it reports passages done against an estimate that never runs backwards."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ingest.pipeline import PassageCount, ingest_paths
from memory.service import Memory
from tests.memory.experience.conftest import CHINESE, ENGLISH

ROOT = Path(__file__).resolve().parents[2]
# tqdm's line: "100%|██████████| 12/12 [00:03<00:00,  3.87 passages/s, 8 files]" (elapsed<remaining, then the rate)
_BAR = re.compile(r"(\d+)/(\d+) \[[\d:]+<([\d:]+|\?), +([\d.]+) passages/s")
_SUMMARY = re.compile(r"^(\d+) files: (\d+) created, .*; (\d+) chunks in [\d.]+ s", re.MULTILINE)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Four English and four Chinese files; two of each long enough for several chunks."""
    root = tmp_path / "docs"
    (root / "zh").mkdir(parents=True)
    for name, text in ENGLISH.items():
        (root / f"{name}.txt").write_text(text, encoding="utf-8")
    for name, text in CHINESE.items():
        (root / "zh" / f"{name}.md").write_text(f"# {name}\n\n{text}", encoding="utf-8")
    (root / "long.txt").write_text("\n\n".join([" ".join(ENGLISH.values())] * 6), encoding="utf-8")
    (root / "zh" / "长文.txt").write_text("\n\n".join(["".join(CHINESE.values())] * 6), encoding="utf-8")
    return root


def test_the_bar_counts_passages_with_a_rate_and_an_eta(folder: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    done = subprocess.run([sys.executable, "-m", "cli", "ingest", str(folder), "--data", str(tmp_path / "data")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = _SUMMARY.search(done.stdout)
    assert summary is not None, done.stdout
    assert summary.group(1) == summary.group(2) == "10"
    bars = _BAR.findall(done.stderr.replace("\r", "\n"))
    assert bars, done.stderr[-2000:]
    shown, total, _, rate = bars[-1]
    assert shown == total == summary.group(3)  # the bar ends at every chunk stored
    assert float(rate) > 0
    assert any(eta != "?" for _, _, eta, _ in bars)


def test_passages_done_never_go_back_and_end_at_the_chunks_stored(memory: Memory, folder: Path) -> None:
    counts: list[PassageCount] = []
    outcomes = ingest_paths(memory, "ns", [folder], passages=counts.append)
    stored = sum(r.chunks for o in outcomes for r in o.results)
    assert stored > len(outcomes)  # the long files gave several chunks each
    assert [c.done for c in counts] == sorted(c.done for c in counts)
    assert all(c.done <= c.expected for c in counts)
    assert counts[-1] == PassageCount(stored, stored)
    again: list[PassageCount] = []
    assert all(r.status == "unchanged" for o in ingest_paths(memory, "ns", [folder], passages=again.append)
               for r in o.results)
    assert again[-1] == PassageCount(stored, stored)  # an unchanged file's passages count as done too


def test_a_path_that_does_not_exist_is_one_line_and_no_bar(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    done = subprocess.run([sys.executable, "-m", "cli", "ingest", str(tmp_path / "nowhere"), "--data",
                           str(tmp_path / "data")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [f"memory ingest: {tmp_path / 'nowhere'} does not exist; check the path"]
