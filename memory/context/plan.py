"""The one budget decision of a turn, and the ledger every step spends it through.

A turn is sent as the agent gave it while all of it (system prompt, tools, constraints block, history, current
turn) costs at most the watermark, `compact_watermark` of `available`: nothing is processed, pruned, compacted or
left out, whatever the shares say, and retrieval may use what is left up to its share. Above the watermark the turn
is under pressure and the shares become caps: the categories that can be cut (tools, retrieval, history, tool
results) divide what the parts that are never cut leave (the system prompt, the constraints block, the current turn,
pinned tools), by weight, and what one of them does not need flows to the others (memory.share.allocate). The tools
the history called are never left out while they fit, whatever the tools' share.

The history's room is measured against the watermark, so that a compaction leaves it `compact_target` of that room
and the history can grow for many turns before the next one (hysteresis: the history, and a provider's cache of it,
stay put); only the last resorts (processing, pruning, leaving units out) work against `available` itself.

`Ledger` is the check: every step spends its tokens through it, and a step that would take the total past
`available` raises `Overspent` naming itself, where the defect is, instead of a miscount found at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from memory.context.budget import Budget
from memory.share import allocate

__all__ = ["CUT", "Ledger", "Overspent", "Plan", "decide"]

CUT = ("tools", "retrieval", "history", "tool_results")


class Overspent(RuntimeError):
    """A step took more tokens than the plan left it: a defect in assembly, never an input error."""


@dataclass(frozen=True)
class Plan:
    """What this turn may spend. `fixed` are the parts never cut (system, constraints, current, pinned_tools);
    `raw` what the turn costs as given, before retrieval; `as_given` whether that is under the watermark
    (`threshold` tokens)."""

    budget: Budget
    threshold: int
    fixed: Mapping[str, int]
    raw: int
    as_given: bool
    weights: Mapping[str, float]

    @property
    def pool(self) -> int:
        """What the parts never cut leave of `available`."""
        return self.budget.available - sum(self.fixed.values())

    def retrieval_room(self) -> int:
        """Retrieval's cap: its weighted part of the pool, and when the turn goes as given no more than the turn
        leaves of `available`."""
        total = sum(self.weights.values())
        share = int(self.pool * self.weights.get("retrieval", 0.0) / total) if total > 0 else 0
        if self.as_given:
            return max(0, min(share, self.budget.available - self.raw))
        return max(0, min(share, self.pool))

    def grants(self, demands: Mapping[str, int]) -> dict[str, int]:
        """The caps of the categories that can be cut, given what each needs (retrieval: what it found); under
        pressure by weight with the surplus flowing on, as given each may have what it needs."""
        if self.as_given:
            return {name: demands.get(name, 0) for name in CUT}
        return allocate(self.pool, self.weights, {name: demands.get(name, 0) for name in CUT})

    def tools_grant(self, tools: int, retrieved: int) -> int:
        """The tool schemas' cap under pressure: their weighted part of what the system prompt, the constraints
        block and the pinned tools leave (not the current turn's message, nor the history's size: the tool block
        is part of the cached prefix and should not change with every turn), with retrieval's unused part given
        to the others."""
        steady = self.budget.available - self.fixed["system"] - self.fixed["constraints"] - self.fixed["pinned_tools"]
        return allocate(steady, self.weights, {"tools": tools, "retrieval": retrieved, "history": steady,
                                               "tool_results": steady})["tools"]

    def history_room(self, spent: int) -> tuple[int, int]:
        """The history's room (summary, messages, tool results) under the watermark and under `available`, once
        `spent` tokens went to everything else. The first leaves the current turn's message out: what compaction
        keeps, and when it runs, should not follow one long pasted message (that turn is fitted by the second)."""
        current = self.fixed.get("current", 0)
        return max(0, self.threshold - spent + current), max(0, self.budget.available - spent)


def decide(budget: Budget, watermark: float, weights: Mapping[str, float], fixed: Mapping[str, int],
           demands: Mapping[str, int]) -> Plan:
    """The plan for a turn whose parts never cut cost `fixed` and whose others cost `demands` as given."""
    threshold = int(budget.available * watermark)
    raw = sum(fixed.values()) + sum(demands.get(name, 0) for name in CUT if name != "retrieval")
    return Plan(budget, threshold, MappingProxyType(dict(fixed)), raw, raw <= threshold,
                MappingProxyType(dict(weights)))


@dataclass
class Ledger:
    """Tokens spent per category against `available`; `spend` raises Overspent naming the step that overspends."""

    available: int
    spent: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Everything spent so far."""
        return sum(self.spent.values())

    @property
    def left(self) -> int:
        """What is still free."""
        return self.available - self.total

    def spend(self, step: str, category: str, tokens: int) -> None:
        """Record `tokens` more for `category`; over `available` is a defect of `step`."""
        if tokens < 0:
            raise Overspent(f"context step {step!r} spent {tokens} tokens on {category}: a count below zero")
        if tokens > self.left:
            raise Overspent(f"context step {step!r} spent {tokens} tokens on {category} with {self.left} of "
                            f"{self.available} left (spent so far: {dict(self.spent)})")
        self.spent[category] = self.spent.get(category, 0) + tokens

    def set(self, step: str, category: str, tokens: int) -> None:
        """Replace what `category` spends (a step that revises its own earlier spend)."""
        before = self.spent.pop(category, 0)
        try:
            self.spend(step, category, tokens)
        except Overspent:
            self.spent[category] = before
            raise
