"""Fusion of the dense and lexical candidate lists into one score per chunk, with per-query trust in each side.

Each side is put on an absolute scale before they are mixed, so a fused score means the same in every query:
    dense    cosine mapped linearly so that dense_floor -> 0 and dense_ceiling -> 1 (MiniLM: unrelated text
             sits near 0.1, a close paraphrase near 0.8; e5 compresses them to 0.8 / 0.95; each backend declares
             its own Calibration, see memory/embedding); below the floor counts 0;
    lexical  BM25 divided by the sum of the query terms' IDF: 1.0 for a chunk of average length holding every
             query term once (FTS5's bm25 is length-normalised and saturating, so this is an IDF-weighted share
             of the query found in the chunk).
Neither side is capped at 1: capping ties the strongest matches and measurably hurt on CMRC; search squashes the
final score into 0..1 instead. This beats RRF and per-query min-max scaling on SciFact (bench/experience_bench.py
prints RRF beside it; bench/fusion_ablation.py the other variants).

Trust: the dense weight shrinks with the query's share of CJK characters (all-MiniLM-L6-v2 is an English model
and nearly blind on Chinese, where BM25 over jieba terms finds the answer: bench/encoder_bench.py), down to
dense_cjk_trust of itself for an all-Chinese query; a multilingual embedder sets dense_cjk_trust = 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from memory.config import RetrievalConfig
from memory.experience.model import RetrieverHit

__all__ = ["Fused", "Weights", "fuse", "idf", "rrf", "weighted", "weights_for"]


@dataclass(frozen=True)
class Weights:
    """How much one query trusts each retriever; the two add up to 1."""

    dense: float
    lexical: float


class Fused(NamedTuple):
    """A chunk's fused score (0 up, about 1 for a strong match) and the normalised part each retriever gave it."""

    chunk_id: str
    score: float
    dense: float
    lexical: float


def weights_for(config: RetrievalConfig, cjk_share: float) -> Weights:
    """The query's weights: configured dense/lexical balance, dense discounted by the share of CJK text."""
    dense = config.dense_weight * (1.0 - cjk_share * (1.0 - config.dense_cjk_trust))
    lexical = config.lexical_weight
    total = dense + lexical
    if total <= 0:
        return Weights(0.5, 0.5)
    return Weights(dense / total, lexical / total)


def idf(total_rows: int, frequencies: Mapping[str, int]) -> dict[str, float]:
    """FTS5's own BM25 IDF per term (so the lexical normaliser is on bm25()'s scale).

    The two counts are read by separate statements, so a write in between can make a term's count exceed the
    total; such a term is treated as found in every row.
    """
    return {
        term: max(1e-6, math.log((total_rows - min(n, total_rows) + 0.5) / (min(n, total_rows) + 0.5)))
        for term, n in frequencies.items()
    }


def _dense_parts(hits: Sequence[RetrieverHit], config: RetrievalConfig) -> dict[str, float]:
    span = max(1e-6, config.dense_ceiling - config.dense_floor)  # a ceiling at the floor would divide by 0
    return {h.chunk_id: max(0.0, (h.score - config.dense_floor) / span) for h in hits}


def _lexical_parts(hits: Sequence[RetrieverHit], idf_sum: float) -> dict[str, float]:
    if idf_sum <= 0:
        return {}
    return {h.chunk_id: h.score / idf_sum for h in hits}


def weighted(
    dense: Sequence[RetrieverHit],
    lexical: Sequence[RetrieverHit],
    weights: Weights,
    idf_sum: float,
    config: RetrievalConfig,
) -> list[Fused]:
    """Convex combination of the absolute dense and lexical parts; a missing side counts 0."""
    d = _dense_parts(dense, config)
    lx = _lexical_parts(lexical, idf_sum)
    out = [
        Fused(cid, weights.dense * d.get(cid, 0.0) + weights.lexical * lx.get(cid, 0.0), d.get(cid, 0.0),
              lx.get(cid, 0.0))
        for cid in d.keys() | lx.keys()
    ]
    return sorted(out, key=lambda f: (-f.score, f.chunk_id))


def rrf(
    dense: Sequence[RetrieverHit], lexical: Sequence[RetrieverHit], weights: Weights, k: int
) -> list[Fused]:
    """Weighted reciprocal-rank fusion, rescaled so that first place in both lists scores 1."""
    d = {h.chunk_id: 1.0 / (k + h.rank) for h in dense}
    lx = {h.chunk_id: 1.0 / (k + h.rank) for h in lexical}
    best = 1.0 / (k + 1)
    out = [
        Fused(cid, (weights.dense * d.get(cid, 0.0) + weights.lexical * lx.get(cid, 0.0)) / best,
              d.get(cid, 0.0) / best, lx.get(cid, 0.0) / best)
        for cid in d.keys() | lx.keys()
    ]
    return sorted(out, key=lambda f: (-f.score, f.chunk_id))


def fuse(
    dense: Sequence[RetrieverHit],
    lexical: Sequence[RetrieverHit],
    cjk_share: float,
    idf_sum: float,
    config: RetrievalConfig,
) -> tuple[Weights, list[Fused]]:
    """The configured fusion (`adaptive`/`weighted`: absolute convex mix; `rrf`: ranks only)."""
    if config.fusion == "rrf":
        weights = Weights(0.5, 0.5)
        return weights, rrf(dense, lexical, weights, config.rrf_k)
    weights = weights_for(config, cjk_share) if config.fusion == "adaptive" else weights_for(config, 0.0)
    return weights, weighted(dense, lexical, weights, idf_sum, config)
