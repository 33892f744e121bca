"""Fact-extraction quality per language on the labelled and held-out sets, plus supersede accuracy.

Run from the project root: `.venv/bin/python -m bench.facts_quality`. `--misses` lists every disagreement
on the sets rules are tuned on; held-out misses are never printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.facts_eval import QualityReport, score
from memory.facts.rules import load_rules

_DATA = Path(__file__).resolve().parents[1] / "tests" / "memory" / "facts"
_HELD_OUT = {"heldout", "unseen"}


def rows(name: str, report: QualityReport) -> list[str]:
    """One formatted table row per language in the report, 'all' last."""
    langs = sorted(set(report.facts) | set(report.supersede), key=lambda lang: (lang == "all", lang))
    lines = []
    for lang in langs:
        facts = report.facts.get(lang)
        pairs = report.supersede.get(lang)
        cells = [name, lang]
        if facts is None:
            cells += ["-", "-", "-", "-"]
        else:
            cells += [str(facts.utterances), f"{facts.precision:.3f}", f"{facts.recall:.3f}", f"{facts.f1:.3f}"]
        cells.append(f"{pairs.accuracy:.3f} ({pairs.correct}/{pairs.pairs})" if pairs and pairs.pairs else "-")
        lines.append(_format(cells))
    return lines


def main() -> None:
    """Print the table; with --misses, every fact the extractor got wrong."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--misses", action="store_true", help="also list every missed or unexpected fact")
    parser.add_argument("--rules", nargs="*", default=[], help="extra rule files to load after the shipped ones")
    args = parser.parse_args()
    rules = load_rules(*args.rules)
    reports = {
        "labelled": score(_DATA / "labelled.jsonl", rules, _DATA / "supersede.jsonl"),
        "dev": score(_DATA / "dev.jsonl", rules, _DATA / "dev_supersede.jsonl"),
        "heldout": score(_DATA / "heldout.jsonl", rules),
        "unseen": score(_DATA / "unseen.jsonl", rules, _DATA / "unseen_supersede.jsonl"),
    }
    header = _format(["set", "lang", "utterances", "precision", "recall", "F1", "supersede"])
    print(header)
    print("-" * len(header))
    for name, report in reports.items():
        for line in rows(name, report):
            print(line)
    if args.misses:
        # Only the sets rules are tuned on: a held-out miss read is a held-out sentence tuned on.
        for name, report in reports.items():
            if name in _HELD_OUT:
                continue
            for miss in report.misses:
                fact = miss.fact
                print(f"{name} {miss.lang} {miss.what}: {miss.text!r} -> {fact.kind} | {fact.key} | {fact.value}")


def _format(cells: list[str]) -> str:
    widths = (9, 5, 10, 9, 7, 6, 16)
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()


if __name__ == "__main__":
    main()
