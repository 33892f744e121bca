"""Fusion: per-query trust by language, absolute scales, RRF for reference."""

from __future__ import annotations

import pytest

from memory.config import RetrievalConfig
from memory.experience.fuse import Weights, fuse, idf, rrf, weights_for
from memory.experience.model import RetrieverHit

CONFIG = RetrievalConfig()


def hits(*pairs: tuple[str, float]) -> list[RetrieverHit]:
    return [RetrieverHit(cid, rank, score) for rank, (cid, score) in enumerate(pairs, 1)]


@pytest.mark.parametrize(("share", "dense"), [(0.0, 0.5), (1.0, 0.05 / 0.55), (0.5, 0.275 / 0.775)])
def test_dense_trust_shrinks_with_the_share_of_chinese(share: float, dense: float) -> None:
    weights = weights_for(CONFIG, share)
    assert weights.dense == pytest.approx(dense)
    assert weights.dense + weights.lexical == pytest.approx(1.0)


def test_a_multilingual_model_can_be_trusted_fully() -> None:
    config = RetrievalConfig(dense_cjk_trust=1.0)
    assert weights_for(config, 1.0) == weights_for(config, 0.0) == Weights(0.5, 0.5)


def test_parts_are_absolute_so_a_weak_best_match_stays_weak() -> None:
    dense = hits(("a", 0.45), ("b", 0.1))
    lexical = hits(("a", 2.0), ("c", 1.0))
    _, fused = fuse(dense, lexical, 0.0, idf_sum=4.0, config=CONFIG)
    by_id = {f.chunk_id: f for f in fused}
    assert by_id["a"].dense == pytest.approx(0.5) and by_id["a"].lexical == pytest.approx(0.5)
    assert by_id["a"].score == pytest.approx(0.5) and by_id["b"].score == 0.0
    assert [f.chunk_id for f in fused] == ["a", "c", "b"]


def test_fusion_of_nothing_is_nothing() -> None:
    assert fuse([], [], 0.0, 0.0, CONFIG)[1] == []


def test_rrf_puts_first_in_both_lists_at_one() -> None:
    fused = rrf(hits(("a", 0.9), ("b", 0.8)), hits(("a", 5.0)), Weights(0.5, 0.5), 60)
    assert fused[0].chunk_id == "a" and fused[0].score == pytest.approx(1.0)


def test_idf_is_fts5s_and_never_negative() -> None:
    weights = idf(10, {"rare": 1, "everywhere": 10})
    assert weights["rare"] > 1.0 and weights["everywhere"] == pytest.approx(1e-6)


def test_idf_survives_a_term_count_above_the_row_count() -> None:
    # frequencies() reads the total and the term counts in two statements; a write between them can do this.
    from memory.experience.fuse import idf

    weights = idf(3, {"new": 5, "old": 1})
    assert weights["new"] == 1e-6 and weights["old"] > 0
