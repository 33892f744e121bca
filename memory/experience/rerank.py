"""Model-free reranking of fused candidates: query-term coverage, recency, newer-first, near-duplicate suppression.

Coverage (coverage_weight) is off by default: blending it in did not help on bench/experience_bench.py and
bench/fusion_ablation.py. Recency, newer-first and duplicates exist for conversation memories and re-ingested
documents (the retrieval benchmarks have one timestamp and no copies); tests pin them down.

A candidate's score before the pairwise steps is `((1 - coverage_weight) * fused + coverage_weight * coverage) *
recency`; `span` says how far that can move a fused score, which is what lets ranking leave unread the candidates
that cannot reach the result (memory.experience.rank). A new scoring factor extends `span`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from memory.config import RetrievalConfig
from memory.experience.freshness import decay
from memory.experience.fuse import Fused
from memory.experience.similarity import similar_pairs

__all__ = ["Candidate", "Ranked", "Span", "coverage", "most_window", "rerank", "span", "window"]


class Candidate:
    """A fused chunk with what reranking looks at: analysed terms, time, and the group it may disagree within.

    A plain slotted class (read-only by convention) rather than a frozen dataclass: a search builds one per
    candidate (see bench/recall_speed.py), and the term set is built only for those that need it, once.
    """

    __slots__ = ("_terms", "fused", "group", "indexed_terms", "tokens", "updated_at")

    def __init__(self, fused: Fused, group: str, indexed_terms: str, updated_at: str, tokens: int = 0) -> None:
        self.fused = fused
        self.group = group  # the document, or for conversation memories the speaker: where a newer one supersedes
        self.indexed_terms = indexed_terms  # the analysed terms as the lexical index holds them, space-separated
        self.updated_at = updated_at
        self.tokens = tokens  # the chunk's size, for callers that will use only so many tokens of the result
        self._terms: frozenset[str] | None = None

    @property
    def terms(self) -> frozenset[str]:
        """The set of analysed terms, built on first use: only the rerank window and shown results need it."""
        if self._terms is None:
            self._terms = frozenset(self.indexed_terms.split())
        return self._terms

    def __repr__(self) -> str:
        return f"Candidate({self.fused!r}, group={self.group!r}, updated_at={self.updated_at!r})"


class Ranked(NamedTuple):
    """A candidate's final score and the factors that made it."""

    candidate: Candidate
    score: float
    coverage: float | None  # None: not computed (coverage_weight 0 leaves it out of the score)
    recency: float
    duplicate_of: str | None = None
    superseded_by: str | None = None

    @property
    def chunk_id(self) -> str:
        """The ranked chunk's id."""
        return self.candidate.fused.chunk_id


class Span(NamedTuple):
    """How rerank's scoring moves a (boosted) fused score x before the pairwise steps: to
    `((1 - blend) * x + blend * c) * r` with a coverage c in 0..1 and a recency r in least..most."""

    blend: float
    least: float
    most: float


def span(config: RetrievalConfig, temporal: bool) -> Span:
    """The Span of rerank's scoring under `config`, for a query that asks about a time (`temporal`) or not."""
    least = 1.0 if temporal else 1.0 - config.recency_weight  # a freshness decay is in 0..1
    return Span(config.coverage_weight, least, 1.0)


def coverage(terms: frozenset[str], idf: Mapping[str, float]) -> float:
    """Share of the query's IDF mass whose terms the chunk holds (0..1)."""
    total = sum(idf.values())
    if total <= 0:
        return 0.0
    return sum(w for t, w in idf.items() if t in terms) / total


def _order(ranked: list[Ranked]) -> list[Ranked]:
    return sorted(ranked, key=lambda r: (-r.score, r.candidate.fused.chunk_id))


def rerank(
    candidates: Sequence[Candidate],
    idf: Mapping[str, float],
    now: datetime,
    temporal: bool,
    config: RetrievalConfig,
    k: int,
    reach_tokens: int | None = None,
    item_tokens: int | None = None,
) -> list[Ranked]:
    """Fused score blended with coverage, times recency; then, among the top 2k+10, newer-first and duplicates.

    With `reach_tokens` (the caller will use at most that many tokens of the result) the window is also at most
    twice the best candidates whose tokens (each counted up to `item_tokens`, the most the caller shows of one)
    add up to it, plus 10: comparing candidates the caller never uses costs every call, and a near-duplicate
    ranked further down than that is left where it is. Coverage is
    computed here only when it weighs in the score; term sets are built
    only for the window.
    """
    ranked = _scored(candidates, idf, now, temporal, config)
    window = _window(ranked, k, reach_tokens, item_tokens)  # only what can reach the result is compared pairwise
    top = _suppress_duplicates(ranked[:window], config)
    if not temporal:
        top = _newer_first(top, config)
    return _order(top + ranked[window:])


def window(
    candidates: Sequence[Candidate],
    idf: Mapping[str, float],
    now: datetime,
    temporal: bool,
    config: RetrievalConfig,
    k: int,
    reach_tokens: int | None,
    item_tokens: int | None = None,
) -> int:
    """How many of the best candidates rerank compares pairwise (its window), from candidates that hold its k best.

    The window depends only on the k best before any pairwise change, so candidates that hold those (see
    memory.experience.rank) give the window of the whole list.
    """
    return _window(_scored(candidates, idf, now, temporal, config), k, reach_tokens, item_tokens)


def _scored(
    candidates: Sequence[Candidate], idf: Mapping[str, float], now: datetime, temporal: bool,
    config: RetrievalConfig,
) -> list[Ranked]:
    """Every candidate's score before the pairwise changes, best first."""
    scored = []
    freshness: dict[str, float] = {}  # candidates share few distinct times (a document's chunks, a session)
    for c in candidates:
        cover = coverage(c.terms, idf) if config.coverage_weight else None
        base = c.fused.score if cover is None else (
            (1.0 - config.coverage_weight) * c.fused.score + config.coverage_weight * cover
        )
        # A query about a time ("when", "去年", "2023") wants old snippets as much as new ones.
        fresh = freshness.get(c.updated_at)
        if fresh is None:
            fresh = freshness[c.updated_at] = decay(c.updated_at, now, config.recency_half_life_days)
        recency = 1.0 if temporal else 1.0 - config.recency_weight + config.recency_weight * fresh
        scored.append(Ranked(c, base * recency, cover, recency))
    return _order(scored)


def most_window(k: int) -> int:
    """The largest window rerank compares pairwise for k results (what it is without a token reach)."""
    return min(2 * k + 10, 100)


def _window(ranked: Sequence[Ranked], k: int, reach_tokens: int | None, item_tokens: int | None) -> int:
    reach = k
    if reach_tokens is not None:
        spent = 0
        for index, r in enumerate(ranked[:k]):
            spent += r.candidate.tokens if item_tokens is None else min(r.candidate.tokens, item_tokens)
            if spent >= reach_tokens:
                reach = index + 1
                break
    return most_window(reach)


def _clusters(sets: Sequence[frozenset[str]], threshold: float) -> list[list[int]]:
    """Single-link clusters (by index, each in rank order) of sets at least `threshold` Jaccard-similar."""
    head = list(range(len(sets)))
    for i, j in similar_pairs(sets, threshold):  # sorted by i, so head[i] is final when i is the first index
        head[j] = min(head[j], head[i])
    clusters: dict[int, list[int]] = defaultdict(list)
    for j, h in enumerate(head):
        clusters[h].append(j)
    return [members for members in clusters.values() if len(members) > 1]


def _suppress_duplicates(ranked: list[Ranked], config: RetrievalConfig) -> list[Ranked]:
    """Of near-identical chunks keep the newest at the cluster's best score; the others sink by a penalty."""
    out = list(ranked)
    for members in _clusters([r.candidate.terms for r in ranked], config.duplicate_similarity):
        newest = max(members, key=lambda m: (ranked[m].candidate.updated_at, -m))
        keeper = ranked[newest].candidate.fused.chunk_id
        best = ranked[members[0]].score
        for m in members:
            out[m] = ranked[m]._replace(score=best) if m == newest else ranked[m]._replace(
                score=ranked[m].score * config.duplicate_penalty, duplicate_of=keeper
            )
    return _order(out)


def _newer_first(ranked: list[Ranked], config: RetrievalConfig) -> list[Ranked]:
    """Similar snippets of one group (they may disagree) share out their scores newest first."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(ranked):
        if r.duplicate_of is None:
            groups[r.candidate.group].append(i)
    out = list(ranked)
    for members in groups.values():
        if len(members) < 2:
            continue
        for cluster in _clusters([ranked[m].candidate.terms for m in members], config.supersede_similarity):
            slots = [members[c] for c in cluster]
            scores = sorted((ranked[s].score for s in slots), reverse=True)
            by_age = sorted(slots, key=lambda s: (ranked[s].candidate.updated_at, -s), reverse=True)
            newest = ranked[by_age[0]].candidate.fused.chunk_id
            for slot, score in zip(by_age, scores, strict=True):
                moved = score < ranked[slot].score
                out[slot] = ranked[slot]._replace(score=score, superseded_by=newest if moved else None)
    return out
