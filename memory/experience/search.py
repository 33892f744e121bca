"""Hybrid search of one namespace: retrieve (memory.experience.retrieve), rank (rank), add neighbours (neighbours).

Snippet.score is tanh of the reranked fused score: near 0 it equals the fused evidence and it never reaches 1,
so `[recall] min_score` reads as a relevance threshold; bench/experience_bench.py calibrates it (the top hit of a
query asked of the wrong corpus against a correct top hit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from memory.clock import Clock
from memory.config import RetrievalConfig
from memory.embedding.queries import QueryVectors
from memory.experience import catalog, neighbours, results, spread
from memory.experience.dense import VectorIndex
from memory.experience.model import RetrieverHit, SearchExplanation, SearchFilters, Shortlist
from memory.experience.rank import Ranking, rank
from memory.experience.rerank import Ranked
from memory.experience.retrieve import Retrieved, Retriever
from memory.snippet import Snippet
from memory.store import Store

__all__ = ["Retrieved", "Search"]


class Search:
    """Searches the store's chunks with one embedder and one retrieval configuration."""

    def __init__(
        self, store: Store, vectors: VectorIndex, queries: QueryVectors, config: RetrievalConfig, clock: Clock
    ) -> None:
        self._store = store
        self._config = config
        self._clock = clock
        self._retriever = Retriever(store, vectors, queries, config)

    def retrieve(self, namespace: str, query: str, filters: SearchFilters) -> Retrieved:
        """Both retrievers' candidates for `query`, before fusion (see memory.experience.retrieve)."""
        return self._retriever.retrieve(namespace, query, filters)

    def rank(self, retrieved: Retrieved, k: int, *, reranked: bool = True, reach_tokens: int | None = None,
             item_tokens: int | None = None) -> Ranking:
        """The k best of what was retrieved (see memory.experience.rank)."""
        return rank(retrieved, k, self._config, self._clock(), reranked=reranked, reach_tokens=reach_tokens,
                    item_tokens=item_tokens)

    def explain(
        self, namespace: str, query: str, k: int, filters: SearchFilters, *, reach_tokens: int | None = None
    ) -> SearchExplanation:
        """Search, keeping each retriever's list next to the k best results (neighbouring turns included)."""
        retrieved = self.retrieve(namespace, query, filters)
        ranking = self.rank(retrieved, k, reach_tokens=reach_tokens)
        snippets = self._with_neighbours(retrieved, self._snippets(retrieved, ranking.ranked), k)
        return SearchExplanation(
            query=query, terms=retrieved.terms, cjk_share=retrieved.cjk_share, temporal=retrieved.temporal,
            dense_weight=ranking.weights.dense, lexical_weight=ranking.weights.lexical, dense=retrieved.dense,
            lexical=retrieved.lexical, results=tuple(snippets),
        )

    def shortlist(
        self, namespace: str, query: str, k: int, filters: SearchFilters, *, reach_tokens: int,
        item_tokens: int | None = None, floor: float | None = None,
    ) -> Shortlist:
        """explain's results cut at `reach_tokens`, each counted up to `item_tokens` (see Shortlist); only the
        snippets within reach are built. `floor` is the caller's threshold, which the spread keeps a result above
        if it was (memory.experience.spread).

        A caller that will use at most `reach_tokens` tokens needs only the scores of the rest (to count them);
        building a snippet (metadata, the why of its score) costs about as much as ranking it.
        """
        retrieved = self.retrieve(namespace, query, filters)
        ranked = self.rank(retrieved, k, reach_tokens=reach_tokens, item_tokens=item_tokens).ranked
        ids = [r.chunk_id for r in ranked]
        if neighbours.apply(ids, retrieved.rows, self._config) or spread.applies(ids, retrieved.rows, query,
                                                                                   self._config):
            # Turns around the best turns join, or the order spreads over conversations: every result is built,
            # since a neighbour may outrank one and a spread result may fall below another.
            ordered = self._with_neighbours(retrieved, self._snippets(retrieved, ranked), k, floor)
            usable = results.within([s.tokens for s in ordered], reach_tokens, item_tokens)
            return Shortlist(tuple(ordered[:usable]), tuple(s.score for s in ordered[usable:]))
        shown = sorted(((results.shown(r.score), r) for r in ranked), key=lambda pair: (-pair[0], pair[1].chunk_id))
        usable = results.within([r.candidate.tokens for _, r in shown], reach_tokens, item_tokens)
        return Shortlist(
            tuple(self._snippets(retrieved, [r for _, r in shown[:usable]])),
            tuple(score for score, _ in shown[usable:]),
        )

    def close(self) -> None:
        """Stop the retrievers' worker threads (searches after this fail)."""
        self._retriever.close()

    def _with_neighbours(self, retrieved: Retrieved, snippets: list[Snippet], k: int,
                         floor: float | None = None) -> list[Snippet]:
        """The results with the turns around the best turns, spread over conversations when the query asks across
        events, keeping above `floor` what was (memory.experience.spread)."""
        around = partial(catalog.neighbour_turns, self._store.db, retrieved.namespace,
                         window_seconds=self._config.neighbour_window_s)
        joined = neighbours.with_neighbours(snippets, retrieved.rows, k, self._config, around)
        return spread.spread(joined, retrieved.rows, retrieved.query, self._config, floor)

    @staticmethod
    def _snippets(retrieved: Retrieved, ranked: Sequence[Ranked]) -> list[Snippet]:
        hits: Mapping[str, Mapping[str, RetrieverHit]] = results.by_retriever(retrieved.dense, retrieved.lexical)
        return [results.snippet(retrieved.rows[r.chunk_id], r.score, results.why(r, hits, retrieved.idf))
                for r in ranked]
