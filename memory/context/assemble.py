"""Fit one agent turn into its window: the order of the steps, and where each token goes.

1. Check the request: the budget (memory.context.budget), the messages and the tool schemas; the system prompt
   is `system` and the leading system messages; the current turn starts at the latest user message.
2. Drop earlier turns' ephemeral messages (memory.context.ephemeral).
3. Reduce tool results with the processors (memory.context.processors); the original is offloaded.
4. Observe the user messages' constraints into fact memory (once per message), so that one said in passing
   survives when its message is pruned or dropped.
5. Put old and oversized tool results behind references, in batches (memory.context.tool_results).
6. Take what is never cut (system prompt, constraints block within its share and restatement, current turn),
   share the rest between tools, retrieval, history and tool results (memory.context.allocation), choose the
   tools, compact the older history into a stored summary past the watermark (memory.context.compaction), recall
   into the retrieval share, and last prune more tool results and drop the oldest history where a share is still
   exceeded.
7. Write the turn in a cache-stable order: system prompt, tools (sorted), constraints, the history's summary,
   history, retrieved memory, the constraints restated, the current turn; `prefix_hash` covers the first three.

Offloaded texts are task items of the request's task (a conversation without `task_id` gets one derived from its
first messages, reported as `task_id`), added once per text (TaskMemory.add's `ref`), so a placeholder names the
same key on every turn and the history stays append-only between pruning batches.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from memory.bullet import clean
from memory.config import Config
from memory.context import allocation
from memory.context.budget import budget as make_budget
from memory.context.compaction import boundary, digest, instructions, span_text, triggered
from memory.context.constraints import BLOCK_HEADER, block, restatement
from memory.context.ephemeral import drop_ephemeral
from memory.context.messages import PER_MESSAGE, REPLY_PRIMING, Message, group, message_tokens, parse_messages
from memory.context.model import Action, ContextReport, ContextRequest, ContextResult, SummaryInUse
from memory.context.processors import PROCESSORS, Processed, process
from memory.context.processors.backref import BackReferences
from memory.context.summariser import ModelSummariser
from memory.context.summary import summarise
from memory.context.tool_results import ToolAction, prune_oldest, prune_tool_results
from memory.context.tools import Similarity, Tool, canonical, parse_tools, select_tools
from memory.errors import ValidationError
from memory.facts.memory import FactMemory
from memory.facts.records import FactRecord
from memory.namespaces import check_namespace
from memory.share import allocate
from memory.task import TaskMemory
from memory.task.model import SummaryVersion
from memory.task.policy import check_task_id
from memory.text import remembered
from memory.tokens import CachingCounter, TokenCounter

__all__ = ["Assembler", "Recall", "Recalled"]

class Recalled(Protocol):
    """What this package reads of a recall result (memory.recall.model.RecallResult; recall sits beside it)."""

    @property
    def rendered(self) -> str: ...

    @property
    def items(self) -> Sequence[Any]: ...


# (namespace, query, budget, task_id, filters, min_score) -> recall without the fact tier (the facade's Recaller)
Recall = Callable[[str, str, int, str | None, Mapping[str, Any] | None, float | None], Recalled]

_NO_PROCESSOR = "none"
_POINTER_TOKENS = 24  # about what "[the whole result: task item <key>]" costs
_OBSERVED_SIZE = 20_000  # user messages whose facts were observed, remembered per process
_COSTS_SIZE = 200_000  # messages whose token count is remembered
_SELECTED_SIZE = 10_000  # tasks whose last tool selection is remembered
_REDUCTIONS_SIZE = 20_000  # tool results whose processed form is remembered


@dataclass
class _Turn:
    """The request split into its parts, changed step by step."""

    system: list[Message]
    history: list[Message]
    current: list[Message]


class Assembler:
    """Assembles turns for the facade (Memory.context): holds the tiers it reads and writes, and a count cache."""

    def __init__(self, counter: TokenCounter, facts: FactMemory, tasks: TaskMemory, recall: Recall,
                 config: Config, similarity: Similarity | None = None) -> None:
        self._counter = CachingCounter(counter)
        self._facts = facts
        self._tasks = tasks
        self._recall = recall
        self._config = config
        self._similarity = similarity
        self._summariser = ModelSummariser(config.summariser, counter) if config.summariser.enabled else None
        # What a system message of ours (constraints, retrieval, summary) costs around its text.
        self._system_overhead = PER_MESSAGE + self._counter.count("system")
        self._costs: dict[Message, int] = {}
        self._reductions: dict[tuple[str, str], Processed | None] = {}
        self._item_ids: dict[str, tuple[str | None, ...] | None] = {}
        self._back_written: dict[tuple[str, tuple[str | None, ...]], str] = {}
        self._selected: OrderedDict[tuple[str, str], tuple[str, ...]] = OrderedDict()
        self._observed: OrderedDict[tuple[str, str, str], frozenset[tuple[str, str]]] = OrderedDict()  # by text
        self._lock = threading.Lock()
        remembered.register(self.forget)

    def forget(self) -> None:
        """Drop every text remembered from requests (a deletion must leave no copy: memory.text.remembered)."""
        with self._lock:
            self._costs.clear()
            self._reductions.clear()
            self._item_ids.clear()
            self._back_written.clear()
            self._selected.clear()
            self._observed.clear()
        self._counter.forget()

    def assemble(self, request: ContextRequest) -> ContextResult:
        """The messages and tools to send for this turn, inside its window, and the report."""
        cfg = self._config.context
        check_namespace(request.namespace)
        window = make_budget(request.window, cfg.output_reserve if request.output_reserve is None
                             else request.output_reserve,
                             cfg.safety_margin if request.safety_margin is None else request.safety_margin)
        weights = allocation.shares(cfg.allocation if request.allocation is None else request.allocation)
        messages = parse_messages(request.messages)
        if not messages:
            raise ValidationError("messages must hold at least one message (the user's latest, at least)")
        tools = parse_tools(request.tools, self._counter)
        ephemeral_tools = _names(request.ephemeral_tools, "ephemeral_tools", cfg.ephemeral_tools)
        chosen = _processors(request.processors)
        if request.system is not None and (not isinstance(request.system, str) or not request.system.strip()):
            raise ValidationError("system must be the system prompt as a non-empty string, or left out")
        task_id = check_task_id(request.task_id) if request.task_id is not None else _derived_task(messages,
                                                                                                  request.system)
        if request.parent_task_id is not None:
            check_task_id(request.parent_task_id, "parent_task_id")
        turn = _split(messages, request.system)
        query = _query(request.query, turn)
        actions: list[Action] = []
        warnings: list[str] = []
        # Checked before anything is written: a turn refused here leaves no fact and no task item behind.
        pinned_tools = sum(t.tokens for t in tools if t.pinned)
        least = self._tokens(turn.system) + self._tokens(turn.current[:1]) + REPLY_PRIMING + pinned_tools
        if least > window.available:
            raise ValidationError(
                f"the window leaves {window.available} tokens for the input, less than the system prompt "
                f"({self._tokens(turn.system)} tokens), the latest user message and the pinned tools need ({least} "
                "tokens with them); send a larger window, a smaller output_reserve, or a shorter system prompt")

        kept, dropped = drop_ephemeral([*turn.history, *turn.current], ephemeral_tools)
        actions += [Action("dropped_ephemeral", d.index, self._cost_of(messages, d.index), 0, tool=d.tool)
                    for d in dropped]
        offload = _Offloads(self._tasks, request.namespace, task_id, request.parent_task_id)
        body, processed = self._process(list(kept), chosen, offload)
        actions += processed
        # A processed result pruned later points at its original, offloaded when it was processed.
        offload.originals.update({a.index: a.key for a in processed if a.index is not None and a.key is not None})
        facts, said_at = self._constraints(request, task_id,
                                           [m for m in messages if m.role == "user" and not m.ephemeral])
        body_t, pruned = prune_tool_results(body, self._counter, offload, keep=cfg.keep_tool_results,
                                            cap_tokens=cfg.tool_result_cap, batch_tokens=cfg.prune_batch_tokens,
                                            protected={i for i, m in enumerate(body) if m.pinned})
        actions += [_tool_action(a) for a in pruned]
        # The latest user message is never cut; what came before it and the tool loop after it are the history.
        at = turn.current[0].index if turn.current else len(messages)
        before = [m for m in body_t if m.index < at]
        user = [m for m in body_t if m.index == at]
        tail = [m for m in body_t if m.index > at]

        facts, left_out_facts = self._capped(facts, said_at, int(window.available * cfg.constraints_share))
        if left_out_facts:
            warnings.append(f"the constraints block holds what the conversation's rules state; the "
                            f"{len(left_out_facts)} oldest unpinned ones were left out of it to keep it within "
                            f"context.constraints_share of the window (they stay in fact memory, and a compacted "
                            "history's summary keeps them while it has room)")
        constraints = self._constraint_messages(facts, bool(before))
        fixed = {"system": self._tokens(turn.system), "constraints": self._tokens(constraints),
                 "current": self._tokens(user) + REPLY_PRIMING, "pinned_tools": pinned_tools}
        if fixed["system"] + fixed["constraints"] + pinned_tools > window.available:
            raise ValidationError(
                f"the window leaves {window.available} tokens for the input, less than the system prompt "
                f"({fixed['system']} tokens), the pinned constraints ({fixed['constraints']} tokens) and the pinned "
                f"tools ({pinned_tools} tokens) need; send a larger window, a smaller output_reserve, or unpin some")
        rest = window.available - sum(fixed.values())
        if rest < 0:
            raise ValidationError(
                f"the latest user message (messages[{at}], {fixed['current']} tokens) does not fit the "
                f"{window.available} tokens the window leaves after the system prompt and constraints; send a "
                "larger window or a shorter message")
        history = [*before, *tail]
        tool_cost = sum(t.tokens for t in tools) - pinned_tools
        history_cost = self._tokens([m for m in history if m.role != "tool"])
        results_cost = self._tokens([m for m in history if m.role == "tool"])
        wants_recall = request.recall and bool(query.strip())
        grants = allocate(rest, weights, {"tools": tool_cost, "history": history_cost, "tool_results": results_cost,
                                          "retrieval": rest if wants_recall else 0})

        # The tools may always use their share of what the system prompt and constraints leave, whatever this
        # turn's message and history need: the tool block is part of the cached prefix and should not flicker.
        steady = int((window.available - fixed["system"] - fixed["constraints"] - pinned_tools)
                     * weights["tools"] / sum(weights.values()))
        tools_grant = min(rest, max(grants["tools"], steady))
        kept_tools, left_out = self._choose_tools((request.namespace, task_id), tools, tools_grant + pinned_tools,
                                                  query)
        tools_tokens = sum(t.tokens for t in kept_tools)
        if left_out:
            actions.append(Action("tools_selected", None, tool_cost + pinned_tools, tools_tokens,
                                  detail="left out: " + ", ".join(left_out)))
            warnings.append(f"the tool schemas need {tool_cost + pinned_tools} tokens, more than their share of "
                            f"{tools_grant + pinned_tools}; kept the pinned and the most relevant, left out "
                            f"{', '.join(left_out)}")

        spare = rest - (tools_tokens - pinned_tools)
        # The history's room when it wants all it may have: what the watermark and the summary's share are of. It
        # leaves the latest message out: a long pasted message squeezes this turn, and a summary rewritten for it
        # would lose for good what it had room for before.
        steady = spare + self._tokens(user)
        most = allocate(steady, weights, {"history": steady, "tool_results": steady,
                                          "retrieval": steady if wants_recall else 0})
        summary, before, tail, in_use = self._compact(request, task_id, messages, before, user, tail,
                                                       most["history"] + most["tool_results"], query, facts,
                                                       actions, warnings)
        if in_use is not None and self._tokens(summary) > spare // 2:
            summary = self._shortened(task_id, request.namespace, in_use, spare, warnings)
            in_use = in_use if summary else None  # the report names the summary sent, and none was
        history_cost = self._tokens([m for m in [*summary, *before, *tail] if m.role != "tool"])
        results_cost = self._tokens([m for m in [*before, *tail] if m.role == "tool"])
        # Retrieval takes what the history does not need of its share, and never the summary's room.
        retrieval, found = self._retrieval(request, task_id, query, spare - max(self._tokens(summary), min(
            history_cost + results_cost, grants["history"] + grants["tool_results"])) if wants_recall else 0)
        room = spare - self._tokens(retrieval) - self._tokens(summary)
        share = allocate(room, weights, {"history": history_cost - self._tokens(summary),
                                         "tool_results": results_cost})
        before, tail, more = self._fit_history(before, tail, share, room, window.available, offload,
                                               {a.index for a in pruned if a.kind == "pruned"})
        actions += more
        gone = [a for a in more if a.kind == "truncated"]
        if gone:
            warnings.append(f"the history is over its share: the {len(gone)} oldest unpinned units "
                            f"({sum(a.tokens_before for a in gone)} tokens, from messages[{gone[0].index}]) were left "
                            "out (not summarised)")

        head = [*turn.system, *constraints[:1]]
        # A summary that covers part of the tool loop after the latest user message comes after that message.
        late = in_use is not None and in_use.last > at
        out, tokens = self._written(turn.system, constraints[:1], constraints[1:] if before or summary else [],
                                    retrieval, [] if late else summary, before, user, [*summary, *tail] if late
                                    else tail, cfg.retrieval_position, tools_tokens, window.available)
        grants_out = {"tools": tools_grant + pinned_tools, "retrieval": grants["retrieval"], **share}
        report = ContextReport(
            budget=window, tokens=tokens, grants=grants_out, actions=tuple(sorted(actions, key=_action_order)),
            prefix_hash=_prefix_hash(head, kept_tools), task_id=task_id, retrieved=found,
            warnings=tuple(warnings), tools_left_out=left_out, summary=in_use)
        return ContextResult(tuple(_dump(m) for m in out), tuple(dict(t.schema) for t in kept_tools), report)

    # --- steps ---------------------------------------------------------------------------------------------

    def _written(self, system: list[Message], block: list[Message], restate: list[Message],
                 retrieval: list[Message], summary: list[Message], before: list[Message], user: list[Message],
                 tail: list[Message], position: str, tools_tokens: int,
                 available: int) -> tuple[list[Message], dict[str, int]]:
        """The messages in their order and their tokens per category, checked against what is sent."""
        if position == "before_history":
            out = [*system, *block, *retrieval, *summary, *before, *restate, *user, *tail]
        else:  # after the history: the history then belongs to what a provider's prompt cache can reuse
            out = [*system, *block, *summary, *before, *retrieval, *restate, *user, *tail]
        history = [m for m in [*before, *tail] if not _is_summary(m)]
        tokens = {
            "system": self._tokens(system),
            "tools": tools_tokens,
            "constraints": self._tokens([*block, *restate]),
            "summary": self._tokens([m for m in [*summary, *tail] if _is_summary(m)]),
            "retrieval": self._tokens(retrieval),
            "history": self._tokens([m for m in history if m.role != "tool"]),
            "tool_results": self._tokens([m for m in history if m.role == "tool"]),
            "current": self._tokens(user) + REPLY_PRIMING,
        }
        tokens["total"] = sum(tokens.values())
        counted = self._tokens(out) + REPLY_PRIMING + tools_tokens
        if counted != tokens["total"] or counted > available:  # each step keeps its share: a defect
            raise RuntimeError(f"context assembly miscounted: {counted} tokens sent, {tokens['total']} reported, "
                               f"{available} available")
        return out, tokens

    def _process(self, body: list[Message], chosen: Mapping[str, str],
                 offload: Callable[[Message, str], str]) -> tuple[list[Message], list[Action]]:
        names = {call.id: call.name for m in body for call in m.tool_calls}
        seen = BackReferences(self._item_ids, self._back_written)
        actions = []
        out = []
        for message in body:
            if message.role != "tool":
                out.append(message)
                continue
            tool = names.get(message.tool_call_id or "", "a tool")
            choice = chosen.get(tool)
            if choice == _NO_PROCESSOR:
                out.append(message)
                continue
            text = seen.reduce(message.content, f"messages[{message.index}]") or message.content
            done = self._reduced(tool, choice, text)
            reduced = done.text if done is not None else text
            if reduced == message.content:
                out.append(message)
                continue
            before = self._counter.count(message.content)
            if self._counter.count(reduced) + _POINTER_TOKENS >= before:  # not worth a reference
                out.append(message)
                continue
            key = offload(message, tool)
            reduced += f"\n[the whole result: task item {key}]"
            after = self._counter.count(reduced)
            used = done.name if done is not None else seen.name
            out.append(replace(message, content=reduced))
            actions.append(Action("processed", message.index, before, after, key, tool, used))
        return out, actions

    def _choose_tools(self, task: tuple[str, str], tools: Sequence[Tool], grant: int,
                      query: str) -> tuple[tuple[Tool, ...], tuple[str, ...]]:
        """select_tools, with the task's last selection remembered so that it can be sent again."""
        kept, left_out = select_tools(tools, grant, query, self._similarity, self._selected.get(task, ()))
        if left_out:
            with self._lock:
                self._selected[task] = tuple(t.name for t in kept if not t.pinned)
                while len(self._selected) > _SELECTED_SIZE:
                    self._selected.popitem(last=False)
        return kept, left_out

    def _reduced(self, tool: str, choice: str | None, text: str) -> Processed | None:
        """process(), remembered: the same results come back every turn and reduce the same way."""
        memo = (choice or "", text)
        if memo in self._reductions:
            return self._reductions[memo]
        done = process(tool, text, PROCESSORS, {tool: choice} if choice else None)
        if len(self._reductions) >= _REDUCTIONS_SIZE:
            self._reductions.clear()
        self._reductions[memo] = done
        return done

    def _constraints(self, request: ContextRequest, task_id: str,
                     users: Sequence[Message]) -> tuple[list[FactRecord], dict[tuple[str, str], int]]:
        """The facts for the constraints block: pinned ones in force and those the user messages state; and for
        each stated one, the index of the last message stating it (what "newest" means when the block is full)."""
        scopes = _scopes(request, task_id)
        said_at: dict[tuple[str, str], int] = {}
        if self._config.context.observe_facts:
            longest = self._config.context.observe_max_tokens
            for message in users:
                # A long message is mostly pasted material (an article, a log) whose imperatives are not the
                # user's rules (bench/context_trace.py has one); the rules read the short ones.
                if self._counter.count(message.content) <= longest:
                    said_at.update(dict.fromkeys(self._observe(request.namespace, task_id, message), message.index))
        facts = [f for f in self._facts.list(request.namespace, scopes=scopes)
                 if f.pinned or (f.scope, f.key) in said_at]
        return facts, said_at

    def _observe(self, namespace: str, task_id: str, message: Message) -> frozenset[tuple[str, str]]:
        cache_key = (namespace, task_id, message.content)
        with self._lock:
            known = self._observed.get(cache_key)
        if known is not None:
            return known
        # The rules tell a standing rule from one for this request only; the latter is kept for this task.
        change = self._facts.observe(namespace, message.content, source=f"conversation {task_id}", task_id=task_id)
        ids = {i for outcome in change.outcomes for i in outcome.facts}
        found = {(r.scope, r.key) for r in change.stored}
        if ids - {r.id for r in change.stored}:
            scopes = ("global", f"session:{task_id}")
            found |= {(f.scope, f.key) for f in self._facts.list(namespace, scopes=scopes) if f.id in ids}
        keys = frozenset(found)
        with self._lock:
            self._observed[cache_key] = keys
            if len(self._observed) > _OBSERVED_SIZE:
                self._observed.popitem(last=False)
        return keys

    def _capped(self, facts: list[FactRecord], said_at: Mapping[tuple[str, str], int],
                cap: int) -> tuple[list[FactRecord], list[FactRecord]]:
        """The block's facts within `cap` tokens: every pinned one (they must fit the window, checked after), then
        the unpinned ones the conversation stated, the last stated first; and those left out."""
        if self._tokens(self._constraint_messages(facts, False)) <= cap:
            return facts, []
        kept = [f for f in facts if f.pinned]
        observed = sorted((f for f in facts if not f.pinned),
                          key=lambda f: (said_at.get((f.scope, f.key), -1), f.updated_at, f.id), reverse=True)
        # A block line costs what "\n- <text>" does (lines after a newline add up); the whole is counted after.
        spent = (self._tokens(self._constraint_messages(kept, False)) if kept
                 else self._system_overhead + self._counter.count(BLOCK_HEADER))
        taken = []
        for fact in observed:
            line = self._counter.count("\n- " + clean(fact.text))
            if spent + line <= cap:
                taken.append(fact)
                spent += line
        while taken and self._tokens(self._constraint_messages([*kept, *taken], False)) > cap:
            taken.pop()
        return [*kept, *taken], [f for f in observed if f not in taken]

    def _constraint_messages(self, facts: Sequence[FactRecord], has_history: bool) -> list[Message]:
        """[the constraints block, the restatement] (either may be absent; the restatement only after history)."""
        text = block(facts)
        if not text:
            return []
        out = [Message(-1, "system", text)]
        again = restatement(facts) if self._config.context.restate_constraints and has_history else ""
        if again:
            out.append(Message(-1, "system", again))
        return out

    def _retrieval(self, request: ContextRequest, task_id: str, query: str,
                   tokens: int) -> tuple[list[Message], int]:
        """The recall block as one system message inside `tokens`, and how many items it holds."""
        allowance = min(tokens - self._system_overhead, self._config.limits.max_budget)
        if allowance <= 0:
            return [], 0
        result = self._recall(request.namespace, query, allowance, task_id, request.filters, request.min_score)
        if not result.rendered.strip():
            return [], 0
        return [Message(-1, "system", result.rendered.rstrip("\n"))], len(result.items)

    def _compact(self, request: ContextRequest, task_id: str, messages: Sequence[Message], before: list[Message],
                 user: list[Message], tail: list[Message], capacity: int, query: str, shown: Sequence[FactRecord],
                 actions: list[Action], warnings: list[str],
                 ) -> tuple[list[Message], list[Message], list[Message], SummaryInUse | None]:
        """[the summary message], the verbatim history before and after the latest user message, and the summary
        in use: the stored one while the history is below the watermark, else a new version (memory.context.
        compaction says when and how much). `shown` are the facts of this turn's constraints block: the summary
        does not state them twice."""
        cfg = self._config.context
        if not cfg.compact:
            return [], before, tail, None
        budget = int(capacity * cfg.summary_share) - self._system_overhead
        stored = self._tasks.latest_summary(request.namespace, task_id)
        if stored is not None and (stored.last >= len(messages) or digest(messages, stored.last) != stored.digest):
            warnings.append(f"the messages up to messages[{min(stored.last, len(messages) - 1)}] differ from those "
                            f"summary version {stored.version} covers; the history is summarised afresh")
            stored = None
        covered = stored.last if stored is not None else -1
        before = [m for m in before if m.index > covered or m.pinned]
        tail = [m for m in tail if m.index > covered or m.pinned]
        sent = [Message(-1, "system", stored.text, pinned=True)] if stored is not None else []
        size = self._tokens([*sent, *before, *tail])
        # The window shrank since it was written (a quarter over its share: the share moves a little with each turn's
        # message and tools, and a summary rewritten for that would change the prefix every turn).
        too_big = stored is not None and stored.tokens > budget + budget // 4
        if budget <= 0 or not (too_big or triggered(size, capacity, cfg.compact_watermark)):
            return sent, before, tail, _in_use(stored, False)
        units = [u for u in (*group(before), *group(tail)) if not any(m.pinned for m in u.messages)]
        most = int((cfg.compact_watermark - cfg.summary_share) * capacity / 2)
        span = [m for u in units[:boundary(units, lambda u: self._tokens(u.messages), cfg.keep_turns, most)]
                for m in u.messages]
        # Compactions come in runs of at least the gap they leave below the watermark: a smaller span (only the
        # newest unit is large) is not worth a new version; the last resort in _fit_history fits it.
        if not too_big and (not span or self._tokens([messages[m.index] for m in span]) < most):
            return sent, before, tail, _in_use(stored, False)
        at = {m.index for m in span}
        later = [m for m in [*before, *user, *tail] if m.index not in at]
        version = self._new_version(request, task_id, messages, [messages[i] for i in sorted(at)], later, stored,
                                    budget, query, shown, actions, warnings)
        return ([Message(-1, "system", version.text, pinned=True)], [m for m in before if m.index not in at],
                [m for m in tail if m.index not in at], _in_use(version, True))

    def _new_version(self, request: ContextRequest, task_id: str, messages: Sequence[Message],
                     span: list[Message], later: list[Message], stored: SummaryVersion | None, budget: int,
                     query: str, shown: Sequence[FactRecord], actions: list[Action],
                     warnings: list[str]) -> SummaryVersion:
        """Summarise `span` (the request's messages as sent) onto the stored version, offload its whole text and
        store the new version; `span` may be empty when only a smaller window asks for a shorter summary."""
        namespace = request.namespace
        last = span[-1].index if span else stored.last if stored is not None else 0
        first = stored.first if stored is not None else (span[0].index if span else 0)
        upto = [m for m in messages[:last + 1] if m.role == "user" and not m.ephemeral]
        facts = self._covered_facts(request, task_id, upto)
        # As for the facts (_constraints): a long user message is pasted material, whose imperatives are not rules.
        short = [m for m in upto if self._counter.count(m.content) <= self._config.context.observe_max_tokens]
        ref = digest(messages, last)
        earlier = stored.references[-1] if stored is not None and stored.references else None
        key = self._tasks.add(namespace, task_id, "note", span_text(span, earlier),
                              metadata={"compacted": [span[0].index, last]}, ref=ref[:32],
                              parent_task_id=request.parent_task_id).key if span else None
        # The facts in the constraints block are stated there, first in the context; the summary keeps the others
        # (when the block leaves out what the rules observed) and what the user said as a rule in passing.
        in_block = {f.id for f in shown}
        made = summarise(span, self._counter, budget,
                         instructions=[*(f.text for f in facts if f.id not in in_block),
                                       *instructions(short, [f.text for f in facts])],
                         references=[key] if key else [], prior=stored.sections if stored else None,
                         later=later, query=query, first=first, last=last)
        name = "extractive"
        if self._summariser is not None and span:
            extractive = made
            made, said = self._summariser.summarise(span, extractive, budget)
            warnings += said
            if made.text != extractive.text:
                name = self._summariser.name
        version = self._tasks.add_summary(
            namespace, task_id, first=first, last=last, digest=ref, text=made.text, tokens=made.tokens,
            covered_tokens=self._tokens(span) + (stored.covered_tokens if stored is not None else 0),
            sections=made.sections, dropped=tuple({"text": t, "reason": r} for t, r in made.dropped),
            references=made.sections.get("References", ()), summariser=name, parent_task_id=request.parent_task_id)
        actions.append(Action("compacted", span[0].index if span else first,
                              self._tokens(span) + (stored.tokens + self._system_overhead if stored else 0),
                              made.tokens + self._system_overhead, key, detail=f"summary version {version.version}"))
        return version

    def _shortened(self, task_id: str, namespace: str, in_use: SummaryInUse, room: int,
                   warnings: list[str]) -> list[Message]:
        """The summary in use cut to its constraints and newest reference within half of `room`, for this turn
        only (its stored version stays as it is for the turns after); nothing when even those exceed `room`."""
        version = self._tasks.summary(namespace, task_id, in_use.version)
        short = summarise([], self._counter, max(room // 2 - self._system_overhead, 0),
                          constraints=version.sections.get("User constraints", ()),
                          references=version.references[-1:], first=version.first, last=version.last)
        if short.tokens + self._system_overhead > room:
            warnings.append(f"this turn leaves {room} tokens for the history, too few for summary version "
                            f"{version.version} even cut to its constraints ({short.tokens} tokens): it was not "
                            "sent this turn, the stored version is unchanged")
            return []
        warnings.append(f"this turn leaves too little room for summary version {version.version} "
                        f"({version.tokens} tokens); its constraints and newest reference were sent ({short.tokens} "
                        "tokens), the stored version is unchanged")
        return [Message(-1, "system", short.text, pinned=True)]

    def _covered_facts(self, request: ContextRequest, task_id: str, users: Sequence[Message]) -> list[FactRecord]:
        """The facts in force that the covered user messages stated (as observed this turn) and the pinned ones."""
        keys: set[tuple[str, str]] = set()
        with self._lock:
            for message in users:
                keys |= self._observed.get((request.namespace, task_id, message.content), frozenset())
        return [f for f in self._facts.list(request.namespace, scopes=_scopes(request, task_id))
                if f.pinned or (f.scope, f.key) in keys]

    def _fit_history(self, before: list[Message], tail: list[Message], share: Mapping[str, int], room: int,
                     available: int, offload: Callable[[Message, str], str], replaced: set[int],
                     ) -> tuple[list[Message], list[Message], list[Action]]:
        """The history (before the latest user message, and the tool loop after it) within `room`: more tool
        results behind references first (not those in `replaced`, the message indexes already behind one), then
        the oldest units left out."""
        actions: list[Action] = []
        history = [*before, *tail]
        results = sum(self._cost(m) for m in history if m.role == "tool")
        size = sum(self._cost(m) for m in history)
        over = results - share.get("tool_results", 0)
        # What is pruned or left out for the budget goes in runs of about a quarter of it, oldest first: the
        # history then changes once per run, not once per turn, and a provider's cache keeps it meanwhile (runs of
        # a sixteenth kept more tokens and far less reusable prefix: bench/context_trace.py, docs/experiments.md).
        run = max(1, available // 4)
        if over > 0 or size > room:
            need = max(over, size - room)
            # The most recent results were cut to their cap already and are what the agent works on: spared.
            recent = self._config.context.keep_tool_results
            answers = [i for i, m in enumerate(history) if m.role == "tool"]
            spared = {i for i, m in enumerate(history) if m.pinned or m.index in replaced}
            spared |= set(answers[-recent:] if recent else [])
            pruned, more = prune_oldest(history, self._counter, offload, -(-need // run) * run, spared)
            history = list(pruned)
            actions += [_tool_action(a) for a in more]
            size -= sum(a.tokens_before - a.tokens_after for a in more)
        before, tail = history[:len(before)], history[len(before):]
        if size <= room:
            return before, tail, actions
        units = [*group(before), *group(tail)]
        costs = [self._tokens(unit.messages) for unit in units]
        keep = [True] * len(units)
        total = sum(costs)
        start = 0
        while total > room and start < len(units):
            end, size = start, 0
            while end < len(units) and size < run:
                size += costs[end]
                end += 1
            for u in range(start, end):
                if not any(m.pinned for m in units[u].messages):
                    keep[u] = False
                    total -= costs[u]
            start = end
        if total > room:
            raise ValidationError(f"the pinned messages need {total} tokens, more than the {room} the window leaves "
                                  "for the history; unpin some or send a larger window")
        gone: set[int] = set()
        for unit, cost, stays in zip(units, costs, keep, strict=True):
            if not stays:
                gone |= {m.index for m in unit.messages}
                actions.append(Action("truncated", unit.first, cost, 0))
        return ([m for m in before if m.index not in gone], [m for m in tail if m.index not in gone], actions)

    # --- helpers -------------------------------------------------------------------------------------------

    def _tokens(self, messages: Sequence[Message]) -> int:
        return sum(self._cost(m) for m in messages)

    def _cost(self, message: Message) -> int:
        """A message's tokens, remembered: a turn's steps count the same messages many times, and the next turn
        sends them again (bench/context_trace.py times assembly at 100 and 1,000 messages)."""
        known = self._costs.get(message)
        if known is None:
            known = message_tokens(self._counter, message)
            if len(self._costs) >= _COSTS_SIZE:
                self._costs.clear()
            self._costs[message] = known
        return known

    def _cost_of(self, messages: Sequence[Message], index: int) -> int:
        return message_tokens(self._counter, messages[index]) if 0 <= index < len(messages) else 0


class _Offloads:
    """Puts a tool result's whole text in task memory, once per text: the same text gets the same key every turn."""

    def __init__(self, tasks: TaskMemory, namespace: str, task_id: str, parent_task_id: str | None) -> None:
        self._tasks = tasks
        self._parent = parent_task_id
        self._namespace = namespace
        self._task_id = task_id
        self._known = tasks.refs(namespace, task_id)  # one read per turn, not one per result
        self.originals: dict[int, str] = {}  # message index -> key of the text it had before processing

    def __call__(self, message: Message, tool: str) -> str:
        if message.index in self.originals:
            return self.originals[message.index]
        ref = hashlib.sha256(f"{message.tool_call_id}\0{message.content}".encode("utf-8", "surrogatepass"))
        digest = ref.hexdigest()[:32]
        if digest not in self._known:
            self._known[digest] = self._tasks.add(self._namespace, self._task_id, "tool_result", message.content,
                                                  metadata={"tool": tool, "message": message.index}, ref=digest,
                                                  parent_task_id=self._parent).key
        return self._known[digest]


def _scopes(request: ContextRequest, task_id: str) -> tuple[str, ...]:
    """The fact scopes a turn reads: every conversation's, this task's, and the project's its filters name."""
    scopes = ["global", f"session:{task_id}"]
    if request.filters and isinstance(request.filters.get("project"), str):
        scopes.append(f"project:{request.filters['project']}")
    return tuple(scopes)


def _split(messages: Sequence[Message], system: str | None) -> _Turn:
    lead = 0
    while lead < len(messages) and messages[lead].role == "system":
        lead += 1
    prompt = [Message(-1, "system", system)] if system is not None else []
    rest = list(messages[lead:])
    users = [i for i, m in enumerate(rest) if m.role == "user"]
    at = users[-1] if users else len(rest)
    return _Turn([*prompt, *messages[:lead]], rest[:at], rest[at:])


def _query(query: object, turn: _Turn) -> str:
    if query is not None:
        if not isinstance(query, str):
            raise ValidationError(f"query must be a string, got {type(query).__name__}")
        return query
    return turn.current[0].content if turn.current else ""


def _names(raw: object, field: str, default: Sequence[str]) -> tuple[str, ...]:
    if raw is None:
        return tuple(default)
    if isinstance(raw, str) or not isinstance(raw, Sequence) or not all(isinstance(n, str) for n in raw):
        raise ValidationError(f"{field} must be a list of tool names")
    return tuple(raw)


def _processors(raw: object) -> Mapping[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise ValidationError("processors must map tool names to a processor name (or \"none\")")
    names = {p.name for p in PROCESSORS} | {_NO_PROCESSOR}
    for tool, name in raw.items():
        if name not in names:
            raise ValidationError(f"processors.{tool} is {name!r}, which is not a processor; use one of "
                                  f"{', '.join(sorted(names))}")
    return dict(raw)


def _derived_task(messages: Sequence[Message], system: str | None) -> str:
    """A conversation's task id when it sends none: from its system prompt and first non-system message."""
    first = next((m.content for m in messages if m.role != "system"), "")
    lead = [m.content for m in messages if m.role == "system"][:1]
    seed = "\0".join([system or "", *lead, first])
    return "ctx-" + hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _is_summary(message: Message) -> bool:
    """The summary is the one message of ours that is pinned (the constraints and retrieval blocks are not)."""
    return message.index == -1 and message.pinned


def _in_use(version: SummaryVersion | None, created: bool) -> SummaryInUse | None:
    if version is None:
        return None
    return SummaryInUse(version.version, version.first, version.last, version.tokens, version.covered_tokens,
                        created, version.summariser)


def _tool_action(action: ToolAction) -> Action:
    return Action(action.kind, action.index, action.tokens_before, action.tokens_after, action.key, action.tool)


def _action_order(action: Action) -> tuple[int, str]:
    return (-1 if action.index is None else action.index, action.kind)


def _prefix_hash(head: Sequence[Message], tools: Sequence[Tool]) -> str:
    stable = [[_dump(m) for m in head], [t.schema for t in tools]]
    return hashlib.sha256(canonical(stable).encode("utf-8", "surrogatepass")).hexdigest()


def _dump(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.name is not None:
        out["name"] = message.name
    if message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                             for c in message.tool_calls]
        if not message.content:
            out["content"] = None
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out
