"""Where to cut a run of sentences into chunks: pure functions over token counts and similarities."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory.config import ChunkingConfig
from memory.errors import ValidationError

__all__ = ["adjacent_similarities", "choose_boundaries"]

# Neighbouring sentences averaged on each side of a gap: one sentence alone is too noisy a topic signal.
_SMOOTHING = 2
# Gaps before a gap that make up its running mean.
_RUNNING = 8
# Costs of a segmentation, in units of cosine similarity; the cheapest segmentation wins.
_BREAK_BONUS = 0.2  # a cut between paragraphs (or list items) is this much cheaper than one inside a paragraph
_PIECE_COST = 0.05  # every chunk costs a little, so a cut must earn its keep
_OVER_COST = 1.0  # a chunk at max_tokens costs this much; the cost grows with the square of the excess over target
_UNDER_COST = 1.0  # a chunk under min_tokens costs this much: only taken when nothing else fits
_SIZE_COST = 0.01  # a faint pull towards target-sized chunks, to break ties


def adjacent_similarities(vectors: np.ndarray, window: int = _SMOOTHING) -> list[float]:
    """Cosine similarity across each gap between consecutive unit-norm rows, each side averaged over `window` rows."""
    count = len(vectors)
    if count < 2:
        return []
    sums = np.vstack([np.zeros((1, vectors.shape[1]), dtype=np.float64), np.cumsum(vectors, axis=0)])
    gaps = np.arange(1, count)  # gap g lies between rows g-1 and g
    left = sums[gaps] - sums[np.maximum(gaps - window, 0)]
    right = sums[np.minimum(gaps + window, count)] - sums[gaps]
    left /= np.linalg.norm(left, axis=1, keepdims=True) + 1e-12
    right /= np.linalg.norm(right, axis=1, keepdims=True) + 1e-12
    return [float(x) for x in np.einsum("ij,ij->i", left, right)]


def choose_boundaries(
    token_counts: Sequence[int],
    similarities: Sequence[float] | None,
    config: ChunkingConfig,
    breaks: Sequence[bool] | None = None,
) -> list[int]:
    """Indices of the units that start a new chunk (never 0): cuts at topic shifts, chunks near target_tokens.

    `similarities[i]` compares unit i with unit i+1 (None: cut on size and paragraph breaks alone);
    `breaks[i]` is True when unit i+1 opens a new paragraph. Chunk sizes are sums of `token_counts`, each
    count at most max_tokens, and no chunk goes over max_tokens. A gap whose similarity is below the
    running mean minus similarity_drop is a topic shift and is cut unless that leaves a chunk under
    min_tokens; elsewhere cuts go where similarity is lowest, traded against the distance from the target.
    The trade is settled exactly by dynamic programming over all segmentations.
    """
    _check(token_counts, similarities, breaks, config)
    count = len(token_counts)
    if sum(token_counts) <= config.target_tokens:
        return []
    gap_costs = _gap_costs(count, similarities, breaks, config)
    prefix = np.concatenate([[0], np.cumsum(token_counts)]).tolist()
    best = [0.0] + [np.inf] * count  # best[j]: cheapest segmentation of units[:j]
    previous = [0] * (count + 1)
    for end in range(1, count + 1):
        for start in range(end - 1, -1, -1):
            size = prefix[end] - prefix[start]
            if size > config.max_tokens:
                break
            cost = best[start] + _piece_cost(size, config) + (gap_costs[start - 1] if start else 0.0)
            if cost < best[end]:
                best[end], previous[end] = cost, start
    cuts = []
    end = count
    while end:
        end = previous[end]
        if end:
            cuts.append(end)
    return cuts[::-1]


def _gap_costs(
    count: int, similarities: Sequence[float] | None, breaks: Sequence[bool] | None, config: ChunkingConfig
) -> list[float]:
    """The cost of cutting each gap: negative at a topic shift, positive where the text holds together."""
    costs = []
    overall = float(np.mean(similarities)) if similarities else 0.0
    for gap in range(count - 1):
        cost = 0.0
        if similarities is not None:
            before = similarities[max(gap - _RUNNING, 0) : gap]
            running = float(np.mean(before)) if before else overall
            cost = similarities[gap] - (running - config.similarity_drop)
        costs.append(cost - (_BREAK_BONUS if breaks and breaks[gap] else 0.0))
    return costs


def _piece_cost(size: int, config: ChunkingConfig) -> float:
    over = max(size - config.target_tokens, 0) / max(config.max_tokens - config.target_tokens, 1)
    cost = (
        _PIECE_COST
        + _OVER_COST * over * over
        + _SIZE_COST * ((size - config.target_tokens) / config.target_tokens) ** 2
    )
    return cost + (_UNDER_COST if size < config.min_tokens else 0.0)


def _check(
    token_counts: Sequence[int],
    similarities: Sequence[float] | None,
    breaks: Sequence[bool] | None,
    config: ChunkingConfig,
) -> None:
    gaps = max(len(token_counts) - 1, 0)
    for name, values in (("similarities", similarities), ("breaks", breaks)):
        if values is not None and len(values) != gaps:
            raise ValidationError(
                f"{name} must have one entry per gap between units ({gaps}), got {len(values)}; "
                "pass len(token_counts) - 1 values"
            )
    oversized = [i for i, n in enumerate(token_counts) if n > config.max_tokens]
    if oversized:
        raise ValidationError(
            f"unit {oversized[0]} has {token_counts[oversized[0]]} tokens, over max_tokens={config.max_tokens}; "
            "cut oversized units before choosing boundaries"
        )
