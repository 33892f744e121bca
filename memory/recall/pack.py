"""Choose, trim, order and render recall candidates so the block fits a token budget exactly."""

from __future__ import annotations

from collections.abc import Sequence, Set
from datetime import datetime

from memory.bullet import clean
from memory.config import RecallConfig
from memory.errors import ValidationError
from memory.limits import check_score
from memory.recall.dedupe import dedupe
from memory.recall.fit import Block, fit, rank
from memory.recall.model import Omitted, RecallItem, RecallResult
from memory.recall.render import RESTATE_HEADER, SECTIONS, Line, Section, cost, freshness, make_line, section_of
from memory.recall.trim import Cuts, trim_line
from memory.share import allocate
from memory.snippet import Snippet
from memory.tokens import TokenCounter

__all__ = ["item_cap", "pack"]

# A cut shorter than this says too little to be worth its bullet.
_MIN_TRIM_TOKENS = 8
# While other tiers may still use a tier's space, a cut must fill at least half of it to beat leaving it.
_SHARED_TRIM_FILL = 0.5
# Each cut attempt costs a few counts; snippets ranked lower than this rarely beat the whole ones above.
_TRIM_TRIES = 3
_TIERS: tuple[Section, ...] = ("fact", "task", "experience")


def pack(
    candidates: Sequence[Snippet],
    budget: int,
    config: RecallConfig,
    counter: TokenCounter,
    *,
    min_score: float | None = None,
    now: datetime | None = None,
    wanted: Set[str] = frozenset(),
) -> RecallResult:
    """The snippets that fit `budget` tokens, pinned facts first, rendered as one prompt-ready block. A snippet cut
    to fit keeps the sentences around the one that holds most of the query's terms (`wanted`)."""
    _check(budget, min_score)
    threshold = config.min_score if min_score is None else min_score
    texts = [snippet for snippet in candidates if clean(snippet.text)]
    ranked = [snippet for snippet in texts if not snippet.pinned]
    passing = [snippet for snippet in ranked if snippet.score >= threshold]
    fallback = not passing and bool(ranked) and config.low_confidence_fallback
    if fallback:
        passing = [min(ranked, key=rank)]
    # Threshold before dedupe: what will never be shown is not worth comparing.
    unique, duplicates = dedupe([snippet for snippet in texts if snippet.pinned] + passing)
    pinned = [snippet for snippet in unique if snippet.pinned]
    lines = [make_line(s, counter, low_confidence=fallback and not s.pinned) for s in sorted(unique, key=rank)]

    headers = {section: cost(header, counter) for section, header in SECTIONS.items()}
    cuts: Cuts = {}
    lines = _bounded(lines, budget, config, counter, cuts, wanted)
    chosen = _choose(lines, budget, config, headers, counter, cuts, wanted)
    blocks: list[Block] = [(SECTIONS[section], chosen[section]) for section in SECTIONS]
    if config.restate_constraints and chosen["pinned"]:
        spent = sum(_block_cost(chosen[section], headers[section]) for section in SECTIONS)
        restated, _, _ = _fill(
            chosen["pinned"], [], budget - spent, cost(RESTATE_HEADER, counter), counter, None, cuts
        )
        blocks.append((RESTATE_HEADER, restated))
    rendered, used, blocks = fit(blocks, budget, counter)

    shown = [line for _, section_lines in blocks[: len(SECTIONS)] for line in section_lines]
    kept = sorted(shown, key=lambda line: rank(line.snippet))
    kept_ids = {line.snippet.id for line in kept}
    left_out = tuple(s.id for s in sorted(pinned, key=rank) if s.id not in kept_ids)
    omitted = Omitted(
        below_threshold=len(ranked) - len(passing),
        over_budget=len(lines) - len(kept),
        duplicate=duplicates,
        pinned_over_budget=left_out,
        empty=len(candidates) - len(texts),
    )
    items = tuple(
        RecallItem(
            line.snippet, line.body, line.cost, freshness(line.snippet, now), line.trimmed, line.low_confidence
        )
        for line in kept
    )
    needed = _block_cost([line for line in lines if line.snippet.pinned], headers["pinned"])
    flagged = any(item.low_confidence for item in items)
    warnings = _warnings(left_out, len(pinned), needed, budget, flagged, threshold)
    # Pinned constraints go first and whole: when they take most of a small budget, say why the rest is missing.
    others = [line for line in lines if not line.snippet.pinned]
    crowded = sum(1 for line in others if line.snippet.id not in kept_ids)
    pinned_cost = _block_cost([line for line in kept if line.snippet.pinned], headers["pinned"])
    if crowded and 2 * pinned_cost > budget:
        warnings += (f"the pinned constraints took {pinned_cost} of the {budget} tokens, and {crowded} of the "
                     f"{len(others)} other memories that matched were left out; raise the budget, or unpin the "
                     "constraints that no longer apply",)
    return RecallResult(items, rendered, used, budget, omitted, warnings)


def _check(budget: int, min_score: float | None) -> None:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ValidationError(f"budget must be a whole number of tokens, 0 or more; got {budget!r}")
    check_score(min_score, "min_score")


def _block_cost(lines: Sequence[Line], header: int) -> int:
    return header + sum(line.cost for line in lines) if lines else 0


def item_cap(budget: int, config: RecallConfig) -> int:
    """The most one item shows of `budget` when the candidates do not all fit (`[recall] item_share`)."""
    return max(_MIN_TRIM_TOKENS, int(config.item_share * budget))


def _bounded(lines: list[Line], budget: int, config: RecallConfig, counter: TokenCounter, cuts: Cuts,
             wanted: Set[str]) -> list[Line]:
    """`lines` with the long ones cut, when they do not all fit: no item shows more than item_share of the budget,
    and a neighbouring turn (its score borrowed from the turn it sits next to) no more than that turn shows (when
    no cut is that short, no more than item_share).

    Under pressure a whole long reply costs the place of several other memories that may hold what a question
    needs (several sessions of a history, say); its sentences around the query's words carry most of what it
    matched for, and search returns the whole text. A neighbour brings context to its seed, so it is
    worth no more tokens than the seed. Pinned lines are never cut (a cut constraint can say the opposite).
    """
    if sum(line.cost for line in lines) <= budget:
        return lines  # everything fits: every item goes whole
    cap = item_cap(budget, config)
    costs = {line.snippet.id: line.cost for line in lines}
    bounded = []
    for line in lines:
        seed = line.snippet.why.get("neighbour_of")
        limits = [cap]
        if isinstance(seed, str) and costs.get(seed, cap) < cap:
            limits.insert(0, max(costs[seed], _MIN_TRIM_TOKENS))
        for limit in limits:
            if line.snippet.pinned or line.cost <= limit:
                break
            cut = trim_line(line, limit, counter, min_tokens=_MIN_TRIM_TOKENS, min_fill=0.0, cuts=cuts, wanted=wanted)
            if cut is not None:
                line = cut
                break
        bounded.append(line)
    return bounded


def _choose(
    lines: list[Line], budget: int, config: RecallConfig, headers: dict[Section, int], counter: TokenCounter,
    cuts: Cuts, wanted: Set[str],
) -> dict[Section, list[Line]]:
    """Pinned lines first, then each tier within its share, then leftovers: whole lines before cuts."""
    pending = {section: [line for line in lines if section_of(line.snippet) == section] for section in SECTIONS}
    chosen: dict[Section, list[Line]] = {section: [] for section in SECTIONS}
    # A cut constraint can say the opposite of the whole one, so pinned lines go in whole or not at all.
    chosen["pinned"], pending["pinned"], used = _fill(
        pending["pinned"], [], budget, headers["pinned"], counter, None, cuts
    )
    # Pinned facts are paid from the fact share first; only what they take beyond it shrinks the other tiers.
    weights: dict[Section, float] = {
        "fact": max(config.fact_share * budget - used, 0.0),
        "task": config.task_share * budget,
        "experience": config.experience_share * budget,
    }
    demands = {tier: _block_cost(pending[tier], headers[tier]) for tier in _TIERS}
    grants = allocate(budget - used, weights, demands)
    for tier in _TIERS:
        chosen[tier], pending[tier], spent = _fill(
            pending[tier], [], grants[tier], headers[tier], counter, _SHARED_TRIM_FILL, cuts, wanted
        )
        used += spent
    # Space still free at the end would otherwise stay empty, so any cut worth its bullet beats it.
    for trim_fill in (None, 0.0):
        for tier in _TIERS:
            chosen[tier], pending[tier], spent = _fill(
                pending[tier], chosen[tier], budget - used, headers[tier], counter, trim_fill, cuts, wanted
            )
            used += spent
    return chosen


def _fill(
    pending: Sequence[Line], taken: Sequence[Line], space: int, header: int, counter: TokenCounter,
    trim_fill: float | None, cuts: Cuts, wanted: Set[str] = frozenset(),
) -> tuple[list[Line], list[Line], int]:
    """Lines that fit `space` whole, best first, then maybe one cut (when `trim_fill` is set): taken, rest, used."""
    kept, rest, used = list(taken), [], 0
    for line in pending:
        cost = line.cost + (0 if kept else header)
        if cost <= space - used:
            kept.append(line)
            used += cost
        else:
            rest.append(line)
    if trim_fill is None:
        return kept, rest, used
    opening = 0 if kept else header
    for index, line in enumerate(rest[:_TRIM_TRIES]):
        cut = trim_line(
            line, space - used - opening, counter, min_tokens=_MIN_TRIM_TOKENS, min_fill=trim_fill, cuts=cuts,
            wanted=wanted,
        )
        if cut is not None:
            return [*kept, cut], rest[:index] + rest[index + 1 :], used + opening + cut.cost
    return kept, rest, used


def _warnings(
    left_out: tuple[str, ...], pinned: int, needed: int, budget: int, fallback: bool, threshold: float
) -> tuple[str, ...]:
    warnings = []
    if left_out:
        warnings.append(
            f"{len(left_out)} of {pinned} pinned constraints did not fit in the budget of {budget} tokens "
            f"and were left out ({', '.join(left_out)}); "
            f"raise the budget to at least {needed} tokens to keep them all"
        )
    if fallback:
        warnings.append(
            f"no memory scored at least min_score {threshold:g}; the best match is returned flagged low_confidence"
        )
    return tuple(warnings)

