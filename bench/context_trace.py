"""A long agent trace, turn by turn, through three context managers at each window size: what each would send.

    .venv/bin/python -m bench.context_trace [--windows 8192,32768,131072] [--question 0] [--root DIR]
    .venv/bin/python -m bench.context_trace --quick       # short trace, one window: a smoke run

The trace (bench/context_trace_data.py) is one LongMemEval-S haystack with tool calls woven in, constraints stated
in passing early on, and the haystack's question last. At turn t the agent holds every message up to turn t's
user message and that turn's tool calls and answers, and asks each manager for what to send:

* ours: `Memory.context` (the leading system message is the system prompt, the six tool schemas go with it,
  get_time is ephemeral, one task_id per trace); after the turn its user and assistant texts are stored with
  `Memory.remember` off the clock, one namespace per window; "ours, retrieval first" is the same call with
  `[context] retrieval_position = "before_history"`, on a store of its own;
* trim_messages: LangChain's `trim_messages(strategy="last", start_on="human", include_system=True)`, its
  token_counter our tokenizer with OpenAI's per-message formula (every call recounts, as such a counter does);
* recency: the system message and the newest messages that fit, cut by message, tool pairs ignored.

Both peers get `max_tokens` = the `available` budget of our call (the window less the default output reserve and
safety margin). Figures per window, over every turn:

* over window: outputs whose tokens exceed `available`, counted with the OpenAI formula
  (memory.context.messages.count_tokens), plus, for ours, the tokens of the tool schemas it kept (each schema's
  canonical JSON, memory.context.tools.canonical; OpenAI documents no formula for them);
* invalid tool sequences: outputs in which a tool message does not follow (after other tool messages only)
  the assistant message that made its call, or a call goes unanswered before the next other message; checked
  here, independently of the library's parser;
* constraint kept: share of the turns after a constraint's turn whose output text holds its key phrase;
* evidence: share of the question's answer sessions present in the final turn's output; a session is present
  when the middle 60 characters of one of its has_answer turns (all its turns when none is marked) appear in
  the output text, whitespace runs folded to one space on both sides;
* prefix hash unchanged (ours): share of consecutive turns with the same `report.prefix_hash`; append-only
  (all): share of consecutive turns whose output starts with the previous output less its last message, and the
  same with every system message left out (ours' retrieval and constraint blocks, everyone's prompt); shared
  prefix (all): the tokens of the leading messages an output has in common with the previous turn's, as a share
  of its message tokens (what a provider's prompt cache could reuse), the mean over turns;
* latency p50 / p95 of the assembly call; for ours also less the query embedding, timed on a second copy of
  the embedding model for the same query in the same run. Each window's run opens Memory on a fresh copy of the
  model and times with a fresh twin, so no query cache holds an earlier run's queries.

Then ours alone at about 100 and 1,000 messages of history (two haystacks in a row; the earlier turns
remembered first, and one untimed call, as the agent made one each turn), at the largest window.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import re
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, convert_to_messages, trim_messages

from bench.context_trace_data import EPHEMERAL_TOOLS, TOOLS, Trace, TraceTurn, build_trace, load_haystack
from memory.config import Config, load_config
from memory.context import ContextRequest, Message, ToolCall, budget, count_tokens, message_tokens, parse_messages
from memory.context.budget import DEFAULT_OUTPUT_RESERVE
from memory.context.constraints import BLOCK_HEADER
from memory.context.tools import canonical
from memory.embedding import Embedder
from memory.embedding.factory import BACKENDS, resolved
from memory.errors import ValidationError
from memory.experience import MemoryTurn
from memory.service import Memory
from memory.tokens import TokenCounter, get_counter

Chat = dict[str, Any]
QUICK_SESSIONS = 6
SCALE_SIZES = (100, 1000)
# The reply's reserve this bench has always used (a request that gives none now keeps a quarter of a small window):
# its figures stay comparable with the earlier rounds'.
RESERVE = DEFAULT_OUTPUT_RESERVE
_SPACES = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+")


def to_message(index: int, raw: Mapping[str, Any], counter: TokenCounter | None = None) -> Message:
    """A chat dict as a Message without the pair checks (an invalid sequence must still be counted); content parts
    are read as the library reads them (their texts, and what other parts cost)."""
    calls = tuple(ToolCall(c["id"], c["function"]["name"], c["function"].get("arguments", ""))
                  for c in raw.get("tool_calls") or ())
    content = raw.get("content") or ""
    if not isinstance(content, str):
        (parsed,) = parse_messages([{"role": "user", "content": content}], counter)
        return Message(index, raw["role"], parsed.content, raw.get("name"), calls, raw.get("tool_call_id"),
                       media=parsed.media)
    return Message(index, raw["role"], content, raw.get("name"), calls, raw.get("tool_call_id"))


def output_tokens(counter: TokenCounter, messages: Sequence[Chat]) -> int:
    """What a request with these messages costs (OpenAI's formula); invalid sequences are counted too."""
    try:
        parsed: Sequence[Message] = parse_messages(list(messages), counter)
    except ValidationError:
        parsed = [to_message(i, m, counter) for i, m in enumerate(messages)]
    return count_tokens(counter, parsed)


def tool_sequence_valid(messages: Sequence[Chat]) -> bool:
    """Every tool answer follows its call (after other answers only); every call is answered before anything else."""
    waiting: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            if message.get("tool_call_id") not in waiting:
                return False
            waiting.discard(message["tool_call_id"])
            continue
        if waiting:
            return False
        waiting = {c["id"] for c in message.get("tool_calls") or ()}
    return not waiting


def output_text(messages: Sequence[Chat]) -> str:
    """Every content and tool-call argument of the messages, whitespace folded."""
    parts = []
    for message in messages:
        content = message.get("content") or ""
        parts.append(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False))
        parts += [c["function"].get("arguments", "") for c in message.get("tool_calls") or ()]
    return _SPACES.sub(" ", "\n".join(parts))


def _conversation(messages: Sequence[Chat]) -> list[Chat]:
    return [m for m in messages if m["role"] != "system"]


def shared_prefix(counter: TokenCounter, messages: Sequence[Chat], before: Sequence[Chat]) -> float:
    """The share of the messages' tokens in the leading messages they have in common with `before`."""
    costs = [message_tokens(counter, to_message(i, m, counter)) for i, m in enumerate(messages)]
    same = next((i for i, (a, b) in enumerate(zip(messages, before, strict=False)) if a != b),
                min(len(messages), len(before)))
    return sum(costs[:same]) / sum(costs) if costs else 0.0


def evidence_slice(text: str) -> str:
    """The middle 60 characters of a turn (whitespace folded): what must appear for its session to count."""
    folded = _SPACES.sub(" ", text).strip()
    middle = len(folded) // 2
    return folded[max(0, middle - 30):middle + 30]


@dataclass
class Call:
    """One manager's answer for one turn."""

    messages: list[Chat]
    ms: float
    extra_tokens: int = 0  # tool schemas sent with the messages
    prefix_hash: str | None = None
    embed_ms: float | None = None
    reported_tokens: int | None = None  # what the manager says the request costs


class Recency:
    """The system message and the newest messages that fit, cut by message."""

    name = "recency"

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter

    def assemble(self, messages: Sequence[Chat], available: int, turn: TraceTurn) -> Call:
        """The newest suffix that fits, after the system message."""
        start = time.perf_counter()
        head = [messages[0]] if messages and messages[0]["role"] == "system" else []
        used = 3 + sum(message_tokens(self.counter, to_message(0, m, self.counter)) for m in head)
        kept: list[Chat] = []
        for raw in reversed(messages[len(head):]):
            used += message_tokens(self.counter, to_message(0, raw, self.counter))
            if used > available:
                break
            kept.append(raw)
        return Call(head + kept[::-1], (time.perf_counter() - start) * 1000)


class Trimmed:
    """LangChain's trim_messages over the trace converted once; each LangChain message's id is its position."""

    name = "trim_messages"

    def __init__(self, counter: TokenCounter, trace: Trace) -> None:
        self.counter = counter
        self.trace = trace
        self.converted: list[BaseMessage] = convert_to_messages(list(trace.messages))
        for i, message in enumerate(self.converted):
            message.id = str(i)

    def count(self, messages: list[BaseMessage]) -> int:
        """Our tokenizer and OpenAI's formula over the chat dicts these messages came from."""
        return count_tokens(self.counter, [to_message(i, self.trace.messages[int(m.id or 0)], self.counter)
                                           for i, m in enumerate(messages)])

    def assemble(self, messages: Sequence[Chat], available: int, turn: TraceTurn) -> Call:
        """trim_messages on the same messages, mapped back to their chat dicts."""
        held = self.converted[:len(messages)]
        start = time.perf_counter()
        kept = trim_messages(held, max_tokens=available, token_counter=self.count, strategy="last",
                             start_on="human", include_system=True)
        ms = (time.perf_counter() - start) * 1000
        return Call([self.trace.messages[int(m.id or 0)] for m in kept], ms)


class Ours:
    """Memory.context, with each finished turn remembered (off the clock) and the query embedding timed apart."""

    def __init__(self, memory: Memory, twin: Embedder, namespace: str, task_id: str, window: int,
                 name: str = "ours") -> None:
        self.name = name
        self.memory, self.twin = memory, twin
        self.namespace, self.task_id, self.window = namespace, task_id, window
        self.warnings: dict[str, int] = {}  # warning, numbers masked -> turns
        self.actions: dict[str, int] = {}  # action kind -> turns
        self.prefix_changes = {"tool set": 0, "constraints block": 0}
        self._prefix: tuple[tuple[str, ...], str] | None = None

    def assemble(self, messages: Sequence[Chat], available: int, turn: TraceTurn, *, recall: bool = True) -> Call:
        """One context call on a copy of the messages; then the same query embedded by the twin model."""
        held = copy.deepcopy(list(messages))
        start = time.perf_counter()
        result = self.memory.context(ContextRequest(self.namespace, held, window=self.window, task_id=self.task_id,
                                     tools=list(TOOLS), ephemeral_tools=EPHEMERAL_TOOLS, recall=recall,
                                     output_reserve=RESERVE))
        ms = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        self.twin.encode_query(turn.user)
        embed_ms = (time.perf_counter() - start) * 1000
        if result.report.budget.available != available:
            raise SystemExit(f"Memory.context's budget is {result.report.budget.available} tokens, the bench's "
                             f"{available}: the defaults differ; update the bench")
        for warning in {_NUMBER.sub("N", w.split(";")[0].split(":")[0]) for w in result.report.warnings}:
            self.warnings[warning] = self.warnings.get(warning, 0) + 1
        for kind in {a.kind for a in result.report.actions}:
            self.actions[kind] = self.actions.get(kind, 0) + 1
        self._note_prefix(result.messages, result.tools)
        schemas = sum(self.memory.counter.count(canonical(t)) for t in result.tools)
        return Call(list(result.messages), ms, schemas, result.report.prefix_hash, embed_ms,
                    int(result.report.tokens["total"]))

    def _note_prefix(self, messages: Sequence[Chat], tools: Sequence[Chat]) -> None:
        """Count what changed in the cached prefix since the last turn: the tools kept, the constraints block."""
        block = next((m["content"] for m in messages if m["role"] == "system"
                      and str(m["content"]).startswith(BLOCK_HEADER)), "")
        now = (tuple(t["function"]["name"] for t in tools), block)
        if self._prefix is not None:
            self.prefix_changes["tool set"] += now[0] != self._prefix[0]
            self.prefix_changes["constraints block"] += now[1] != self._prefix[1]
        self._prefix = now

    def finish(self, turn: TraceTurn) -> None:
        """Store the turn's user and assistant texts, as the agent does after each turn."""
        said = [MemoryTurn(turn.user, speaker="user", timestamp=turn.timestamp)]
        if turn.assistant.strip():
            said.append(MemoryTurn(turn.assistant, speaker="assistant", timestamp=turn.timestamp))
        self.memory.remember(self.namespace, said)


Manager = Recency | Trimmed | Ours


@dataclass
class Tally:
    """One manager's figures over the trace."""

    turns: int = 0
    over: int = 0
    invalid: int = 0
    kept: dict[str, list[bool]] = field(default_factory=dict)
    evidence: float = 0.0
    same_hash: list[bool] = field(default_factory=list)
    append_only: list[bool] = field(default_factory=list)
    conversation_append_only: list[bool] = field(default_factory=list)
    shared_prefix: list[float] = field(default_factory=list)
    miscounted: int = 0  # turns whose reported total differs from the bench's count
    ms: list[float] = field(default_factory=list)
    beyond_embed_ms: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)


def score(tally: Tally, call: Call, previous: Call | None, trace: Trace, t: int, available: int,
          counter: TokenCounter) -> None:
    """Add one turn's output to the tally."""
    tokens = output_tokens(counter, call.messages) + call.extra_tokens
    tally.turns += 1
    tally.tokens.append(tokens)
    tally.over += tokens > available
    tally.miscounted += call.reported_tokens is not None and call.reported_tokens != tokens
    tally.invalid += not tool_sequence_valid(call.messages)
    text = output_text(call.messages)
    for constraint in trace.constraints:
        if t > constraint.turn:
            tally.kept.setdefault(constraint.phrase, []).append(constraint.phrase in text)
    if t == len(trace.turns) - 1:
        found = [any(evidence_slice(e) in text for e in texts) for texts in trace.evidence.values()]
        tally.evidence = sum(found) / len(found)
    tally.ms.append(call.ms)
    if call.embed_ms is not None:
        tally.beyond_embed_ms.append(call.ms - call.embed_ms)
    if previous is not None:
        tally.append_only.append(call.messages[:len(previous.messages) - 1] == previous.messages[:-1])
        tally.shared_prefix.append(shared_prefix(counter, call.messages, previous.messages))
        said, before = _conversation(call.messages), _conversation(previous.messages)
        tally.conversation_append_only.append(said[:len(before) - 1] == before[:-1])
        if call.prefix_hash is not None:
            tally.same_hash.append(call.prefix_hash == previous.prefix_hash)


def run_window(trace: Trace, managers: Sequence[Manager], available: int,
               counter: TokenCounter) -> dict[str, Tally]:
    """Every turn through every manager (interleaved, so a busy machine slows all alike)."""
    tallies = {m.name: Tally() for m in managers}
    previous: dict[str, Call] = {}
    for t, turn in enumerate(trace.turns):
        held = trace.messages[:turn.call_end]
        for manager in managers:
            call = manager.assemble(held, available, turn)
            score(tallies[manager.name], call, previous.get(manager.name), trace, t, available, counter)
            previous[manager.name] = call
        for manager in managers:
            if isinstance(manager, Ours) and t < len(trace.turns) - 1:
                manager.finish(turn)
    return tallies


def _p(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _share(flags: Sequence[bool]) -> str:
    return f"{sum(flags) / len(flags):.0%}" if flags else "–"


def _ms(samples: Sequence[float]) -> str:
    return f"{statistics.median(samples):.1f} / {_p(samples, 0.95):.1f}" if samples else "–"


def table(window: int, available: int, trace: Trace, tallies: Mapping[str, Tally]) -> list[str]:
    """One markdown table: a row per figure, a column per manager."""
    names = list(tallies)
    rows: list[tuple[str, Callable[[Tally], str]]] = [
        ("over-window outputs", lambda x: f"{x.over} / {x.turns}"),
        ("invalid tool sequences", lambda x: f"{x.invalid} / {x.turns}"),
        *[(f"'{c.phrase}' kept (turns after {c.turn})", lambda x, p=c.phrase: _share(x.kept.get(p, [])))
          for c in trace.constraints],
        (f"evidence sessions in final output ({len(trace.evidence)})", lambda x: f"{x.evidence:.0%}"),
        ("prefix hash unchanged", lambda x: _share(x.same_hash)),
        ("append-only share", lambda x: _share(x.append_only)),
        ("append-only share, system messages left out", lambda x: _share(x.conversation_append_only)),
        ("shared prefix, share of tokens (mean)",
         lambda x: f"{statistics.mean(x.shared_prefix):.0%}" if x.shared_prefix else "–"),
        ("output tokens p50 / max", lambda x: f"{statistics.median(x.tokens):,.0f} / {max(x.tokens):,}"),
        ("assemble ms p50 / p95", lambda x: _ms(x.ms)),
        ("assemble ms less query embedding", lambda x: _ms(x.beyond_embed_ms)),
    ]
    out = [f"\nwindow {window:,} tokens (available {available:,}), {len(trace.turns)} turns, "
           f"{len(trace.messages)} messages",
           "| figure | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    out += [f"| {label} | " + " | ".join(cell(tallies[n]) for n in names) + " |" for label, cell in rows]
    return out


def notes_of(window: int, ours: Ours, tally: Tally) -> list[str]:
    """What ours did over the trace: turns per action kind and per warning, and any count it got wrong."""
    out = [f"window {window:,}, ours, turns with each action: "
           + ", ".join(f"{kind} {n}" for kind, n in sorted(ours.actions.items()))]
    out.append("  prefix changes: " + ", ".join(f"{what} {n}" for what, n in ours.prefix_changes.items()))
    out += [f"  warned in {n} turns: {warning}" for warning, n in sorted(ours.warnings.items())]
    if tally.miscounted:
        out.append(f"  report.tokens['total'] differs from the bench's count in {tally.miscounted} turns")
    return out


def fresh_embedder(config: Config) -> Embedder:
    """A new copy of the configured model with an empty query cache (the process-wide one remembers queries
    of an earlier window's run): one for each Memory, and a twin that times the query embedding alone."""
    settings = resolved(config.embedding)
    embedder: Embedder = importlib.import_module(BACKENDS[settings.backend]).load(settings)
    return embedder


def available_at(window: int) -> int:
    """The input budget of a window with the bench's output reserve and the default safety margin."""
    return budget(window, RESERVE).available


def scale(memory: Memory, twin: Embedder, question: int, window: int, calls: int,
          sizes: Sequence[int]) -> list[str]:
    """Ours alone at about `sizes` messages of history: two haystacks in a row, earlier turns remembered first."""
    trace = build_trace([load_haystack(question), load_haystack(question + 1)])
    available = available_at(window)
    out = [f"\nours at a history of N messages (window {window:,}, {calls} consecutive turns each, after "
           "one untimed turn)",
           "| messages (mean) | assemble ms p50 / p95 | less query embedding p50 / p95 | with recall off p50 / p95 |",
           "|---|---|---|---|"]
    for size in sizes:
        first = next((i for i, t in enumerate(trace.turns) if t.call_end >= size), None)
        if first is None or first + calls >= len(trace.turns):
            out.append(f"| {size:,} | trace too short | |")
            continue
        ours = Ours(memory, twin, f"scale-{size}", f"scale-{question}-{size}", window)
        for turn in trace.turns[:first]:
            ours.finish(turn)
        # An agent calls every turn: the untimed call warms what a first call over a long history would fill.
        ours.assemble(trace.messages[:trace.turns[first].call_end], available, trace.turns[first])
        ours.finish(trace.turns[first])
        first += 1
        tally = Tally()
        alone: list[float] = []  # the same turn again without recall: what assembly itself costs
        for turn in trace.turns[first:first + calls]:
            call = ours.assemble(trace.messages[:turn.call_end], available, turn)
            tally.ms.append(call.ms)
            tally.beyond_embed_ms.append(call.ms - (call.embed_ms or 0.0))
            alone.append(ours.assemble(trace.messages[:turn.call_end], available, turn, recall=False).ms)
            ours.finish(turn)
        held = statistics.mean(t.call_end for t in trace.turns[first:first + calls])
        out.append(f"| {held:,.0f} | {_ms(tally.ms)} | {_ms(tally.beyond_embed_ms)} | {_ms(alone)} |")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """Build the trace, run it at every window, then the history-size latencies; print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", default="8192,32768,131072", help="window sizes in tokens, comma-separated")
    parser.add_argument("--quick", action="store_true", help="a short trace and the first window only")
    parser.add_argument("--question", type=int, default=0, help="which LongMemEval-S haystack (0-100)")
    parser.add_argument("--root", type=Path, help="data folder for the store (default: a temporary folder)")
    parser.add_argument("--scale-calls", type=int, default=20, help="timed turns per history size")
    parser.add_argument("--scale-only", action="store_true", help="only the timings at 100 and 1,000 messages")
    args = parser.parse_args(argv)
    windows = [int(w) for w in args.windows.split(",")][:1 if args.quick else None]
    print("$ " + shlex.join(["python", "-m", "bench.context_trace", *(sys.argv[1:] if argv is None else argv)]))
    trace = build_trace([load_haystack(args.question)], sessions=QUICK_SESSIONS if args.quick else None)
    counter = get_counter()
    _show([f"trace: question {args.question} ({trace.question_id}), {len(trace.turns)} turns, "
           f"{len(trace.messages)} messages, {output_tokens(counter, trace.messages):,} tokens"])
    peers: list[Manager] = [Trimmed(counter, trace), Recency(counter)]
    with tempfile.TemporaryDirectory(prefix="context-trace-") as tmp:
        config = load_config().replace("service", data_dir=str((args.root or Path(tmp)) / "data"))
        # The same call with retrieved memory before the history ([context] retrieval_position), on a store of
        # its own: what the default placement after the history buys in reusable prefix.
        first = config.replace("context", retrieval_position="before_history").replace(
            "service", data_dir=str((args.root or Path(tmp)) / "data-retrieval-first"))
        for window in [] if args.scale_only else windows:
            with Memory(config, command="bench", embedder=fresh_embedder(config)) as memory, \
                    Memory(first, command="bench", embedder=fresh_embedder(first)) as other:
                ours = Ours(memory, fresh_embedder(config), f"trace-w{window}", f"trace-{args.question}", window)
                before = Ours(other, fresh_embedder(first), f"trace-w{window}", f"trace-{args.question}", window,
                              name="ours, retrieval first")
                tallies = run_window(trace, [ours, before, *peers], available_at(window), counter)
            _show([*table(window, available_at(window), trace, tallies), "",
                   *notes_of(window, ours, tallies["ours"])])
        with Memory(config, command="bench", embedder=fresh_embedder(config)) as memory:
            sizes = SCALE_SIZES[:1] if args.quick else SCALE_SIZES
            calls = 5 if args.quick else args.scale_calls
            _show(scale(memory, fresh_embedder(config), args.question, max(windows), calls, sizes))


def _show(lines: Sequence[str]) -> None:
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
