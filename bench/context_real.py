"""Real agent conversations replayed step by step through three context managers: what each would send.

    .venv/bin/python -m bench.context_real [--windows 4096,6144,8192,16384,32768]
                                           [--split dev|held-out|both|own|all]
                                           [--limit N] [--root DIR] [--json FILE]

The conversations are τ-bench airline's (bench/_tau.py; ../shared/benchdata/README.md): GPT-4o serving a simulated
customer with 14 tools. At every assistant message that calls tools (index j) the request is the conversation
before it, traj[:j], exactly as recorded (the system prompt first, empty tool answers, `name` on tool messages:
nothing cleaned up), with all 14 tool schemas, window W and an output reserve of OUTPUT_RESERVE for every
manager, so that available = floor((W - 1024) * 0.9):

* ours: `Memory.context` (one task_id and one namespace per window and conversation, so nothing leaks between
  conversations; each window's run opens Memory on a fresh copy of the model, so no query cache holds an earlier
  run's queries); a refusal (any memory error) is counted, and the step keeps none of its needed values;
* trim_messages: LangChain's `trim_messages(strategy="last", start_on="human", include_system=True)` with
  max_tokens = available less the tokens of the 14 schemas (they are sent too; it may be 0 or less), counted
  as bench/context_trace.py's Trimmed does;
* recency: the system message and the newest messages that fit in the same, cut by message, tool pairs ignored.

Split (fixed in bench/_tau.py, never tuned on the held-out part): dev = task_id % 4 == 1, held-out =
task_id % 4 == 3; `own` is our own eight conversations (bench/agent_traces.py, four English, four Chinese, each
with its schemas), replayed the same way. Figures per split and window:

* needed values kept: bench/_tau.py says which values of a step's calls are needed (in the conversation before
  it, not in the system prompt or the schemas) and when one is kept; pooled over every (step, value), and the
  share of the steps that need any whose needed values are all kept;
* over budget: outputs whose tokens (OpenAI's formula over the messages plus the canonical JSON of every schema
  sent) exceed `available`; for ours also the steps whose report.tokens["total"] differs from that count;
* invalid tool sequences (bench/context_trace.tool_sequence_valid); refused steps (ours);
* tokens sent p50; assembly latency p50 / p95 (ours: the whole call; refused steps left out of both);
* ours alone: prefix hash unchanged between consecutive answered steps of a conversation; the steps with each
  action kind; the steps whose called tool was left out (report.tools_left_out); "touched although it fit": steps
  whose whole request fits in watermark × available (`[context] compact_watermark`)
  but whose output's non-system messages differ from the request's, or that left a tool out.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import shlex
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._tau import (
    SPLITS,
    Trajectory,
    called_tools,
    fixed_text,
    kept_share,
    kept_values,
    load_tools,
    load_trajectories,
    missing,
    needed_values,
    split_of,
    tool_steps,
)
from bench.agent_traces import traces
from bench.context_trace import Recency, Trimmed, fresh_embedder, output_tokens, tool_sequence_valid
from bench.context_trace_data import Trace, TraceTurn
from memory.config import load_config
from memory.context import ContextReport, ContextRequest, budget
from memory.context.tools import canonical
from memory.errors import MemoryError_
from memory.service import Memory
from memory.tokens import TokenCounter, get_counter

__all__ = ["SPLITS", "kept_share", "kept_values", "main", "needed_values", "run", "split_of"]

Chat = dict[str, Any]
WINDOWS = (4096, 6144, 8192, 16384, 32768)
OUTPUT_RESERVE = 1024
MANAGERS = ("ours", "trim_messages", "recency")
ORDER = ("held-out", "dev")  # the held-out figures are printed first
OWN = "own"  # our own conversations, English and Chinese (bench/agent_traces.py): tuned on, like dev
NO_TURN = TraceTurn(0, 0, 0, "", "", "")  # the peers' assemble() takes a turn and ignores it
_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True)
class Step:
    """One replayed step: the request is messages[:index]; what its calls need; what the request costs whole."""

    index: int
    needed: tuple[str, ...]
    called: tuple[str, ...]
    request_tokens: int  # every message and every schema


@dataclass(frozen=True)
class Answer:
    """What one manager sends for one step (messages None: refused)."""

    messages: list[Chat] | None
    tools: Sequence[Chat]
    ms: float
    report: ContextReport | None = None
    refusal: str | None = None


@dataclass
class Tally:
    """One manager's figures over one split at one window."""

    steps: int = 0
    refused: int = 0
    needed: int = 0
    kept: int = 0
    needing_steps: int = 0
    all_kept_steps: int = 0
    over: int = 0
    invalid: int = 0
    miscounted: int = 0
    tokens: list[int] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)
    same_prefix: list[bool] = field(default_factory=list)
    actions: Counter[str] = field(default_factory=Counter)
    called_left_out: int = 0
    fit: int = 0
    touched: int = 0

    def figures(self) -> dict[str, Any]:
        """Every figure, JSON-ready."""
        answered = self.steps - self.refused
        return {
            "steps": self.steps, "answered": answered, "refused": self.refused,
            "needed": self.needed, "kept": self.kept, "kept_share": _ratio(self.kept, self.needed),
            "needing_steps": self.needing_steps, "all_kept_steps": self.all_kept_steps,
            "all_kept_share": _ratio(self.all_kept_steps, self.needing_steps),
            "over_budget": self.over, "invalid_sequences": self.invalid, "miscounted": self.miscounted,
            "tokens_p50": statistics.median(self.tokens) if self.tokens else None,
            "ms_p50": statistics.median(self.ms) if self.ms else None, "ms_p95": _p(self.ms, 0.95),
            "prefix_same": sum(self.same_prefix), "prefix_pairs": len(self.same_prefix),
            "actions": dict(sorted(self.actions.items())), "called_tool_left_out": self.called_left_out,
            "fit_steps": self.fit, "touched_although_fit": self.touched,
        }


class Ours:
    """Memory.context at one window, on copies of the messages and schemas."""

    def __init__(self, memory: Memory, window: int, tools: Sequence[Chat]) -> None:
        self.memory, self.window, self.tools = memory, window, tools

    def answer(self, namespace: str, task_id: str, messages: Sequence[Chat], available: int) -> Answer:
        """One context call; a memory error is a refusal."""
        held, tools = copy.deepcopy(list(messages)), copy.deepcopy(list(self.tools))
        start = time.perf_counter()
        try:
            result = self.memory.context(ContextRequest(namespace, held, window=self.window, task_id=task_id,
                                                        tools=tools, output_reserve=OUTPUT_RESERVE))
        except MemoryError_ as error:
            return Answer(None, (), (time.perf_counter() - start) * 1000, refusal=str(error))
        ms = (time.perf_counter() - start) * 1000
        if result.report.budget.available != available:
            raise SystemExit(f"Memory.context's budget is {result.report.budget.available} tokens, the bench's "
                             f"{available}: the budget formula changed; update the bench")
        return Answer(list(result.messages), result.tools, ms, result.report)


def peer_answer(manager: Trimmed | Recency, messages: Sequence[Chat], room: int, tools: Sequence[Chat]) -> Answer:
    """A peer's messages within `room` tokens; it sends every schema."""
    call = manager.assemble(messages, room, NO_TURN)
    return Answer(call.messages, tools, call.ms)


def schema_tokens(counter: TokenCounter, tools: Sequence[Chat]) -> int:
    """What the schemas cost: each one's canonical JSON (memory.context.tools)."""
    return sum(counter.count(canonical(t)) for t in tools)


def plan(trajectory: Trajectory, tools: Sequence[Chat], counter: TokenCounter) -> list[Step]:
    """The steps of one conversation, with what each needs (the same at every window)."""
    messages = trajectory.messages
    fixed, schemas = fixed_text(messages, tools), schema_tokens(counter, tools)
    return [Step(j, tuple(needed_values(messages, j, fixed)), called_tools(messages[j]),
                 output_tokens(counter, messages[:j]) + schemas) for j in tool_steps(messages)]


def score(tally: Tally, step: Step, answer: Answer, available: int, counter: TokenCounter) -> None:
    """Add one step's answer to the tally (a refusal keeps nothing)."""
    tally.steps += 1
    tally.needed += len(step.needed)
    tally.needing_steps += bool(step.needed)
    if answer.messages is None:
        tally.refused += 1
        return
    kept = len(kept_values(step.needed, answer.messages))
    tally.kept += kept
    tally.all_kept_steps += bool(step.needed) and kept == len(step.needed)
    tokens = output_tokens(counter, answer.messages) + schema_tokens(counter, answer.tools)
    tally.tokens.append(tokens)
    tally.over += tokens > available
    tally.invalid += not tool_sequence_valid(answer.messages)
    tally.ms.append(answer.ms)
    if answer.report is not None:
        tally.miscounted += int(answer.report.tokens["total"]) != tokens


def score_ours(tally: Tally, step: Step, answer: Answer, request: Sequence[Chat], previous: str | None,
               fits: bool) -> str | None:
    """Ours' own figures for an answered step; returns its prefix hash (None after a refusal)."""
    report = answer.report
    if report is None or answer.messages is None:
        return None
    if previous is not None:
        tally.same_prefix.append(report.prefix_hash == previous)
    tally.actions.update({a.kind for a in report.actions})
    tally.called_left_out += any(name in report.tools_left_out for name in step.called)
    if fits:
        tally.fit += 1
        said = [m for m in answer.messages if m["role"] != "system"]
        tally.touched += said != [m for m in request if m["role"] != "system"] or bool(report.tools_left_out)
    return report.prefix_hash


def run_window(memory: Memory, window: int, trajectories: Sequence[Trajectory], steps: Mapping[str, list[Step]],
               tools_of: Mapping[str, Sequence[Chat]], counter: TokenCounter, refusals: Counter[str],
               examples: dict[str, str]) -> dict[str, Any]:
    """Every step of every conversation through the three managers (interleaved, so a busy machine slows all
    alike); the window's figures. `tools_of` maps a conversation's key to its schemas."""
    available = budget(window, OUTPUT_RESERVE).available
    watermark = float(memory.config.context.compact_watermark)
    recency = Recency(counter)
    tallies = {name: Tally() for name in MANAGERS}
    every_schema = 0
    for trajectory in trajectories:
        tools = tools_of[trajectory.key]
        schemas = schema_tokens(counter, tools)
        every_schema = max(every_schema, schemas)
        ours = Ours(memory, window, tools)
        trimmed = Trimmed(counter, Trace(trajectory.key, "", trajectory.messages, (), (), {}))
        previous: str | None = None
        for step in steps[trajectory.key]:
            request = trajectory.messages[:step.index]
            name = f"tau-w{window}-{trajectory.key}"
            answers = {"ours": ours.answer(name, name, request, available),
                       "trim_messages": peer_answer(trimmed, request, available - schemas, tools),
                       "recency": peer_answer(recency, request, available - schemas, tools)}
            for manager, answer in answers.items():
                score(tallies[manager], step, answer, available, counter)
            mine = answers["ours"]
            if mine.refusal is not None:
                masked = _NUMBER.sub("N", mine.refusal)
                refusals[masked] += 1
                examples.setdefault(masked, mine.refusal)
            previous = score_ours(tallies["ours"], step, mine, request, previous,
                                  step.request_tokens <= watermark * available)
    return {"available": available, "tool_tokens": every_schema, "watermark": watermark,
            "managers": {name: tally.figures() for name, tally in tallies.items()}}


def run(windows: Sequence[int] = WINDOWS, split: str = "both", limit: int | None = None,
        root: Path | None = None) -> dict[str, Any]:
    """Replay the chosen split(s) at every window; every figure, JSON-ready (SystemExit when the data is missing)."""
    reason = missing()
    if reason is not None:
        raise SystemExit(reason)
    started = time.perf_counter()
    tools, counter = load_tools(), get_counter()
    everything = load_trajectories()
    own, own_tools = _own()
    tools_of = {**{t.key: tools for t in everything}, **own_tools}
    chosen = [s for s in (*ORDER, OWN) if split in (s, "all") or (split == "both" and s in ORDER)]
    refusals: Counter[str] = Counter()
    examples: dict[str, str] = {}
    out: dict[str, Any] = {"windows": list(windows), "output_reserve": OUTPUT_RESERVE, "splits": {}}
    with tempfile.TemporaryDirectory(prefix="context-real-") as tmp:
        config = load_config().replace("service", data_dir=str((root or Path(tmp)) / "data"))
        for name in chosen:
            pool = own if name == OWN else [t for t in everything if split_of(t.task_id) == name]
            trajectories = pool[:limit]
            steps = {t.key: plan(t, tools_of[t.key], counter) for t in trajectories}
            figures: dict[str, Any] = {"task_ids": sorted({t.task_id for t in trajectories}),
                                       "trajectories": len(trajectories),
                                       "steps": sum(len(s) for s in steps.values()), "windows": {}}
            for window in windows:
                with Memory(config, command="bench", embedder=fresh_embedder(config)) as memory:
                    figures["windows"][str(window)] = run_window(memory, window, trajectories, steps, tools_of,
                                                                 counter, refusals, examples)
            out["splits"][name] = figures
    out["refusals"] = [{"message": examples[m], "pattern": m, "steps": n} for m, n in refusals.most_common()]
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def _own() -> tuple[list[Trajectory], dict[str, Sequence[Chat]]]:
    """Our own conversations (bench/agent_traces.py, English and Chinese) as trajectories, with their schemas."""
    chosen = list(traces())
    # Keyed by the trace's name (a valid namespace and task id); the negative task ids keep them out of the splits.
    out = [_Named(-1 - i, 0, 0.0, t.messages, t.name) for i, t in enumerate(chosen)]
    return list(out), {t.name: list(t.tools) for t in chosen}


@dataclass(frozen=True)
class _Named(Trajectory):
    """A trajectory of our own, keyed by its name."""

    name: str = ""

    @property
    def key(self) -> str:
        """The trace's name."""
        return self.name


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _p(samples: Sequence[float], q: float) -> float | None:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None


def _of(part: int, whole: int) -> str:
    return f"{part:,} / {whole:,} ({part / whole:.0%})" if whole else f"{part:,} / 0"


def _ms(f: Mapping[str, Any]) -> str:
    return f"{f['ms_p50']:.1f} / {f['ms_p95']:.1f}" if f["ms_p50"] is not None else "–"


Row = tuple[str, Callable[[Mapping[str, Any]], str], bool]  # label, cell, ours only
ROWS: tuple[Row, ...] = (
    ("needed values kept (pooled)", lambda f: _of(f["kept"], f["needed"]), False),
    ("steps with every needed value kept", lambda f: _of(f["all_kept_steps"], f["needing_steps"]), False),
    ("over budget (answered steps)", lambda f: f"{f['over_budget']:,} / {f['answered']:,}", False),
    ("report total ≠ bench count", lambda f: f"{f['miscounted']:,}", True),
    ("invalid tool sequences", lambda f: f"{f['invalid_sequences']:,} / {f['answered']:,}", False),
    ("refused steps", lambda f: _of(f["refused"], f["steps"]), True),
    ("tokens sent p50", lambda f: f"{f['tokens_p50']:,.0f}" if f["tokens_p50"] is not None else "–", False),
    ("prefix hash unchanged (consecutive steps)", lambda f: _of(f["prefix_same"], f["prefix_pairs"]), True),
    ("steps with each action", lambda f: ", ".join(f"{k} {n}" for k, n in f["actions"].items()) or "none", True),
    ("called tool left out", lambda f: _of(f["called_tool_left_out"], f["answered"]), True),
    ("touched although it fit", lambda f: _of(f["touched_although_fit"], f["fit_steps"]), True),
    ("latency ms p50 / p95", _ms, False),
)


def tables(result: Mapping[str, Any]) -> list[str]:
    """A markdown table per split and window: a row per figure, a column per manager."""
    out: list[str] = []
    for name, split in result["splits"].items():
        which = f"task_id % 4 == {SPLITS[name]}" if name in SPLITS else "bench/agent_traces.py, 4 en + 4 zh"
        out.append(f"\n## {name} ({which}): {split['trajectories']} conversations, {split['steps']:,} steps")
        for window, at in split["windows"].items():
            out += [f"\n{name}, window {int(window):,} (available {at['available']:,}; the schemas up to "
                    f"{at['tool_tokens']:,} tokens; watermark {at['watermark']:g})",
                    "| figure | " + " | ".join(MANAGERS) + " |", "|---" * (len(MANAGERS) + 1) + "|"]
            out += [f"| {label} | " + " | ".join("–" if only and m != "ours" else cell(at["managers"][m])
                                                for m in MANAGERS) + " |" for label, cell, only in ROWS]
    if result["refusals"]:
        out.append("\nours refused (digits masked; steps over every split and window; an example):")
        out += [f"  {r['steps']:,}× {r['pattern']}  e.g. {r['message']!r}" for r in result["refusals"][:5]]
    out.append(f"\nran in {result['seconds']:,.0f} s")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Replay the conversations at every window and print the tables (and the figures as JSON with --json)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--windows", default=",".join(map(str, WINDOWS)), help="window sizes in tokens, commas")
    parser.add_argument("--split", choices=("dev", "held-out", "both", OWN, "all"), default="both",
                        help=f"which conversations: τ-bench's (dev, held-out, both), ours ({OWN}), or all")
    parser.add_argument("--limit", type=int, help="the first N conversations of each split (a quick run)")
    parser.add_argument("--root", type=Path, help="an empty folder for the store (default: a temporary folder)")
    parser.add_argument("--json", type=Path, help="also write every figure to this file as JSON")
    args = parser.parse_args(argv)
    print("$ " + shlex.join([".venv/bin/python", "-m", "bench.context_real",
                             *(sys.argv[1:] if argv is None else argv)]), flush=True)
    result = run([int(w) for w in args.windows.split(",")], args.split, args.limit, args.root)
    result["command"] = ["python", "-m", "bench.context_real", *(sys.argv[1:] if argv is None else argv)]
    print("\n".join(tables(result)), flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
