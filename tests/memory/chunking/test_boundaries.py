"""The boundary choice on hand-made token counts and similarities (no model)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from memory.chunking.boundaries import adjacent_similarities, choose_boundaries
from memory.config import ChunkingConfig
from memory.errors import ValidationError

CONFIG = ChunkingConfig(target_tokens=100, max_tokens=200, min_tokens=20, similarity_drop=0.25)


def _sizes(counts: list[int], cuts: list[int]) -> list[int]:
    edges = [0, *cuts, len(counts)]
    return [sum(counts[a:b]) for a, b in itertools.pairwise(edges)]


def test_cuts_at_the_topic_shift_rather_than_the_target() -> None:
    counts = [20] * 10
    similarities = [0.8, 0.75, 0.8, 0.1, 0.8, 0.78, 0.8, 0.79, 0.8]  # the topic changes before unit 4
    assert choose_boundaries(counts, similarities, CONFIG) == [4]


def test_without_a_shift_cuts_at_the_lowest_similarity_near_the_target() -> None:
    counts = [20] * 10
    similarities = [0.6, 0.6, 0.6, 0.55, 0.6, 0.5, 0.6, 0.6, 0.6]  # shallow dips only
    assert choose_boundaries(counts, similarities, CONFIG) == [6]


def test_a_shift_too_early_for_min_tokens_is_ignored() -> None:
    counts = [10, 30, 30, 30, 30, 30, 30]
    similarities = [0.0, 0.7, 0.7, 0.3, 0.7, 0.7]
    cuts = choose_boundaries(counts, similarities, CONFIG)
    assert 1 not in cuts and cuts == [4]


def test_size_only_prefers_paragraph_breaks_and_the_target() -> None:
    counts = [20] * 10
    assert choose_boundaries(counts, None, CONFIG) == [5]
    breaks = [False, False, False, True, False, False, False, False, False]
    assert choose_boundaries(counts, None, CONFIG, breaks) == [4]


def test_every_piece_fits_max_tokens(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = [int(n) for n in rng.integers(1, 200, size=80)]
    similarities = [float(x) for x in rng.uniform(-0.2, 0.9, size=79)]
    for sims in (similarities, None):
        cuts = choose_boundaries(counts, sims, CONFIG)
        assert cuts == sorted(set(cuts)) and all(0 < c < len(counts) for c in cuts)
        assert all(size <= CONFIG.max_tokens for size in _sizes(counts, cuts))


def test_tiny_tail_merges_into_its_neighbour() -> None:
    counts = [50, 50, 50, 10]
    assert choose_boundaries(counts, None, CONFIG) == [2]
    assert _sizes(counts, [2]) == [100, 60]


def test_tiny_piece_stays_when_no_neighbour_has_room() -> None:
    counts = [200, 10, 200]
    assert choose_boundaries(counts, None, CONFIG) == [1, 2]


def test_fits_in_one_chunk() -> None:
    assert choose_boundaries([30, 30, 30], [0.0, 0.0], CONFIG) == []
    assert choose_boundaries([], None, CONFIG) == []
    assert choose_boundaries([150], None, CONFIG) == []


@pytest.mark.parametrize(
    ("counts", "similarities", "breaks", "message"),
    [
        ([10, 10, 10], [0.5], None, "similarities must have one entry per gap"),
        ([10, 10], None, [True, False], "breaks must have one entry per gap"),
        ([10, 250], None, None, "over max_tokens=200"),
    ],
)
def test_rejects_malformed_input(
    counts: list[int], similarities: list[float] | None, breaks: list[bool] | None, message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        choose_boundaries(counts, similarities, CONFIG, breaks)


def test_adjacent_similarities() -> None:
    a, b = np.array([1.0, 0.0], dtype=np.float32), np.array([0.0, 1.0], dtype=np.float32)
    vectors = np.stack([a, a, b, b])
    assert adjacent_similarities(vectors, window=1) == pytest.approx([1.0, 0.0, 1.0])
    assert adjacent_similarities(vectors, window=2)[1] == pytest.approx(0.0)
    assert adjacent_similarities(vectors[:1]) == []
