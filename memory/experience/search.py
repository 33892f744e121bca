"""Hybrid search of one namespace: over-fetch dense and lexical candidates, filter, fuse, rerank, make snippets.

Snippet.score is tanh of the reranked fused score: near 0 it equals the fused evidence, a chunk holding every
query term at cosine 0.8 scores about 0.76, and it never reaches 1. Calibration (bench, 200 queries each):
the top hit of a query asked of the wrong corpus scores 0.02-0.15 (90th percentile), a correct top hit
0.56-0.63 (10th percentile), so recall.min_score = 0.2 drops unrelated results and keeps real ones.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from memory.clock import Clock
from memory.config import RetrievalConfig
from memory.experience import catalog, lexical
from memory.text.analyze import cjk_share, query_terms
from memory.experience.catalog import ChunkRow
from memory.experience.dense import VectorIndex
from memory.experience.freshness import asks_about_time
from memory.experience.fuse import Fused, Weights, fuse, idf
from memory.experience.model import (
    RetrieverHit,
    SearchExplanation,
    SearchFilters,
    indexed_text,
)
from memory.experience.rerank import Candidate, Ranked, rerank
from memory.experience.store import Encoder
from memory.recall.model import Snippet
from memory.store import Store

__all__ = ["EXACT_FILTER_LIMIT", "Retrieved", "Searcher"]

# With filters that leave at most this many chunks, dense search runs over exactly those chunks; above it,
# dense over-fetches this many times dense_k and the filter is applied to what comes back.
EXACT_FILTER_LIMIT = 5000
_OVERFETCH = 4


@dataclass(frozen=True)
class Retrieved:
    """Everything both retrievers found for one query, before fusion."""

    query: str
    terms: tuple[str, ...]
    cjk_share: float
    temporal: bool
    idf: Mapping[str, float]
    dense: tuple[RetrieverHit, ...]
    lexical: tuple[RetrieverHit, ...]
    rows: Mapping[str, ChunkRow]
    terms_of: Mapping[str, frozenset[str]]


class Searcher:
    """Runs searches over the store's chunks with one embedder and one retrieval configuration."""

    def __init__(
        self, store: Store, vectors: VectorIndex, embedder: Encoder, config: RetrievalConfig, clock: Clock
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._embedder = embedder
        self._config = config
        self._clock = clock

    def retrieve(self, query: str, namespace: str, filters: SearchFilters) -> Retrieved:
        """Both retrievers' candidates (over-fetched to dense_k / lexical_k), restricted to the filters."""
        db = self._store.db
        terms = query_terms(query)[: lexical.MAX_QUERY_TERMS]  # IDF and MATCH see the same terms
        total, frequencies = lexical.frequencies(db, terms)
        dense: list[RetrieverHit] = []
        # A query without a letter or digit ("？！", "") asks nothing; MiniLM would still find neighbours for it.
        if any(ch.isalnum() for ch in query):
            vector = self._embedder.encode_query(query)
            if filters.empty:
                dense = self._vectors.search(namespace, vector, self._config.dense_k)
            else:
                allowed = catalog.filtered_chunk_ids(db, namespace, filters, EXACT_FILTER_LIMIT)
                if len(allowed) <= EXACT_FILTER_LIMIT:
                    dense = self._vectors.search(namespace, vector, self._config.dense_k, within=allowed)
                else:
                    dense = self._vectors.search(namespace, vector, self._config.dense_k * _OVERFETCH)
        found = lexical.search(db, namespace, terms, self._config.lexical_k, filters)
        rows = catalog.chunk_rows(db, namespace, list({h.chunk_id for h in [*dense, *found]}), filters)
        # Dense hits that the filter (or a concurrent delete) removed drop out; ranks are recounted.
        dense = [RetrieverHit(h.chunk_id, i, h.score) for i, h in enumerate(
            (h for h in dense if h.chunk_id in rows), 1)][: self._config.dense_k]
        lexical_hits = [h for h in found if h.chunk_id in rows]
        return Retrieved(
            query=query, terms=terms, cjk_share=cjk_share(query), temporal=asks_about_time(query),
            idf=MappingProxyType(idf(total, frequencies)), dense=tuple(dense), lexical=tuple(lexical_hits),
            rows=MappingProxyType(rows), terms_of=MappingProxyType(lexical.terms_of(db, rows.values())),
        )

    def rank(self, retrieved: Retrieved, k: int, *, reranked: bool = True) -> tuple[Weights, list[Snippet]]:
        """Fuse (and unless told otherwise rerank) the candidates; the k best as snippets."""
        weights, fused = fuse(
            retrieved.dense, retrieved.lexical, retrieved.cjk_share, sum(retrieved.idf.values()), self._config
        )
        # A candidate with no evidence at all (cosine below the floor, no query term) is noise, not a result.
        candidates = [
            Candidate(f, _group(retrieved.rows[f.chunk_id]), retrieved.terms_of.get(f.chunk_id, frozenset()),
                      retrieved.rows[f.chunk_id].updated_at)
            for f in fused if f.score > 0
        ]
        if reranked:
            ranked = rerank(candidates, retrieved.idf, self._clock(), retrieved.temporal, self._config, k)
        else:
            ranked = [Ranked(c, c.fused.score, 0.0, 1.0) for c in candidates]
        return weights, [self._snippet(r, retrieved) for r in ranked[:k]]

    def explain(self, query: str, namespace: str, k: int, filters: SearchFilters) -> SearchExplanation:
        """Search, keeping each retriever's list next to the result."""
        retrieved = self.retrieve(query, namespace, filters)
        weights, snippets = self.rank(retrieved, k)
        return SearchExplanation(
            query=query, terms=retrieved.terms, cjk_share=retrieved.cjk_share, temporal=retrieved.temporal,
            dense_weight=weights.dense, lexical_weight=weights.lexical, dense=retrieved.dense,
            lexical=retrieved.lexical, results=tuple(snippets),
        )

    @staticmethod
    def _snippet(ranked: Ranked, retrieved: Retrieved) -> Snippet:
        fused: Fused = ranked.candidate.fused
        row = retrieved.rows[fused.chunk_id]
        why: dict[str, object] = {
            "fused": round(fused.score, 4), "coverage": round(ranked.coverage, 4),
            "recency": round(ranked.recency, 4),
        }
        for name, hits in (("dense", retrieved.dense), ("lexical", retrieved.lexical)):
            for hit in hits:
                if hit.chunk_id == fused.chunk_id:
                    why[name] = {"rank": hit.rank, "score": round(hit.score, 4)}
                    break
        if ranked.duplicate_of:
            why["duplicate_of"] = ranked.duplicate_of
        if ranked.superseded_by:
            why["superseded_by"] = ranked.superseded_by
        return Snippet(
            tier="experience", id=row.id, text=indexed_text(row.text, row.heading, row.speaker), score=round(math.tanh(max(0.0, ranked.score)), 4),
            tokens=row.tokens, source=row.source or row.title or row.doc_id, updated_at=row.updated_at,
            doc_id=row.doc_id, metadata=MappingProxyType(json.loads(row.metadata)), why=MappingProxyType(why),
        )


def _group(row: ChunkRow) -> str:
    """Where a newer snippet supersedes an older similar one: its document, or a conversation's speaker."""
    if row.kind == "memory" and row.speaker:
        return f"speaker:{row.speaker}"
    return f"doc:{row.doc_id}"
