"""The history under pressure: what of it the model reads, within the room the plan leaves it.

In order, each step only while the history is still over its room:
1. the stored summary is reused, with the messages after it verbatim (while they fit under the watermark, nothing
   else changes: the history only grows at its end between compactions);
2. over the watermark, a tool result that alone is over what a compaction would leave the history (`compact_target`
   of its room) is what the agent is working on: the processors reduce it to what the room holds, keeping every
   field that carries an identifier and saying what they left out (the whole text behind a reference), in steps, so
   that it reads the same while the history grows a little;
3. still over it, the older history is compacted into a new summary version, leaving `compact_target` of the room
   used (memory.context.compaction chooses the span: whole units, the last `keep_turns` user turns kept);
4. over `available` still (pinned messages, a window that shrank), tool results are reduced again, the most likely
   needed last: an item repeated verbatim from a result the model still reads is named instead (back references),
   then results over `tool_result_cap` (or a quarter of a small room) go through the processors, the oldest first;
5. then the oldest results go behind a placeholder, in runs;
6. last, the oldest units are left out, pinned ones never (a turn whose pinned messages do not fit is refused).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

from memory.config import ContextConfig
from memory.context.compaction import boundary
from memory.context.messages import Message, group
from memory.context.model import Action
from memory.context.offload import Offloads
from memory.context.processors import back_reference, process
from memory.context.summaries import Compaction, sent_text, written_for
from memory.context.tool_results import ToolAction, prune_oldest
from memory.context.turn import NO_PROCESSOR, Turn
from memory.errors import ValidationError
from memory.facts.records import FactRecord
from memory.task.model import SummaryVersion
from memory.tokens import TokenCounter

__all__ = ["Fitted", "Needs", "fit_history", "unchanged"]

_POINTER = "\n[the whole result: task item {key}]"
_QUANTUM = 256


@dataclass
class Fitted:
    """The history as sent: the summary's text (None: no summary), the messages before the latest user message and
    the tool loop after it, the version in use and whether this turn wrote it."""

    summary: str | None
    before: list[Message]
    tail: list[Message]
    version: SummaryVersion | None = None
    created: bool = False
    actions: list[Action] = field(default_factory=list)


def unchanged(before: list[Message], tail: list[Message]) -> Fitted:
    """The history as the agent gave it."""
    return Fitted(None, before, tail)


@dataclass(frozen=True)
class Needs:
    """What fitting reads besides the messages: the facts (for a compaction) and the texts of those in force."""

    stated: Mapping[int, frozenset[tuple[str, str]]]
    facts: Sequence[FactRecord]
    in_force: Collection[str]


def fit_history(turn: Turn, before: list[Message], tail: list[Message], version: SummaryVersion | None,
                rooms: tuple[int, int], needs: Needs, cfg: ContextConfig, counter: TokenCounter,
                cost: Callable[[Sequence[Message]], int], overhead: int, compaction: Compaction, offloads: Offloads,
                restated: Callable[[Collection[int]], int]) -> Fitted:
    """The history within `rooms` (under the watermark, under `available`), by the steps the module lists, from
    the stored summary `version` (memory.context.summaries.stored). `restated(gone)` is what the constraints block
    grows by when the messages `gone` are left out (the facts they stated must then be stated there)."""
    room_t, room_a = rooms
    # When what is never cut leaves the watermark almost no room, compaction still works within half of what
    # `available` leaves: a summary with its references beats leaving the oldest history out unread.
    room_t = max(room_t, room_a // 2)
    budget = int(room_t * cfg.summary_share) - overhead
    made_for = written_for(version) if version is not None else None
    if made_for is not None and budget >= 2 * max(made_for, 1):
        version = None  # the window grew since: the history is fitted afresh, from the messages themselves
    covered = version.last if version is not None else -1
    before = [m for m in before if m.index > covered or m.pinned]
    tail = [m for m in tail if m.index > covered or m.pinned]
    text = sent_text(version, needs.in_force) if version is not None else None
    out = Fitted(text, before, tail, version)

    def size() -> int:
        return (overhead + counter.count(out.summary) if out.summary else 0) + cost(out.before) + cost(out.tail)

    too_big = version is not None and version.tokens > budget + budget // 4  # the window shrank since
    huge = int(cfg.compact_target * room_t)
    # A result is not reduced below the cap, nor below what a summary may take in a small window.
    floor = min(cfg.tool_result_cap, int(room_t * cfg.summary_share))
    if size() > room_t:
        # A result that alone is over what a compaction leaves the history is what the agent is working on:
        # reduced to what the room holds (its identifiers kept), it is worth more than a line of a summary.
        _reduce(turn, out, size() - room_t, floor, cfg, counter, cost, offloads, over=huge)
    if cfg.compact and budget > 0 and (size() > room_t or too_big):
        _compact(turn, out, room_t, budget, too_big, needs, cfg, cost, compaction, offloads, size)
    if out.summary is not None and overhead + counter.count(out.summary) > room_a // 2 and out.version is not None:
        out.summary = compaction.shortened(out.version, out.summary, room_a // 2, turn.warnings)
    if size() > room_a:
        _reduce(turn, out, size() - room_a, floor, cfg, counter, cost, offloads)
    if size() > room_a:
        _drop(turn, out, size() - room_a, room_a, cost, counter, offloads, restated)
    return out


def _compact(turn: Turn, out: Fitted, room_t: int, budget: int, too_big: bool, needs: Needs, cfg: ContextConfig,
             cost: Callable[[Sequence[Message]], int], compaction: Compaction, offloads: Offloads,
             size: Callable[[], int]) -> None:
    units = [u for u in (*group(out.before), *group(out.tail)) if not any(m.pinned for m in u.messages)]
    most = int((cfg.compact_target - cfg.summary_share) * room_t)
    span = [m for u in units[:boundary(units, lambda u: cost(u.messages), cfg.keep_turns, most, room_t // 2)]
            for m in u.messages]
    # A span worth less than half of what must go is not worth a version (the newest unit is the large one):
    # the last resorts fit that unit instead, and the summary and the older history stay as they are.
    over = size() - int(cfg.compact_target * room_t)
    if not too_big and (not span or cost(span) * 2 < over):
        return
    at = {m.index for m in span}
    originals = [turn.messages[i] for i in sorted(at)]
    later = [m for m in [*out.before, *turn.user, *out.tail] if m.index not in at]
    users = [m for m in turn.messages[:max(at, default=-1) + 1] if m.role == "user"]
    keys = {key for m in users for key in needs.stated.get(m.index, ())}
    facts = [f for f in needs.facts if (f.scope, f.key) in keys and f.scope.startswith("session:") and f.certain]
    passing = [m for m in users if not m.ephemeral and len(m.content) <= 4 * cfg.observe_max_tokens]
    version = compaction.write(turn.request.namespace, turn.task_id, turn.messages, originals, later, out.version,
                               budget, turn.query, facts, passing, offloads, turn.actions, turn.warnings)
    out.version, out.created = version, True
    out.summary = sent_text(version, needs.in_force)
    out.before = [m for m in out.before if m.index not in at]
    out.tail = [m for m in out.tail if m.index not in at]


def _reduce(turn: Turn, out: Fitted, excess: int, floor: int, cfg: ContextConfig, counter: TokenCounter,
            cost: Callable[[Sequence[Message]], int], offloads: Offloads, over: int | None = None) -> None:
    """Back references, then the processors on results over `floor` tokens, each to no less than that (with
    `over`, only on those over `over` tokens, and no back references), oldest first and the recent ones last; a
    result reduced already this turn is not reduced again."""
    history = [*out.before, *out.tail]
    done_before = {a.index for a in turn.actions if a.kind == "processed"}
    answers = [i for i, m in enumerate(history) if m.role == "tool" and not m.pinned and m.index not in done_before]
    recent = answers[-cfg.keep_tool_results:] if cfg.keep_tool_results else []
    order = [i for i in answers if i not in recent] + recent
    earlier: list[tuple[str, str]] = []
    for i in answers:
        message = history[i]
        if over is None and excess > 0 \
                and turn.processors.get(message.tool or "", "") != NO_PROCESSOR:
            done = back_reference(message.content, earlier)
            if done is not None:
                excess -= _rewrite(turn, history, i, done.text, done.name, cost, offloads)
                continue
        if counter.count(message.content) <= floor:  # a larger one may be reduced below
            earlier.append((message.tool_call_id or "", message.content))
    for i in order:
        message = history[i]
        tool = message.tool or "a tool"
        tokens = counter.count(message.content)
        if excess <= 0 or tokens <= max(floor, over or 0) or turn.processors.get(tool) == NO_PROCESSOR:
            continue
        # In steps of _QUANTUM: the same result reduces to the same text from turn to turn while the history grows
        # a little, so the history stays byte-stable for a provider's cache.
        room = max(floor, (tokens - excess) // _QUANTUM * _QUANTUM)
        room -= counter.count(_POINTER.format(key="x" * 16))
        done = process(tool, message.content, room, counter, by_tool={tool: turn.processors[tool]}
                       if tool in turn.processors else None)
        text, name = (done.text, done.name) if done is not None else (_head(message.content, room, counter), "head")
        excess -= _rewrite(turn, history, i, text, name, cost, offloads)
    out.before, out.tail = history[:len(out.before)], history[len(out.before):]


def _rewrite(turn: Turn, history: list[Message], i: int, text: str, name: str,
             cost: Callable[[Sequence[Message]], int], offloads: Offloads) -> int:
    """Replace result i by `text` with a pointer to its whole original; the tokens saved (0 when not worth it)."""
    message = history[i]
    tool = message.tool or "a tool"
    key = offloads(turn.messages[message.index], tool)
    changed = replace(message, content=text + _POINTER.format(key=key), parts=None, media=0)
    saved = cost([message]) - cost([changed])
    if saved <= 0:
        return 0
    history[i] = changed
    turn.actions.append(Action("processed", message.index, cost([message]), cost([changed]), key, tool, name))
    return saved


def _drop(turn: Turn, out: Fitted, excess: int, room_a: int, cost: Callable[[Sequence[Message]], int],
          counter: TokenCounter, offloads: Offloads, restated: Callable[[Collection[int]], int]) -> None:
    """Placeholders for the oldest results, then the oldest units left out, in runs of a quarter of the budget
    (the history then changes once per run, not once per turn)."""
    run = max(1, turn.budget.available // 4)
    history = [*out.before, *out.tail]
    spared = {i for i, m in enumerate(history) if m.pinned or _is_placeholder(m.content)}
    pruned, done = prune_oldest(history, counter, offloads, -(-excess // run) * run, spared)
    history = list(pruned)
    turn.actions.extend(_action(a) for a in done)
    out.before, out.tail = history[:len(out.before)], history[len(out.before):]
    summary = (cost([Message(-1, "system", out.summary)]) if out.summary else 0)
    units = [*group(out.before), *group(out.tail)]
    costs = [cost(u.messages) for u in units]
    total = sum(costs) + summary
    keep = [True] * len(units)
    gone: set[int] = set()
    start = 0
    while total + restated(gone) > room_a and start < len(units):
        end, taken = start, 0
        while end < len(units) and taken < run:
            taken += costs[end]
            end += 1
        for u in range(start, end):
            if not any(m.pinned for m in units[u].messages):
                keep[u] = False
                total -= costs[u]
                gone |= {m.index for m in units[u].messages}
        start = end
    if total + restated(gone) > room_a:
        raise ValidationError(f"the pinned messages need {total} tokens, more than the {room_a} the window leaves "
                              "for the history; unpin some or send a larger window")
    for unit, unit_cost, stays in zip(units, costs, keep, strict=True):
        if not stays:
            turn.actions.append(Action("truncated", unit.first, unit_cost, 0))
    if gone:
        left = [a for a in turn.actions if a.kind == "truncated"]
        turn.warnings.append(f"the history is over its room even compacted: the {len(left)} oldest unpinned units "
                             f"({sum(a.tokens_before for a in left)} tokens, from messages[{left[0].index}]) were "
                             "left out")
    out.before = [m for m in out.before if m.index not in gone]
    out.tail = [m for m in out.tail if m.index not in gone]


def _head(text: str, room: int, counter: TokenCounter) -> str:
    """A result no processor reads, cut to its head, saying how much was cut (the whole text is behind the pointer
    written after it)."""
    head = counter.head(text, max(room - 20, 0))
    return f"{head}\n[… {counter.count(text) - counter.count(head)} more tokens]"


def _is_placeholder(text: str) -> bool:
    return text.startswith("[result of ") and " left out: " in text


def _action(action: ToolAction) -> Action:
    return Action(action.kind, action.index, action.tokens_before, action.tokens_after, action.key, action.tool)

