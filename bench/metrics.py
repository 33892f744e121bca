"""Ranking metrics at document level: a document ranks by its best chunk."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["doc_ranking", "hit_at", "ndcg_at", "recall_at"]


def doc_ranking(chunk_ids: Iterable[str], doc_of: Mapping[str, str]) -> list[str]:
    """Documents in the order of their best chunk."""
    seen: dict[str, None] = {}
    for chunk_id in chunk_ids:
        seen.setdefault(doc_of[chunk_id], None)
    return list(seen)


def ndcg_at(ranking: Sequence[str], relevant: frozenset[str], k: int) -> float:
    """Binary-relevance nDCG@k."""
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranking[:k]) if d in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def recall_at(ranking: Sequence[str], relevant: frozenset[str], k: int) -> float:
    """Share of the relevant documents in the top k."""
    return len(set(ranking[:k]) & relevant) / len(relevant) if relevant else 0.0


def hit_at(ranking: Sequence[str], relevant: frozenset[str], k: int) -> float:
    """1 when a relevant document is in the top k."""
    return 1.0 if set(ranking[:k]) & relevant else 0.0
