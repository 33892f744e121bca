"""The context-assembly trace compacted again and again: what survives 1, 5, 20 and 50 compactions.

    .venv/bin/python -m bench.compaction_trace [--windows 8192,32768] [--question 0] [--haystacks 2]
    .venv/bin/python -m bench.compaction_trace --quick      # one haystack, the first window: a smoke run

The trace is bench/context_trace_data.py's (LongMemEval-S haystacks with tool calls woven in, the haystack's
question last), with two more rules said in passing (IN_PASSING below; the fact rules catch only the first). Turn by
turn, as in bench/context_trace.py, three managers get the messages the agent holds: ours (`Memory.context`, with
recall; each finished turn remembered off the clock), LangChain's `trim_messages` and a recency window, all with
the same `available` budget. When ours has compacted for the Nth time (N in CHECKPOINTS), the figures of that turn:

* constraints: share of the rules stated so far (the trace's three and the two said in passing) whose key phrase
  is in the output text;
* identifiers: of the identifiers (memory.context.identifiers: paths, URLs, ids, numbers, dates, ...) in the
  messages the summary covers (the ephemeral get_time answers left out: dropped by design), the share in the
  output text, and for ours also the share in the output or in the task items its output names, and those they
  name in turn (read back as an agent would, GET /v1/tasks/.../items/KEY); the peers have no references, so for
  them only the first;
* compression: the covered messages' tokens over the summary's.

And over the whole trace: evidence of the final question (its answer sessions, as in bench/context_trace.py) in
the final output, and for ours also in the output or the items its summary references; compactions and prefix-hash
changes per 100 turns; the compaction cost: a compacting call's time less the time of the same call made again
(which reuses the stored version), per 20,000 tokens of newly covered messages.
"""

from __future__ import annotations

import argparse
import copy
import re
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import context_trace_data as data
from bench.context_trace import (
    RESERVE,
    Recency,
    Trimmed,
    available_at,
    evidence_slice,
    fresh_embedder,
    output_text,
    output_tokens,
    tool_sequence_valid,
)
from bench.context_trace_data import EPHEMERAL_TOOLS, TOOLS, Trace, TraceTurn, build_trace, load_haystack
from memory.config import load_config
from memory.context import ContextRequest, parse_messages
from memory.context.identifiers import identifiers
from memory.context.tools import canonical
from memory.experience import MemoryTurn
from memory.service import Memory
from memory.tokens import get_counter

Chat = dict[str, Any]
CHECKPOINTS = (1, 5, 20, 50)
LARGE_SPAN = 5_000  # below it a compaction's fixed cost (its writes, the prior summary) makes a per-20k rate moot
# Rules said once, early: the fact rules catch the English one (the constraints block keeps it), not the Chinese one
# (only the summary's constraints can keep it).
IN_PASSING: tuple[tuple[int, str, str], ...] = (
    (9, "Oh, and don't use the requests library in any code for me.", "requests library"),
    (11, "表格的话只分析A列和B列。", "A列和B列"),
)
_KEY = re.compile(r"\b[\w.-]+/r\d+\b")


@dataclass
class Checkpoint:
    """The figures at the turn of the Nth compaction."""

    turn: int
    constraints: dict[str, float]  # manager -> share kept
    identifiers: dict[str, float]  # manager -> share in the output
    identifiers_reachable: float  # ours: in the output or behind a reference
    count: int  # identifiers in the covered messages
    compression: float
    lost: list[str]  # the constraints ours lost


@dataclass
class Run:
    """One window's figures."""

    checkpoints: dict[int, Checkpoint] = field(default_factory=dict)
    compactions: int = 0
    prefix_changes: int = 0
    turns: int = 0
    over: dict[str, int] = field(default_factory=dict)
    invalid: dict[str, int] = field(default_factory=dict)
    evidence: dict[str, float] = field(default_factory=dict)
    evidence_reachable: float = 0.0
    cost_ms: list[float] = field(default_factory=list)
    cost_ms_per_20k: list[float] = field(default_factory=list)  # spans of LARGE_SPAN tokens or more
    span_tokens: list[int] = field(default_factory=list)


def _reachable(memory: Memory, namespace: str, task_id: str, text: str) -> str:
    """The output text and the whole text of every task item it names, and of every item those name in turn (a
    compacted span's item names the span's before it, and the items a tool result of the span was set aside as),
    as an agent reading references would find them."""
    behind: list[str] = []
    waiting = list(dict.fromkeys(_KEY.findall(text)))
    seen = set(waiting)
    while waiting:
        key = waiting.pop()
        try:
            found = memory.tasks.read(namespace, task_id, key).text
        except Exception:
            continue
        behind.append(found)
        for more in _KEY.findall(found):
            if more not in seen:
                seen.add(more)
                waiting.append(more)
    return text + "\n" + re.sub(r"\s+", " ", "\n".join(behind))


def run(trace: Trace, window: int, memory: Memory, question: int) -> Run:
    """Every turn through ours and the peers; the checkpoints at the compactions listed."""
    counter = memory.counter
    available = available_at(window)
    peers = [Trimmed(counter, trace), Recency(counter)]
    namespace, task_id = f"compact-w{window}", f"compact-{question}"
    out = Run()
    previous_hash: str | None = None
    for t, turn in enumerate(trace.turns):
        held = list(trace.messages[:turn.call_end])
        start = time.perf_counter()
        result = memory.context(ContextRequest(namespace, copy.deepcopy(held), window=window, task_id=task_id,
                                               tools=list(TOOLS), ephemeral_tools=EPHEMERAL_TOOLS,
                                               output_reserve=RESERVE))
        ms = (time.perf_counter() - start) * 1000
        report = result.report
        outputs: dict[str, list[Chat]] = {"ours": list(result.messages)}
        for peer in peers:
            outputs[peer.name] = peer.assemble(held, available, turn).messages
        out.turns += 1
        for name, messages in outputs.items():
            extra = sum(counter.count(canonical(t)) for t in result.tools) if name == "ours" else 0
            out.over[name] = out.over.get(name, 0) + (output_tokens(counter, messages) + extra > available)
            out.invalid[name] = out.invalid.get(name, 0) + (not tool_sequence_valid(messages))
        out.prefix_changes += previous_hash is not None and report.prefix_hash != previous_hash
        previous_hash = report.prefix_hash
        summary = report.summary
        if summary is not None and summary.created:
            out.compactions += 1
            start = time.perf_counter()
            memory.context(ContextRequest(namespace, copy.deepcopy(held), window=window, task_id=task_id,
                                          tools=list(TOOLS), ephemeral_tools=EPHEMERAL_TOOLS, output_reserve=RESERVE))
            again = (time.perf_counter() - start) * 1000
            versions = memory.tasks.summaries(namespace, task_id)
            new = versions[-1].covered_tokens - (versions[-2].covered_tokens if len(versions) > 1 else 0)
            out.span_tokens.append(new)
            out.cost_ms.append(max(ms - again, 0.0))
            if new >= LARGE_SPAN:
                out.cost_ms_per_20k.append(max(ms - again, 0.0) * 20_000 / new)
            if out.compactions in CHECKPOINTS:
                out.checkpoints[out.compactions] = _checkpoint(memory, namespace, task_id, trace, t, outputs,
                                                               versions[-1])
        if t == len(trace.turns) - 1:
            for name, messages in outputs.items():
                out.evidence[name] = _evidence(trace, output_text(messages))
            out.evidence_reachable = _evidence(trace, _reachable(memory, namespace, task_id,
                                                                 output_text(outputs["ours"])))
        else:
            _remember(memory, namespace, turn)
    return out


def _checkpoint(memory: Memory, namespace: str, task_id: str, trace: Trace, t: int,
                outputs: dict[str, list[Chat]], version: Any) -> Checkpoint:
    stated = [c for c in trace.constraints if c.turn < t]
    texts = {name: output_text(messages) for name, messages in outputs.items()}
    parsed = parse_messages(list(trace.messages))
    # The answers of the ephemeral tools (get_time) are dropped by design after their turn: not counted.
    ephemeral = {c.id for m in parsed for c in m.tool_calls if c.name in EPHEMERAL_TOOLS}
    covered = [m for m in parsed if version.first <= m.index <= version.last and m.role != "system"
               and m.tool_call_id not in ephemeral]
    found = list(dict.fromkeys(i.text for m in covered for i in identifiers(m.content)))
    folded = {name: re.sub(r"\s+", " ", text) for name, text in texts.items()}
    reachable = _reachable(memory, namespace, task_id, folded["ours"])

    def share(text: str) -> float:
        return sum(re.sub(r"\s+", " ", i) in text for i in found) / len(found) if found else 1.0

    return Checkpoint(
        turn=t,
        constraints={n: sum(c.phrase in text for c in stated) / len(stated) if stated else 1.0
                     for n, text in texts.items()},
        identifiers={n: share(text) for n, text in folded.items()},
        identifiers_reachable=share(reachable), count=len(found),
        lost=[c.phrase for c in stated if c.phrase not in texts["ours"]],
        compression=version.covered_tokens / max(version.tokens, 1))


def _evidence(trace: Trace, text: str) -> float:
    found = [any(evidence_slice(e) in text for e in texts) for texts in trace.evidence.values()]
    return sum(found) / len(found)


def _remember(memory: Memory, namespace: str, turn: TraceTurn) -> None:
    said = [MemoryTurn(turn.user, speaker="user", timestamp=turn.timestamp)]
    if turn.assistant.strip():
        said.append(MemoryTurn(turn.assistant, speaker="assistant", timestamp=turn.timestamp))
    memory.remember(namespace, said)


def table(window: int, trace: Trace, result: Run) -> list[str]:
    """A markdown table per window: a column per checkpoint, a row per figure and manager."""
    points = [n for n in CHECKPOINTS if n in result.checkpoints]
    head = [f"\nwindow {window:,} tokens (available {available_at(window):,}), {len(trace.turns)} turns, "
            f"{result.compactions} compactions",
            "| figure | " + " | ".join(f"after {n} (turn {result.checkpoints[n].turn})" for n in points) + " |",
            "|---" * (len(points) + 1) + "|"]
    rows = []
    for name in ("ours", "trim_messages", "recency"):
        rows.append(f"| constraints kept, {name} | "
                    + " | ".join(f"{result.checkpoints[n].constraints[name]:.0%}" for n in points) + " |")
    rows.append("| constraints lost, ours | " + " | ".join(", ".join(result.checkpoints[n].lost) or "none"
                                                          for n in points) + " |")
    rows.append("| identifiers of the covered turns in the output + behind a reference, ours | "
                + " | ".join(f"{result.checkpoints[n].identifiers_reachable:.1%} of "
                             f"{result.checkpoints[n].count:,}" for n in points) + " |")
    for name in ("ours", "trim_messages", "recency"):
        rows.append(f"| identifiers in the output only, {name} | "
                    + " | ".join(f"{result.checkpoints[n].identifiers[name]:.1%}" for n in points) + " |")
    rows.append("| compression (covered tokens / summary tokens) | "
                + " | ".join(f"{result.checkpoints[n].compression:,.0f}×" for n in points) + " |")
    per100 = 100 / max(result.turns, 1)
    tail = [
        "",
        "- evidence of the final question in the output: " + ", ".join(
            f"{n} {v:.0%}" for n, v in result.evidence.items())
        + f"; ours with the items its summary references: {result.evidence_reachable:.0%}",
        f"- per 100 turns: {result.compactions * per100:.1f} compactions, "
        f"{result.prefix_changes * per100:.1f} prefix-hash changes",
        "- over-window outputs: " + ", ".join(f"{n} {v}" for n, v in result.over.items())
        + "; invalid tool sequences: " + ", ".join(f"{n} {v}" for n, v in result.invalid.items()),
    ]
    if result.cost_ms:
        cost = sorted(result.cost_ms)
        tail.append(f"- compaction cost (a compacting call less the same call again): p50 "
                    f"{statistics.median(cost):.0f} ms, max {cost[-1]:.0f} ms, for newly covered spans of "
                    f"{statistics.median(result.span_tokens):,.0f} tokens p50")
    if result.cost_ms_per_20k:
        cost = sorted(result.cost_ms_per_20k)
        tail.append(f"- the same per 20,000 tokens, spans of {LARGE_SPAN:,}+ tokens ({len(cost)}): p50 "
                    f"{statistics.median(cost):.0f} ms, max {cost[-1]:.0f} ms")
    return [*head, *rows, *tail]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", default="8192,32768", help="window sizes in tokens, comma-separated")
    parser.add_argument("--question", type=int, default=0, help="the first LongMemEval-S haystack (0-100)")
    parser.add_argument("--haystacks", type=int, default=2, help="haystacks in a row (more turns, more compactions)")
    parser.add_argument("--quick", action="store_true", help="one short haystack and the first window")
    parser.add_argument("--root", type=Path, help="data folder for the store (default: a temporary folder)")
    args = parser.parse_args(argv)
    windows = [int(w) for w in args.windows.split(",")][:1 if args.quick else None]
    print("$ " + shlex.join(["python", "-m", "bench.compaction_trace", *(sys.argv[1:] if argv is None else argv)]))
    said = (*data.CONSTRAINTS, *IN_PASSING)
    records = [load_haystack(args.question + k) for k in range(1 if args.quick else args.haystacks)]
    trace = build_trace(records, sessions=data_sessions(args.quick), constraints=said)
    counter = get_counter()
    print(f"trace: questions {args.question}..{args.question + len(records) - 1}, {len(trace.turns)} turns, "
          f"{len(trace.messages)} messages, {output_tokens(counter, trace.messages):,} tokens", flush=True)
    with tempfile.TemporaryDirectory(prefix="compaction-trace-") as tmp:
        for window in windows:
            config = load_config().replace("service", data_dir=str((args.root or Path(tmp)) / f"data-{window}"))
            with Memory(config, command="bench", embedder=fresh_embedder(config)) as memory:
                result = run(trace, window, memory, args.question)
            print("\n".join(table(window, trace, result)), flush=True)


def data_sessions(quick: bool) -> int | None:
    return 12 if quick else None


if __name__ == "__main__":
    main()
