"""What the inspector's templates show, computed from library results: token bars, the "why" of a recalled item,
omitted counts, a message's text. Pure functions; the templates only lay them out."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory.context import ContextReport
from memory.recall import RecallResult

__all__ = [
    "CONTEXT_CATEGORIES", "TIERS", "Segment", "bar", "by_kind", "context_bar", "message_text", "omitted_rows",
    "recall_bar", "why_parts",
]

TIERS = ("fact", "task", "experience")
# The order /v1/context reports them in (TokensPublic), which is roughly the order of the prompt.
CONTEXT_CATEGORIES = ("system", "tools", "constraints", "summary", "retrieval", "history", "tool_results", "current")


@dataclass(frozen=True)
class Segment:
    """One stretch of a horizontal token bar: what it stands for, its tokens, and where it lies (percent)."""

    label: str
    tokens: int
    x: float
    width: float


def bar(parts: Iterable[tuple[str, int]], total: int) -> tuple[Segment, ...]:
    """The parts laid end to end, each as its share of `total` (parts of 0 tokens are left out)."""
    out: list[Segment] = []
    x = 0.0
    for label, tokens in parts:
        if tokens <= 0:
            continue
        width = 100.0 * tokens / total if total > 0 else 0.0
        out.append(Segment(label, tokens, round(x, 3), round(width, 3)))
        x += width
    return tuple(out)


def recall_bar(result: RecallResult) -> tuple[Segment, ...]:
    """The budget split into each tier's items, the block's headings and restated lines, and what was left."""
    per_tier = {tier: sum(i.tokens for i in result.items if i.snippet.tier == tier) for tier in TIERS}
    layout = sum(per_tier.values())
    parts = [*per_tier.items(), ("layout", result.used_tokens - layout),
             ("unused", result.budget - result.used_tokens)]
    return bar(parts, max(result.budget, result.used_tokens))


def context_bar(report: ContextReport) -> tuple[Segment, ...]:
    """The input room (`available`) split by category, and what was left of it."""
    tokens = report.tokens
    used = tokens.get("total", 0)
    parts = [*((c, tokens.get(c, 0)) for c in CONTEXT_CATEGORIES), ("unused", report.budget.available - used)]
    return bar(parts, max(report.budget.available, used))


def why_parts(why: Mapping[str, Any]) -> list[str]:
    """A recalled item's reasons in short phrases: each retriever's rank and score, then the other factors."""
    parts: list[str] = []
    for name, value in why.items():
        if isinstance(value, Mapping) and "rank" in value:
            parts.append(f"{name} #{value['rank']} ({value.get('score')})")
        elif isinstance(value, Mapping):
            parts.extend(f"{name}.{p}" for p in why_parts(value))
        elif value is True:
            parts.append(name)
        elif value is None or value is False:
            continue
        else:
            parts.append(f"{name} {value}")
    return parts


def omitted_rows(result: RecallResult) -> list[tuple[str, int]]:
    """Candidates left out, by reason (zero counts included: that nothing was cut is worth seeing)."""
    o = result.omitted
    return [("below threshold", o.below_threshold), ("over budget", o.over_budget), ("duplicate", o.duplicate),
            ("empty", o.empty), ("pinned over budget", len(o.pinned_over_budget))]


def by_kind(items: Sequence[Any]) -> list[tuple[str, list[Any]]]:
    """Task items grouped by kind, kinds in the order they first appear, items oldest first."""
    groups: dict[str, list[Any]] = {}
    for item in items:
        groups.setdefault(item.kind, []).append(item)
    return list(groups.items())


def message_text(message: Mapping[str, Any]) -> str:
    """What a chat message says: its text, or its parts and tool calls as JSON when it is not plain text."""
    content = message.get("content")
    text = content if isinstance(content, str) else ("" if content is None else _json(content))
    calls = message.get("tool_calls")
    return text + (("\n" if text else "") + "tool calls: " + _json(calls) if calls else "")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)
