"""Fit one agent turn into its window: the steps, in order, over one turn and one budget plan.

1. read the request (memory.context.turn): everything is checked before anything is written;
2. its task: the caller's `task_id`, or the conversation followed by its messages (memory.context.thread);
3. the user's constraints: the user messages read into fact memory once each, and what of them the model must be
   told in the constraints block (memory.context.observe);
4. earlier turns' ephemeral messages dropped, as the agent asked (memory.context.ephemeral);
5. the plan (memory.context.plan): a turn under the watermark goes as the agent gave it; over it, the shares cap
   the categories that can be cut;
6. retrieval into its room (memory.context.retrieval);
7. the tool schemas: all while they fit their grant, else the pinned, the called and the most relevant
   (memory.context.toolset);
8. the history within its room: the stored summary, a compaction, then the last resorts (memory.context.history);
9. written in a cache-stable order with the tokens of every category (memory.context.writer).

Steps 2-8 run in one store transaction: a turn refused or failing half-way has stored nothing (no fact, no
offloaded text, no summary, no one-shot item taken). That transaction holds the store-wide writer lock (across
replicas on PostgreSQL), so what only reads runs before it: steps 2-7 once over a copy of the turn with nothing
written, which reads the new user messages for facts, retrieves and scores the tools (Assembler._ahead); the turn's
own steps then reuse that work where it is still the turn's. Every token is spent through a ledger that raises at
the step that overspends.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from memory.bullet import clean
from memory.caches import Caches
from memory.config import Config
from memory.context import observe
from memory.context.ephemeral import drop_ephemeral
from memory.context.history import Fitted, Needs, fit_history, unchanged
from memory.context.memo import MemoCache
from memory.context.memo import weigh as memo_weight
from memory.context.messages import PER_MESSAGE, REPLY_PRIMING, Message, message_tokens
from memory.context.model import Action, ContextReport, ContextRequest, ContextResult
from memory.context.offload import Offloads
from memory.context.plan import Ledger, Plan, decide
from memory.context.read_tool import READ_TOOL_SCHEMA
from memory.context.retrieval import NOTHING, Recall, Retrieved, retrieve
from memory.context.summaries import FACTS, Compaction, in_use, stored
from memory.context.summariser import ModelSummariser
from memory.context.thread import follow, peek
from memory.context.tools import ScopedSimilarity, Tool, parse_tools
from memory.context.toolset import Remembered, choose_tools
from memory.context.turn import Turn, read_turn
from memory.context.writer import dump, prefix_hash, write
from memory.errors import MemoryError_, ValidationError
from memory.facts.conversation import Reading
from memory.facts.memory import FactMemory
from memory.facts.records import FactRecord
from memory.store import Store
from memory.task import TaskMemory
from memory.task.model import SummaryVersion
from memory.tokens import CachingCounter, TokenCounter, weigh_count

__all__ = ["Assembler"]


@dataclass
class _Block:
    """The constraints block and restatement as decided, the facts they state, what they cost, and the texts of
    the facts the summary in use holds instead (`summarised`)."""

    facts: list[FactRecord]
    block: list[Message]
    restate: list[Message]
    tokens: int
    summarised: tuple[str, ...] = ()
    left_out: int = 0


@dataclass
class _Steps:
    """What steps 4-5 decided for a turn: the history kept around the current turn, the plan, the constraints block
    it counts, the stored summary the history may reuse, and the ledger the later steps spend through."""

    before: list[Message]
    tail: list[Message]
    plan: Plan
    block: _Block
    version: SummaryVersion | None
    ledger: Ledger


@dataclass(frozen=True)
class _Ahead:
    """What the pass before the writer lock found (Assembler._ahead): the task it expected, its reading of the
    messages, the retrieval for the room it planned, and the tools' similarities it computed."""

    task_id: str = ""
    reading: Reading | None = None
    room: int = -1
    found: Retrieved | None = None
    similarity: ScopedSimilarity | None = None

    def retrieval(self, task_id: str, room: int) -> Retrieved | None:
        """The retrieval found ahead when it was for this task and this room, else None."""
        return self.found if (task_id, room) == (self.task_id, self.room) else None


class Assembler:
    """Assembles turns for the facade (Memory.context): holds the tiers it reads and writes."""

    def __init__(self, counter: TokenCounter, facts: FactMemory, tasks: TaskMemory, recall: Recall, config: Config,
                 store: Store, similarity: ScopedSimilarity | None = None, caches: Caches | None = None) -> None:
        caches = caches or Caches()
        # Counts and readings of the messages, kept per namespace in the Memory's caches (a delete reaches them).
        self._counter = CachingCounter(counter, caches.new(50_000, weight=16_000_000, weigh=weigh_count))
        memos: MemoCache = caches.new(65_536, weight=32_000_000, weigh=memo_weight)
        self._facts = facts
        self._tasks = tasks
        self._recall = recall
        self._config = config
        self._store = store
        self._similarity = similarity
        summariser = ModelSummariser(config.summariser, counter) if config.summariser.enabled else None
        # What a system message of ours (constraints, retrieval, summary) costs around its text.
        self._overhead = PER_MESSAGE + self._counter.count("system")
        self._compaction = Compaction(tasks, self._counter, summariser, self._tokens, self._overhead,
                                      config.limits.max_text_chars, memos)
        self._read_tool = parse_tools([{**READ_TOOL_SCHEMA, "pinned": True}], self._counter)[0]

    def assemble(self, request: ContextRequest) -> ContextResult:
        """The messages and tools to send for this turn, inside its window, and the report."""
        with self._counter.counting_for(request.namespace):
            return self._assemble(request)

    def _assemble(self, request: ContextRequest) -> ContextResult:
        turn = read_turn(request, self._config, self._counter)
        tools = (*turn.tools, self._read_tool) if turn.read_tool else turn.tools
        if turn.read_tool and sum(t.name == self._read_tool.name for t in tools) > 1:
            raise ValidationError(f"tools holds a tool named {self._read_tool.name!r}, the read tool's name; rename "
                                  "it or leave read_tool off")
        self._least(turn, tools)
        ahead = self._ahead(turn, tools)
        with self._store.transaction():
            turn.task_id = follow(self._tasks, request.namespace, request.task_id, request.parent_task_id,
                                  request.system, turn.messages)
            cfg = self._config.context
            facts = observe.stated(self._facts, self._counter, request.namespace, turn.task_id, turn.messages,
                                   cfg.observe_facts, cfg.observe_max_tokens, request.filters, ahead.reading)
            steps = self._prepare(turn, tools, facts)
            self._retrieve(turn, steps, ahead)
            self._choose(turn, tools, steps, ahead.similarity)
            fitted = self._history(turn, steps, facts)
            return self._written(turn, steps, fitted, facts)

    def _ahead(self, turn: Turn, tools: tuple[Tool, ...]) -> _Ahead:
        """Steps 2-7 on a copy of the turn with nothing written, before the writer lock: what only reads and costs
        (the detector reading new messages, retrieval, the tools' vectors) is done here, once.

        The plan depends on this turn's facts, which are written under the lock; this pass plans with the facts as
        stored, and most turns state nothing that changes the plan, so its retrieval is the turn's own. The turn's
        pass under the lock plans again and takes that retrieval only for the same task and the same room (and its
        one-shot items only if all are still there); else it retrieves under the lock, as it always did. A refusal
        here is left to that pass, which decides with the facts this one did not see.
        """
        request, cfg = turn.request, self._config.context
        scratch = replace(turn, actions=[], warnings=[])
        similarity = Remembered(self._similarity) if self._similarity is not None else None
        try:
            scratch.task_id = peek(self._tasks, request.namespace, request.task_id, request.system, turn.messages)
            facts, reading = observe.foreseen(self._facts, self._counter, request.namespace, scratch.task_id,
                                              turn.messages, cfg.observe_facts, cfg.observe_max_tokens,
                                              request.filters)
            steps = self._prepare(scratch, tools, facts)
            room = self._room(steps)
            found = self._retrieve(scratch, steps, None)
            self._choose(scratch, tools, steps, similarity, keep=False)
        except MemoryError_:
            return _Ahead(similarity=similarity)
        return _Ahead(scratch.task_id, reading, room, found, similarity)

    def _prepare(self, turn: Turn, tools: Sequence[Tool], facts: observe.Stated) -> _Steps:
        """Steps 4-5: earlier ephemeral messages dropped, the plan, and the ledger with what is never cut spent."""
        kept, dropped = drop_ephemeral([*turn.history, *turn.user, *turn.tail], turn.ephemeral_tools)
        turn.actions += [Action("dropped_ephemeral", d.index, self._tokens([turn.messages[d.index]]), 0,
                                tool=d.tool) for d in dropped]
        before = [m for m in kept if m.index < turn.at]
        tail = [m for m in kept if m.index > turn.at]
        plan, block, version = self._plan(turn, tools, before, tail, facts)
        ledger = Ledger(turn.budget.available)
        for category in ("system", "constraints", "current"):
            ledger.spend("read", category, plan.fixed[category])
        return _Steps(before, tail, plan, block, version, ledger)

    # --- steps ---------------------------------------------------------------------------------------------

    def _least(self, turn: Turn, tools: Sequence[Tool]) -> None:
        """Refuse at once a window that cannot hold what is never cut, before anything is read or written."""
        pinned = sum(t.tokens for t in tools if t.pinned)
        least = self._tokens(turn.system) + self._tokens(turn.user) + REPLY_PRIMING + pinned
        if least > turn.budget.available:
            at = f"messages[{turn.at}], " if turn.user else ""
            raise ValidationError(
                f"the window leaves {turn.budget.available} tokens for the input, less than the system prompt "
                f"({self._tokens(turn.system)} tokens), the latest user message ({at}{self._tokens(turn.user)} "
                f"tokens) and the pinned tools need ({least} tokens with them); send a larger window, a smaller "
                "output_reserve, or a shorter system prompt or message")

    def _plan(self, turn: Turn, tools: Sequence[Tool], before: list[Message], tail: list[Message],
              facts: observe.Stated) -> tuple[Plan, _Block, SummaryVersion | None]:
        """The budget plan, the constraints block it counts, and the stored summary the history may reuse (under
        pressure: the block then leaves out what that summary holds)."""
        history = [*before, *tail]
        visible = {m.index for m in [*history, *turn.user]}
        demands = {"tools": sum(t.tokens for t in tools if not t.pinned),
                   "history": self._tokens([m for m in history if m.role != "tool"]),
                   "tool_results": self._tokens([m for m in history if m.role == "tool"])}
        block = self._block(turn, facts, visible, ())
        cfg = self._config.context
        plan = decide(turn.budget, cfg.compact_watermark, turn.weights, self._fixed(turn, tools, block), demands)
        version = None
        if not plan.as_given and cfg.compact:
            version = stored(self._tasks, turn.request.namespace, turn.task_id, turn.messages, turn.warnings)
            if version is not None:
                block = self._block(turn, facts, {i for i in visible if i > version.last},
                                    version.sections.get(FACTS, ()))
                plan = decide(turn.budget, cfg.compact_watermark, turn.weights, self._fixed(turn, tools, block),
                              demands)
        if sum(plan.fixed.values()) > turn.budget.available:
            raise ValidationError(
                f"the window leaves {turn.budget.available} tokens for the input, less than the system prompt "
                f"({plan.fixed['system']} tokens), the pinned constraints ({plan.fixed['constraints']} tokens), the "
                f"latest user message and the pinned tools need ({sum(plan.fixed.values())} tokens); send a larger "
                "window, a smaller output_reserve, or unpin some")
        return plan, block, version

    def _fixed(self, turn: Turn, tools: Sequence[Tool], block: _Block) -> dict[str, int]:
        return {"system": self._tokens(turn.system), "constraints": block.tokens,
                "current": self._tokens(turn.user) + REPLY_PRIMING,
                "pinned_tools": sum(t.tokens for t in tools if t.pinned)}

    def _block(self, turn: Turn, facts: observe.Stated, visible: Collection[int], summarised: Collection[str],
               ) -> _Block:
        cfg = self._config.context
        shown = observe.shown_facts(facts, visible, summarised)
        cap = int(turn.budget.available * cfg.constraints_share)
        shown, left_out = observe.capped(shown, facts.said_at(), cap,
                                         lambda chosen: self._tokens(observe.block_messages(chosen, (), False)[0]))
        # Restated: the pinned ones the model reads only far up, in the block or in the summary.
        held = [f for f in facts.facts if f.pinned and f.scope.startswith("session:") and clean(f.text) in summarised]
        block, restate = observe.block_messages(shown, [*shown, *held], cfg.restate_constraints and bool(turn.history))
        return _Block(shown, block, restate, self._tokens([*block, *restate]), tuple(summarised), len(left_out))

    def _room(self, steps: _Steps) -> int:
        """Retrieval's room: its cap in the plan, within what the ledger has left."""
        return min(steps.plan.retrieval_room(), steps.ledger.left)

    def _retrieve(self, turn: Turn, steps: _Steps, ahead: _Ahead | None) -> Retrieved:
        """Retrieval into its room. Before the writer lock (`ahead` None) the one-shot items it shows are named, not
        consumed; under it the turn takes what the pass before found when that was for this task and room and its
        one-shot items are all still there (consumed now), else retrieves again, consuming what it shows."""
        room = self._room(steps)
        if ahead is None:
            found = self._retrieval(turn, room, consume=False)
        else:
            reused = ahead.retrieval(turn.task_id, room)
            if reused is None or not self._tasks.consume_all(turn.request.namespace, reused.one_shot):
                reused = self._retrieval(turn, room, consume=True)
            found = reused
        turn.retrieval, turn.retrieved = list(found.messages), found.count
        steps.ledger.spend("retrieval", "retrieval", self._tokens(turn.retrieval))
        return found

    def _retrieval(self, turn: Turn, room: int, *, consume: bool) -> Retrieved:
        """The recall block for the latest user message, else for it with the conversation's first."""
        request = turn.request
        for query in (turn.query, turn.fallback):
            if request.recall and query.strip():
                found = retrieve(self._recall, request.namespace, query, turn.task_id, request.filters,
                                 request.min_score, room, self._overhead, self._config.limits.max_budget,
                                 consume=consume)
                if found.messages:
                    return found
        return NOTHING

    def _choose(self, turn: Turn, tools: tuple[Tool, ...], steps: _Steps, similarity: ScopedSimilarity | None, *,
                keep: bool = True) -> None:
        plan, ledger = steps.plan, steps.ledger
        if plan.as_given:
            turn.kept_tools, turn.left_out = tools, ()
        else:
            grant = plan.tools_grant(sum(t.tokens for t in tools if not t.pinned), self._tokens(turn.retrieval))
            pinned = plan.fixed["pinned_tools"]
            # The called tools may take up to half of what is left beyond their grant: the history keeps the rest.
            most = max(grant + pinned, pinned + (ledger.left - pinned) // 2)
            turn.kept_tools, turn.left_out = choose_tools(tools, turn.called, min(grant + pinned, ledger.left),
                                                          min(most, ledger.left), turn.query, similarity,
                                                          self._tasks, turn.request.namespace, turn.task_id,
                                                          keep=keep)
        spent = sum(t.tokens for t in turn.kept_tools)
        if turn.left_out:
            every = sum(t.tokens for t in tools)
            turn.actions.append(Action("tools_selected", None, every, spent, detail="left out: "
                                       + ", ".join(turn.left_out)))
            turn.warnings.append(f"the tool schemas need {every} tokens, more than their share of {spent}; kept "
                                 f"the pinned, the called and the most relevant, left out {', '.join(turn.left_out)}")
        ledger.spend("tools", "tools", spent)

    def _history(self, turn: Turn, steps: _Steps, facts: observe.Stated) -> Fitted:
        plan, ledger, before, tail, block = steps.plan, steps.ledger, steps.before, steps.tail, steps.block
        if plan.as_given:
            fitted = unchanged(before, tail)
        else:
            in_force = {clean(f.text) for f in facts.facts}
            offloads = Offloads(self._tasks, turn.request.namespace, turn.task_id, turn.request.parent_task_id,
                                self._config.limits.max_text_chars)

            def restated(gone: Collection[int]) -> int:
                if not gone:
                    return 0
                visible = {m.index for m in [*before, *tail, *turn.user]} - set(gone)
                return max(0, self._block(turn, facts, visible, block.summarised).tokens - block.tokens)

            fitted = fit_history(turn, before, tail, steps.version, plan.history_room(ledger.total), Needs(
                facts.by_message, facts.facts, in_force), self._config.context, self._counter, self._tokens,
                self._overhead, self._compaction, offloads, restated)
        summary = [Message(-1, "system", fitted.summary, pinned=True)] if fitted.summary else []
        ledger.spend("history", "summary", self._tokens(summary))
        history = [*fitted.before, *fitted.tail]
        ledger.spend("history", "history", self._tokens([m for m in history if m.role != "tool"]))
        ledger.spend("history", "tool_results", self._tokens([m for m in history if m.role == "tool"]))
        return fitted

    def _written(self, turn: Turn, steps: _Steps, fitted: Fitted, facts: observe.Stated) -> ContextResult:
        plan, ledger, block = steps.plan, steps.ledger, steps.block
        final = block
        if not plan.as_given:
            visible = {m.index for m in [*fitted.before, *fitted.tail, *turn.user]}
            summarised = fitted.version.sections.get(FACTS, ()) if fitted.version is not None else ()
            final = self._block(turn, facts, visible, summarised)
            if final.tokens != block.tokens:  # facts of messages left out as a last resort (history.py counted them)
                ledger.set("constraints", "constraints", final.tokens)
        if final.left_out:
            turn.warnings.append(
                f"the constraints block holds the facts the model no longer reads where they were said; the "
                f"{final.left_out} oldest unpinned ones were left out of it to keep it within "
                "context.constraints_share of the window (they stay in fact memory)")
        summary = [Message(-1, "system", fitted.summary, pinned=True)] if fitted.summary else []
        late = fitted.version is not None and fitted.version.last > turn.at and bool(summary)
        out, tokens = write(turn.system, final.block, summary, fitted.before, turn.retrieval, final.restate, turn.user,
                            fitted.tail, late, self._config.context.retrieval_position, turn.kept_tools,
                            self._tokens, ledger)
        grants = plan.grants({"tools": tokens["tools"], "retrieval": tokens["retrieval"],
                              "history": tokens["history"] + tokens["summary"], "tool_results": tokens["tool_results"]})
        originals = {m.index: m for m in turn.messages}
        report = ContextReport(
            budget=turn.budget, tokens=tokens, grants=grants,
            actions=tuple(sorted(turn.actions, key=lambda a: (-1 if a.index is None else a.index, a.kind))),
            prefix_hash=prefix_hash([*turn.system, *final.block], turn.kept_tools), task_id=turn.task_id,
            retrieved=turn.retrieved, warnings=tuple(turn.warnings), tools_left_out=turn.left_out,
            summary=in_use(fitted.version, fitted.created, self._tokens(summary) - self._overhead if summary else 0),
            as_given=plan.as_given)
        return ContextResult(tuple(dump(m, originals.get(m.index)) for m in out),
                             tuple(dict(t.schema) for t in turn.kept_tools), report)

    # --- helpers -------------------------------------------------------------------------------------------

    def _tokens(self, messages: Sequence[Message]) -> int:
        return sum(message_tokens(self._counter, m) for m in messages)
