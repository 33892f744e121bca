"""Recall quality of the real service against recency, BM25-only and dense-only baselines (LoCoMo, LongMemEval-S).

Run from the project root: `.venv/bin/python -m bench.recall_quality` (starts `memory serve` on a temporary data
dir and a free port, stops it at the end). Reads ../shared/benchdata and copies nothing; baseline vectors are
cached in bench/.cache.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from bench._baselines import BASELINES, TurnIndex, pack
from bench._recall_data import Conversation, Question, load_locomo, load_longmemeval
from bench._recall_service import Service, ServiceError, library_service, running_service
from bench.embed_cache import CachedEmbedder

SERVICE = "service"
LOCOMO_TARGET_MARGIN = 0.08
LOCOMO_TARGET_AT_1000 = 0.80


class Scores:
    """Per-method, per-budget lists of per-question recall shares and used tokens, with categories."""

    def __init__(self) -> None:
        self.recall: dict[tuple[str, int], list[float]] = defaultdict(list)
        self.tokens: dict[tuple[str, int], list[int]] = defaultdict(list)
        self.by_category: dict[tuple[str, int, str], list[float]] = defaultdict(list)
        self.over_budget: dict[str, int] = defaultdict(int)

    def add(self, method: str, budget: int, category: str, share: float, used: int) -> None:
        """Record one question's outcome."""
        self.recall[method, budget].append(share)
        self.tokens[method, budget].append(used)
        self.by_category[method, budget, category].append(share)
        if used > budget:
            self.over_budget[method] += 1

    def mean(self, method: str, budget: int, category: str | None = None) -> float | None:
        """Mean share (None when nothing was measured)."""
        values = self.recall[method, budget] if category is None else self.by_category[method, budget, category]
        return sum(values) / len(values) if values else None

    def mean_tokens(self, method: str, budget: int) -> float | None:
        """Mean tokens used."""
        values = self.tokens[method, budget]
        return sum(values) / len(values) if values else None


def share(found: Iterable[str], wanted: Sequence[str]) -> float:
    """Fraction of `wanted` present in `found`."""
    found_set = set(found)
    return sum(1 for w in wanted if w in found_set) / len(wanted)


# An answer shorter than this ("2", "25") is found verbatim in unrelated text too often to say it was shown.
_ANSWER_MIN_CHARS = 5


def quoted_answer(question: Question, conv: Conversation) -> str | None:
    """The question's answer, normalised, when a has_answer turn quotes it word for word and it is long enough to
    check by substring: what lets "answer shown" count only texts actually shown, however a snippet was cut."""
    answer = _normalised(question.answer).rstrip(".")
    if len(answer) < _ANSWER_MIN_CHARS:
        return None
    quoted = any(answer in _normalised(t.text) for t in conv.turns if t.metadata.get("has_answer"))
    return answer if quoted else None


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())


def experience_metadata(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The `metadata` of every experience item of a recall answer."""
    return [item.get("metadata") or {} for item in answer.get("items", []) if item.get("tier") == "experience"]


def run_baselines(conv: Conversation, index: TurnIndex, budgets: Sequence[int], key: str, scores: Scores) -> None:
    """Every baseline on every question of `conv`; `key` names the metadata field the evidence refers to."""
    for question in conv.questions:
        for method, ranker in BASELINES.items():
            if method == "dense" and index.embedder is None:
                continue
            ranking = ranker(index, question.text)
            for budget in budgets:
                chosen, used = pack(index, ranking, budget)
                found = [str(index.turns[i].metadata[key]) for i in chosen]
                scores.add(method, budget, question.category, share(found, question.evidence), used)


def ingest(service: Service, namespace: str, conv: Conversation) -> float:
    """Store every turn of `conv` in `namespace`; seconds taken."""
    started = time.perf_counter()
    stored = service.store_turns(namespace, conv.turns)
    if stored != len(conv.turns):
        print(f"  note: {namespace}: the service stored {stored} of {len(conv.turns)} turns", file=sys.stderr)
    return time.perf_counter() - started


def locomo(args: argparse.Namespace, service: Service | None, embedder: CachedEmbedder | None, run: str) -> None:
    """LoCoMo evidence-turn recall at every budget, service and baselines side by side."""
    conversations = load_locomo(args.conversations)
    scores = Scores()
    asked = [q for c in conversations for q in c.questions if q.evidence]
    skipped = sum(len(c.questions) for c in conversations) - len(asked)
    dropped = sum(c.dropped_evidence for c in conversations)
    total_turns = sum(len(c.turns) for c in conversations)
    print(f"\n== LoCoMo: {len(conversations)} conversations, {total_turns} turns, {len(asked)} questions "
          f"(categories 1-4; {skipped} without resolvable evidence skipped, {dropped} evidence ids dropped)")
    ingest_seconds = recall_seconds = 0.0
    calls = 0
    for conv in conversations:
        questions = [q for q in conv.questions if q.evidence]
        conv = Conversation(conv.name, conv.turns, tuple(questions))
        if not args.skip_baselines:
            started = time.perf_counter()
            run_baselines(conv, TurnIndex.build(conv.turns, embedder), args.budgets, "dia_id", scores)
            print(f"  {conv.name}: baselines {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
        if service is None:
            continue
        namespace = f"locomo-{conv.name}-{run}"
        seconds = ingest(service, namespace, conv)
        ingest_seconds += seconds
        started = time.perf_counter()
        for question in questions:
            for budget in args.budgets:
                answer = service.recall(namespace, question.text, budget)
                found = [str(m.get("dia_id")) for m in experience_metadata(answer)]
                scores.add(SERVICE, budget, question.category, share(found, question.evidence),
                           int(answer.get("used_tokens", 0)))
                calls += 1
        recall_seconds += time.perf_counter() - started
        print(f"  {conv.name}: ingest {len(conv.turns)} turns {seconds:.1f}s, recall {len(questions)}×"
              f"{len(args.budgets)} {time.perf_counter() - started:.1f}s", file=sys.stderr, flush=True)
    methods = [m for m in (SERVICE, *BASELINES) if scores.recall[m, args.budgets[0]]]
    print_table("evidence-turn recall (mean share of evidence turns returned)", methods, args.budgets,
                lambda m, b: scores.mean(m, b))
    print_table("mean tokens used", methods, args.budgets, lambda m, b: scores.mean_tokens(m, b))
    if SERVICE in methods:
        categories = sorted({q.category for q in asked})
        labels = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
        counts = {c: sum(1 for q in asked if q.category == c) for c in categories}
        print_table("service by category", [f"{c} {labels.get(c, '')} (n={counts[c]})" for c in categories],
                    args.budgets, lambda row, b: scores.mean(SERVICE, b, row.split()[0]))
        print_targets(scores, args.budgets, [m for m in methods if m != SERVICE])
        print(f"ingestion {ingest_seconds:.1f}s ({total_turns / max(ingest_seconds, 1e-9):.1f} turns/s); "
              f"{calls} recalls {recall_seconds:.1f}s ({1000 * recall_seconds / max(calls, 1):.0f} ms each); "
              f"answers over budget: {scores.over_budget[SERVICE]}")


def print_targets(scores: Scores, budgets: Sequence[int], baselines: Sequence[str]) -> None:
    """Whether the service beats the best baseline by the margin at every budget, and reaches the 1000 target."""
    if not baselines:
        return
    checks = []
    for budget in budgets:
        best = max(baselines, key=lambda m: scores.mean(m, budget) or 0.0)
        ours, theirs = scores.mean(SERVICE, budget) or 0.0, scores.mean(best, budget) or 0.0
        verdict = "ok" if ours >= theirs + LOCOMO_TARGET_MARGIN else "MISS"
        checks.append(f"{budget}: {ours - theirs:+.3f} vs {best} {verdict}")
    if 1000 in budgets:
        at_1000 = scores.mean(SERVICE, 1000) or 0.0
        checks.append(f"@1000 {at_1000:.3f} {'ok' if at_1000 >= LOCOMO_TARGET_AT_1000 else 'MISS'} (≥ 0.80)")
    print(f"targets (≥ +{LOCOMO_TARGET_MARGIN} over best baseline): " + "; ".join(checks))


def longmemeval(args: argparse.Namespace, service: Service | None, embedder: CachedEmbedder | None,
                run: str) -> tuple[Scores, Scores]:
    """LongMemEval-S subset a: evidence-session and has_answer-turn recall at every budget, by half; returns the
    session and has_answer-turn scores of every question asked.

    Questions at an odd position of the file are the tuning half, those at an even position the held-out half
    (decided before any tuning, issue 38): a change is tuned on one and judged on the other.
    """
    budgets = args.longmemeval_budgets
    records = load_longmemeval(args.longmemeval_limit)
    positions = [n for n in range(args.longmemeval_from, len(records)) if args.longmemeval_half == "all"
                 or (n % 2 == 1) == (args.longmemeval_half == "odd")]
    halves = {"all": Scores(), "odd": Scores(), "even": Scores()}
    turn_halves = {"all": Scores(), "odd": Scores(), "even": Scores()}
    total_turns = sum(len(records[n].turns) for n in positions)
    print(f"\n== LongMemEval-S subset a: {len(positions)} questions ({args.longmemeval_half}), {total_turns} turns, "
          f"budgets {' / '.join(map(str, budgets))}")
    dump = Path(args.dump).open("w", encoding="utf-8") if args.dump else None
    shown_halves = {"all": Scores(), "odd": Scores(), "even": Scores()}
    ingest_seconds = recall_seconds = 0.0
    for n in positions:
        conv = records[n]
        question = conv.questions[0]
        answer_turns = sum(1 for t in conv.turns if t.metadata["has_answer"])
        quoted = quoted_answer(question, conv)
        keys = ("all", "odd" if n % 2 else "even")
        outcomes: list[tuple[str, int, list[tuple[Any, Mapping[str, Any]]], int, str]] = []
        if not args.skip_baselines:
            index = TurnIndex.build(conv.turns, embedder)
            for method, ranker in BASELINES.items():
                if method == "dense" and embedder is None:
                    continue
                ranking = ranker(index, question.text)
                for budget in budgets:
                    chosen, used = pack(index, ranking, budget)
                    outcomes.append((method, budget, [(i, conv.turns[i].metadata) for i in chosen], used,
                                     "\n".join(conv.turns[i].text for i in chosen)))
        if service is not None:
            namespace = f"lme-{conv.name}-{run}"
            seconds = ingest(service, namespace, conv)
            ingest_seconds += seconds
            for budget in budgets:
                started = time.perf_counter()
                answer = service.recall(namespace, question.text, budget)
                recall_seconds += time.perf_counter() - started
                items = [item for item in answer.get("items", []) if item.get("tier") == "experience"]
                returned = [(item.get("doc_id") or item.get("id"), item.get("metadata") or {}) for item in items]
                outcomes.append((SERVICE, budget, returned, int(answer.get("used_tokens", 0)),
                                 "\n".join(str(item.get("text", "")) for item in items)))
            print(f"  [{n}] {conv.name}: ingest {len(conv.turns)} turns {seconds:.1f}s", file=sys.stderr, flush=True)
        for method, budget, returned, used, text in outcomes:
            for key in keys:
                score_longmemeval(method, budget, question, returned, answer_turns, used, halves[key],
                                  turn_halves[key])
                if quoted is not None:
                    shown_halves[key].add(method, budget, question.category, float(quoted in _normalised(text)), used)
            if dump is not None:
                dump.write(json.dumps({
                    "position": n, "question_id": question.question_id, "category": question.category,
                    "method": method, "budget": budget, "used": used, "evidence": list(question.evidence),
                    "answer_turns": answer_turns,
                    "sessions": [str(m.get("session_id")) for _, m in returned],
                    "has_answer": [bool(m.get("has_answer")) for _, m in returned],
                }) + "\n")
    if dump is not None:
        dump.close()
    for half, label in (("all", "all questions"), ("odd", "tuning half (odd positions)"),
                        ("even", "held-out half (even positions)")):
        sessions, turns = halves[half], turn_halves[half]
        methods = [m for m in (SERVICE, *BASELINES) if sessions.recall[m, budgets[0]]]
        if not methods:
            continue
        count = len(sessions.recall[methods[0], budgets[0]])
        print_table(f"{label}, n={count}: evidence-session recall", methods, budgets,
                    lambda m, b, s=sessions: s.mean(m, b))
        print_table(f"{label}: has_answer-turn recall (over the {len(turns.recall[methods[0], budgets[0]])} "
                    "questions that have such turns)", methods, budgets, lambda m, b, t=turns: t.mean(m, b))
        shown = shown_halves[half]
        if shown.recall[methods[0], budgets[0]]:
            print_table(f"{label}: answer shown word for word (over the {len(shown.recall[methods[0], budgets[0]])} "
                        "questions whose answer a has_answer turn quotes)", methods, budgets,
                        lambda m, b, s=shown: s.mean(m, b))
        print_table(f"{label}: mean tokens used", methods, budgets, lambda m, b, s=sessions: s.mean_tokens(m, b))
    calls = len(positions) * len(budgets)
    if service is not None:
        print(f"ingestion {ingest_seconds:.1f}s for {total_turns} turns ({total_turns / max(ingest_seconds, 1e-9):.1f}"
              f" turns/s); {calls} recalls, {1000 * recall_seconds / max(calls, 1):.0f} ms each")
    return halves["all"], turn_halves["all"]


def score_longmemeval(method: str, budget: int, question: Question, returned: Sequence[tuple[Any, Mapping[str, Any]]],
                      answer_turns: int, used: int, sessions: Scores, turns: Scores) -> None:
    """Record session recall and, when the haystack has has_answer turns, the share of them returned.

    `returned` pairs each returned turn's identity (position or doc_id) with its metadata.
    """
    found_sessions = [str(m.get("session_id")) for _, m in returned]
    sessions.add(method, budget, question.category, share(found_sessions, question.evidence), used)
    if answer_turns:
        found = len({key for key, m in returned if m.get("has_answer")})
        turns.add(method, budget, question.category, min(found, answer_turns) / answer_turns, used)


def print_table(title: str, rows: Sequence[str], columns: Sequence[Any], value: Any) -> None:
    """A plain text table: rows × columns of `value(row, column)`; shares to 3 places, token counts whole."""
    width = max([len(r) for r in rows] + [8])
    print(f"\n{title}")
    print(" " * width + "".join(f"{c!s:>10}" for c in columns))
    for row in rows:
        cells = [value(row, c) for c in columns]
        shown = ("         -" if v is None else f"{v:>10.{3 if v < 10 else 0}f}" for v in cells)
        print(f"{row:<{width}}" + "".join(shown))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=None, help="LoCoMo conversations to use (default all)")
    parser.add_argument("--budgets", type=int, nargs="+", default=[250, 500, 1000, 2000], help="LoCoMo budgets")
    parser.add_argument("--url", help="use the service already running here instead of starting one")
    parser.add_argument("--config", help="TOML file passed to the started service with --config")
    parser.add_argument("--skip-baselines", action="store_true", help="measure the service only")
    parser.add_argument("--baselines-only", action="store_true", help="do not start or call the service")
    parser.add_argument("--longmemeval-limit", type=int, default=20, help="LongMemEval questions (0 skips it)")
    parser.add_argument("--longmemeval-budgets", type=int, nargs="+", default=[500, 1000, 2000])
    parser.add_argument("--longmemeval-half", choices=("all", "odd", "even"), default="all",
                        help="LongMemEval questions at odd (tuning) or even (held-out) positions, or all")
    parser.add_argument("--longmemeval-from", type=int, default=0, help="skip the LongMemEval questions before this")
    parser.add_argument("--dump", help="write every LongMemEval answer's sessions and flags here (JSON lines)")
    parser.add_argument("--skip-locomo", action="store_true")
    parser.add_argument("--library", action="store_true",
                        help="answer in-process with cached vectors instead of starting the server (quick iterations)")
    parser.add_argument("--keep", type=Path,
                        help="with --library: keep the store in this folder and reuse what an earlier run stored there "
                             "(for changes to ranking and packing only; delete it after a change to ingestion)")
    args = parser.parse_args(argv)
    if args.keep and not args.library:
        parser.error("--keep applies to --library runs only (the server's store is its own)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run both benchmarks and print their tables; an HTTP error prints the service's error JSON and stops."""
    args = parse_args(argv)
    started = time.perf_counter()
    embedder = None
    if not args.skip_baselines:
        from memory.config import load_config
        from memory.embedding import load_embedder

        embedder = CachedEmbedder(load_embedder(load_config().embedding))
    run = "kept" if args.keep else uuid.uuid4().hex[:8]
    config_toml = Path(args.config).read_text(encoding="utf-8") if args.config else ""
    try:
        if args.baselines_only:
            context: Any = nullcontext()
        elif args.library:
            context = library_service(config_toml, args.keep)
        else:
            context = running_service(args.url, config_toml)
        with context as service:
            if not args.skip_locomo:
                locomo(args, service, embedder, run)
            if args.longmemeval_limit > 0:
                longmemeval(args, service, embedder, run)
    except ServiceError as exc:
        print(f"\nrecall_quality: {exc}", file=sys.stderr)
        return 1
    computed = f", {embedder.computed} baseline vectors computed" if embedder else ""
    print(f"\ntotal runtime {time.perf_counter() - started:.0f}s{computed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
