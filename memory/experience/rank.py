"""Ranking one search's candidates: fuse, boost, rerank, reading only the rows of candidates that can reach the top.

The k best come out of rerank's pairwise steps (duplicates, newer-first), which touch only its window of the best
candidates; so only the window and the k after it can make the k best. Before any row is read, a candidate's
fused score bounds what it can become: every step between fusion and the pairwise ones declares how far it can
move a score (the boosts' `span`, rerank's `span`), and a candidate whose best possible score stays below the
worst possible score of as many others as there are places is beyond reach. Its row is never read, which is most
of what the dense side over-fetches. This is the one place that bound lives: a new factor declares its span and
the cut-off stays exact (tests compare the ranking with every row read).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from memory.config import RetrievalConfig
from memory.experience.amounts import AmountBoost
from memory.experience.anchors import AnchorBoost
from memory.experience.boosts import Boosts
from memory.experience.catalog import ChunkRow
from memory.experience.fuse import Fused, Weights, fuse
from memory.experience.periods import DateBoost
from memory.experience.rerank import Candidate, Ranked, Span, most_window, rerank, span, window
from memory.experience.retrieve import Retrieved
from memory.experience.rows import Rows
from memory.experience.speakers import FirstPersonBoost, SpeakerBoost

__all__ = ["Ranking", "Reach", "rank"]

# Slack on the bound, so that float rounding of the factors keeps a candidate at the edge inside the reach.
_SLACK = 1e-9


class Ranking(NamedTuple):
    """The weights the query gave each retriever and its best candidates, best first."""

    weights: Weights
    ranked: list[Ranked]


class Reach(NamedTuple):
    """How far the steps after fusion can move a fused score f before rerank's pairwise steps: the boosts scale it
    by `boost` (least, most), rerank's scoring blends in coverage and scales by recency (`rerank`)."""

    boost: tuple[float, float]
    rerank: Span

    def lowest(self, fused: float) -> float:
        """The least a candidate fused at `fused` can score (no coverage, the smallest factors)."""
        return (1.0 - self.rerank.blend) * fused * self.boost[0] * self.rerank.least

    def highest(self, fused: float) -> float:
        """The most a candidate fused at `fused` can score (full coverage, the largest factors)."""
        return ((1.0 - self.rerank.blend) * fused * self.boost[1] + self.rerank.blend) * self.rerank.most

    def reachable(self, fused: Sequence[Fused], places: int) -> int:
        """How many of the fused candidates (best first) can still be among the first `places` after scoring."""
        if len(fused) <= places:
            return len(fused)
        # The first `places` candidates all score at least `bound`; one whose highest() stays below it is beyond
        # reach, and highest() grows with the fused score (best first), so the first such one ends the reach.
        bound = self.lowest(fused[places - 1].score) * (1.0 - _SLACK)
        kept = places
        while kept < len(fused) and self.highest(fused[kept].score) >= bound:
            kept += 1
        return kept


def rank(
    retrieved: Retrieved, k: int, config: RetrievalConfig, now: datetime, *, reranked: bool = True,
    reach_tokens: int | None = None, item_tokens: int | None = None,
) -> Ranking:
    """The k best candidates of `retrieved`: fused, boosted for the speakers and dates the query names, and (unless
    `reranked` is False) reranked; `reach_tokens` (each candidate counted up to `item_tokens`) narrows rerank's
    window (see memory.experience.rerank.rerank).

    Only the rows of candidates that can reach the k best are read (into `retrieved.rows`).
    """
    weights, fused = fuse(retrieved.dense, retrieved.lexical, retrieved.cjk_share, sum(retrieved.idf.values()),
                          config)
    boosts = Boosts(SpeakerBoost(retrieved.query, config.speaker_boost),
                    FirstPersonBoost(retrieved.query, config.first_person_boost, config.user_speakers),
                    DateBoost(retrieved.query, config.date_boost), AmountBoost(retrieved.query, config.amount_boost),
                    AnchorBoost(config.anchor_boost))
    rows = retrieved.rows
    if not reranked:
        reach = Reach(boosts.span, Span(0.0, 1.0, 1.0))
        fused, upto = _read_within(fused, rows, reach, k)
        head = boosts.favour(fused[:upto], rows)[:k]
        return Ranking(weights, [Ranked(c, c.fused.score, None, 1.0) for c in _candidates(head, rows)])
    reach = Reach(boosts.span, span(config, retrieved.temporal))
    places = most_window(k)
    if reach_tokens is not None:
        # The window follows the tokens of the k best before any pairwise change: the candidates that can be
        # among those k give it, and a narrower window leaves fewer candidates to read.
        fused, upto = _read_within(fused, rows, reach, k)
        places = window(_candidates(boosts.favour(fused[:upto], rows), rows), retrieved.idf, now, retrieved.temporal,
                        config, k, reach_tokens, item_tokens)
    fused, upto = _read_within(fused, rows, reach, places + k)
    ranked = rerank(_candidates(boosts.favour(fused[:upto], rows), rows), retrieved.idf, now, retrieved.temporal,
                    config, k, reach_tokens, item_tokens)
    return Ranking(weights, ranked[:k])


def _read_within(fused: list[Fused], rows: Rows, reach: Reach, places: int) -> tuple[list[Fused], int]:
    """`fused` without the candidates found to have no row, and how many of it can reach the first `places`, their
    rows all read (a candidate with no evidence needs none: it is never a result)."""
    while True:
        upto = reach.reachable(fused, places)
        absent = rows.read(f.chunk_id for f in fused[:upto] if f.score > 0)
        if not absent:
            return fused, upto
        fused = [f for f in fused if f.chunk_id not in absent]  # deleted meanwhile: the bound moves, read again


def _candidates(fused: Sequence[Fused], rows: Rows) -> list[Candidate]:
    """Candidates of the fused chunks that have evidence and a row."""
    # A candidate with no evidence at all (cosine below the floor, no query term) is noise, not a result.
    return [Candidate(f, _group(row), row.terms, row.updated_at, row.tokens)
            for f in fused if f.score > 0 and (row := rows.get(f.chunk_id)) is not None]


def _group(row: ChunkRow) -> str:
    """Where a newer snippet supersedes an older similar one: its document, or a conversation's speaker."""
    if row.kind == "memory" and row.speaker:
        return f"speaker:{row.speaker}"
    return f"doc:{row.doc_id}"
