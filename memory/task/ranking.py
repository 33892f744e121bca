"""How task items are scored for recall, and how an offloaded item is shown."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["KIND_WEIGHTS", "RECENCY_HALF_RANK", "offload_text", "overlap", "query_terms", "recency", "score"]

# Plans and results steer the next step; raw tool output is the first thing to drop when the budget is tight.
KIND_WEIGHTS: dict[str, float] = {
    "plan": 1.0,
    "result": 1.0,
    "todo": 0.9,
    "summary": 0.8,
    "error": 0.7,
    "note": 0.6,
    "observation": 0.5,
    "tool_result": 0.4,
}

# The item this many places behind the newest gets half the newest one's recency.
RECENCY_HALF_RANK = 8.0

# Every live item belongs to the task at hand, so none scores below this floor (recall's default
# min_score is 0.2): the budget, not the threshold, decides which of them fit.
_FLOOR = 0.3
_RECENCY_WEIGHT = 0.3
_KIND_WEIGHT = 0.25
_OVERLAP_WEIGHT = 0.15


def query_terms(terms: str | Sequence[str] | None) -> tuple[str, ...]:
    """Distinct lower-cased terms; a plain string is split on whitespace (pass jieba terms for Chinese)."""
    if terms is None:
        return ()
    if isinstance(terms, str):
        terms = terms.split()
    return tuple(dict.fromkeys(t.strip().lower() for t in terms if t.strip()))


def overlap(terms: tuple[str, ...], text: str) -> float:
    """Share of the query terms that occur in `text` (substring match, so Chinese terms work unsegmented)."""
    if not terms:
        return 0.0
    lowered = text.lower()
    return sum(1 for t in terms if t in lowered) / len(terms)


def recency(rank: int) -> float:
    """1.0 for the newest item (rank 0), halving every RECENCY_HALF_RANK places back."""
    return float(0.5 ** (rank / RECENCY_HALF_RANK))


def score(kind: str, rank: int, lexical: float, one_shot: bool = False) -> float:
    """0.3 + 0.3·recency + 0.25·kind weight + 0.15·query overlap: always in 0.3..1.0.

    Recency is by position (newest first), not by age, since a task's pace varies; the kind weight puts
    plans and sub-task results above notes and tool output; the overlap is a small nudge toward items that
    mention the query, never enough to bury the latest plan. A one-shot item is used up by the call that
    sees it, fitting or not, so it scores like the newest plan.
    """
    fresh = 1.0 if one_shot else recency(rank)
    weight = 1.0 if one_shot else KIND_WEIGHTS[kind]
    value = _FLOOR + _RECENCY_WEIGHT * fresh + _KIND_WEIGHT * weight + _OVERLAP_WEIGHT * lexical
    return round(min(1.0, value), 6)


def offload_text(key: str, tokens: int, head: str) -> str:
    """`[offloaded t-42/r7, 3,120 tokens] <head> …`: what recall shows instead of a large item."""
    return f"[offloaded {key}, {tokens:,} tokens] {head.rstrip()} …"
