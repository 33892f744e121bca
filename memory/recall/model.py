"""What recall answers: the items it chose, what it left out and why, and the rendered block."""

from __future__ import annotations

from dataclasses import dataclass

from memory.snippet import Snippet

__all__ = ["Omitted", "RecallItem", "RecallResult", "is_one_shot"]


def is_one_shot(snippet: Snippet) -> bool:
    """Whether a candidate is a one-shot task item (shown once, consumed by the recall that shows it)."""
    return snippet.tier == "task" and bool(snippet.why.get("ephemeral")) and snippet.key is not None


@dataclass(frozen=True)
class RecallItem:
    """A snippet as returned by recall: possibly trimmed, with its freshness tag.

    `text` is what the block shows (ending in " […]" when trimmed); `tokens` is what its bullet line costs in
    the rendered block, so the items' tokens, the section headers and any restated constraints make up
    `used_tokens` exactly.
    """

    snippet: Snippet
    text: str
    tokens: int
    freshness: str | None
    trimmed: bool = False
    low_confidence: bool = False


@dataclass(frozen=True)
class Omitted:
    """Counts of candidates left out, by reason (`empty`: blank text); `pinned_over_budget` names pinned ones."""

    below_threshold: int = 0
    over_budget: int = 0
    duplicate: int = 0
    pinned_over_budget: tuple[str, ...] = ()
    empty: int = 0


@dataclass(frozen=True)
class RecallResult:
    """The answer to one recall: items by descending score and the rendered block that fits the budget."""

    items: tuple[RecallItem, ...]
    rendered: str
    used_tokens: int
    budget: int
    omitted: Omitted
    warnings: tuple[str, ...] = ()

    @property
    def one_shot(self) -> tuple[str, ...]:
        """The keys of the one-shot task items the block holds."""
        return tuple(str(item.snippet.key) for item in self.items if is_one_shot(item.snippet))
