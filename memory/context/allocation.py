"""How the input budget is split between the parts of a prompt.

Seven categories are counted: system, tools, constraints, retrieval, history, tool_results, current. Three are
never cut: the system prompt, the constraints block (with its restatement) and the current turn (the latest user
message and what follows it); they are taken first. The rest of the budget is shared by weight between tools,
retrieval, history and tool_results, and what one of them does not need flows to the others
(memory.share.allocate).

The shares are caps that bind only under pressure (memory.context.plan): a turn under the watermark goes as given.
The `agent` preset started from a first table of shares (tools 10 %, retrieval 30 %, history 35 %, tool results
15 %; docs/how-it-works.md); the tools' weight is 20 here, because the tool block is part of the cached prefix and a
tool left out is one the agent cannot call: measured on real agent conversations (bench/context_real.py, the dev
split; docs/experiments.md) it left the called tool out and changed the prefix less often, with the history's values
kept as well.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from memory.errors import ValidationError

__all__ = ["CATEGORIES", "DEFAULT_PRESET", "FIXED", "PRESETS", "SHARED", "shares"]

CATEGORIES = ("system", "tools", "constraints", "retrieval", "history", "tool_results", "current")
FIXED = ("system", "constraints", "current")
SHARED = ("tools", "retrieval", "history", "tool_results")

PRESETS: Mapping[str, Mapping[str, float]] = MappingProxyType({
    "agent": MappingProxyType({"tools": 0.20, "retrieval": 0.30, "history": 0.35, "tool_results": 0.15}),
    # a conversation: mostly what was said, a little memory, few tools
    "chat": MappingProxyType({"tools": 0.05, "retrieval": 0.20, "history": 0.65, "tool_results": 0.05}),
    # question answering over documents: mostly what recall finds
    "rag": MappingProxyType({"tools": 0.05, "retrieval": 0.60, "history": 0.25, "tool_results": 0.05}),
})
DEFAULT_PRESET = "agent"


def shares(allocation: object) -> Mapping[str, float]:
    """The weights of the shared categories: a preset's name, or explicit shares of some of them (0 for the rest)."""
    if allocation is None:
        return PRESETS[DEFAULT_PRESET]
    if isinstance(allocation, str):
        if allocation not in PRESETS:
            raise ValidationError(f"allocation {allocation[:40]!r} is not a preset; use one of "
                                  f"{', '.join(PRESETS)} or an object of shares of {', '.join(SHARED)}")
        return PRESETS[allocation]
    if not isinstance(allocation, Mapping):
        raise ValidationError(f"allocation must be a preset name ({', '.join(PRESETS)}) or an object of shares")
    fixed = sorted(set(allocation) & set(FIXED))
    if fixed:
        raise ValidationError(f"allocation cannot share out {', '.join(fixed)}: the system prompt, the constraints "
                              f"and the current turn are never cut; give shares of {', '.join(SHARED)}")
    unknown = sorted(set(map(str, allocation)) - set(SHARED))
    if unknown:
        raise ValidationError(f"unknown allocation category {', '.join(unknown)}; the shares are of "
                              f"{', '.join(SHARED)}")
    weights = {}
    for name, value in allocation.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise ValidationError(f"allocation.{name} must be a share from 0 to 1, got {str(value)[:40]!r}")
        weights[str(name)] = float(value)
    if sum(weights.values()) <= 0:
        raise ValidationError("allocation gives every category a share of 0; give at least one a share above 0")
    return MappingProxyType({name: weights.get(name, 0.0) for name in SHARED})
