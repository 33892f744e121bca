"""Recall baselines over one conversation's turns: recency, BM25 only, dense only; each packs a budget greedily."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

from bench._recall_data import Turn
from bench.embed_cache import CachedEmbedder
from memory.tokens import get_counter

__all__ = ["BASELINES", "Ranker", "TurnIndex", "pack", "rank_bm25", "rank_dense", "rank_recency"]

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return _WORD.findall(text.lower())


@dataclass
class TurnIndex:
    """A conversation's turns with what every baseline needs, built once: line token counts, BM25, vectors."""

    turns: Sequence[Turn]
    tokens: list[int]
    bm25: BM25Okapi | None
    vectors: np.ndarray | None
    embedder: CachedEmbedder | None

    @classmethod
    def build(cls, turns: Sequence[Turn], embedder: CachedEmbedder | None) -> TurnIndex:
        """Count every turn's line; index lower-cased words (BM25) and, with an embedder, `speaker: text`."""
        counter = get_counter()
        corpus = [words(t.indexed) for t in turns]
        # rank_bm25 divides by the corpus size and average length: an empty corpus or all-empty turns break it.
        bm25 = BM25Okapi(corpus) if any(corpus) else None
        vectors = embedder.encode_documents([t.indexed for t in turns]) if embedder and turns else None
        return cls(turns, [counter.count(t.line) for t in turns], bm25, vectors, embedder)


Ranker = Callable[[TurnIndex, str], list[int]]


def rank_recency(index: TurnIndex, query: str) -> list[int]:
    """Latest turns first (the query is ignored)."""
    return list(range(len(index.turns) - 1, -1, -1))


def rank_bm25(index: TurnIndex, query: str) -> list[int]:
    """Turns by BM25Okapi score over lower-cased words, ties by position."""
    if index.bm25 is None:
        return []
    scores = index.bm25.get_scores(words(query))
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def rank_dense(index: TurnIndex, query: str) -> list[int]:
    """Turns by cosine similarity of MiniLM vectors, ties by position."""
    if index.vectors is None or index.embedder is None:
        return []
    scores = index.vectors @ index.embedder.encode_query(query)
    return sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))


BASELINES: dict[str, Ranker] = {"recency": rank_recency, "bm25": rank_bm25, "dense": rank_dense}


def pack(index: TurnIndex, ranking: Sequence[int], budget: int) -> tuple[list[int], int]:
    """Turns taken in rank order while they fit (a turn too big is skipped, smaller later ones still go in)."""
    chosen: list[int] = []
    used = 0
    for i in ranking:
        if used + index.tokens[i] <= budget:
            chosen.append(i)
            used += index.tokens[i]
        if budget - used <= 0:
            break
    return chosen, used
