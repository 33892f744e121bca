"""Hybrid search of one namespace: over-fetch dense and lexical candidates, filter, fuse, rerank, make snippets.

Snippet.score is tanh of the reranked fused score: near 0 it equals the fused evidence, a chunk holding every
query term at cosine 0.8 scores about 0.76, and it never reaches 1. Calibration (bench, 200 queries each):
the top hit of a query asked of the wrong corpus scores 0.02-0.15 (90th percentile), a correct top hit
0.56-0.63 (10th percentile), so recall.min_score = 0.2 drops unrelated results and keeps real ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import MappingProxyType

from memory.clock import Clock
from memory.config import RetrievalConfig
from memory.experience import catalog, lexical, results
from memory.experience.catalog import ChunkRow
from memory.experience.dense import VectorIndex
from memory.experience.freshness import asks_about_time
from memory.experience.fuse import Fused, Weights, fuse, idf
from memory.experience.model import (
    RetrieverHit,
    SearchExplanation,
    SearchFilters,
    Shortlist,
)
from memory.experience.periods import favour_dated, periods
from memory.experience.rerank import Candidate, Ranked, reachable, rerank
from memory.experience.rerank import window as rerank_window
from memory.experience.speakers import favour_named, names
from memory.experience.store import Encoder
from memory.snippet import Snippet
from memory.store import Store
from memory.text.analyze import cjk_share, query_terms

__all__ = ["EXACT_FILTER_LIMIT", "Retrieved", "Searcher"]

# With filters that leave at most this many chunks, dense search runs over exactly those chunks; above it,
# dense over-fetches this many times dense_k and the filter is applied to what comes back.
EXACT_FILTER_LIMIT = 5000
_OVERFETCH = 4
_LEXICAL_WORKERS = 4
# Row lists at least this long are read by two threads at once.
_SPLIT_ROWS = 40


@dataclass(frozen=True)
class Retrieved:
    """Everything both retrievers found for one query, before fusion.

    `rows` holds the row of every hit, unless the search was asked to leave the chunks only the dense side found
    unread (see Searcher.retrieve): ranking then reads those it needs.
    """

    query: str
    namespace: str
    filters: SearchFilters
    terms: tuple[str, ...]
    cjk_share: float
    temporal: bool
    idf: Mapping[str, float]
    dense: tuple[RetrieverHit, ...]
    lexical: tuple[RetrieverHit, ...]
    rows: Mapping[str, ChunkRow]  # with each chunk's analysed terms as indexed (not re-segmented: jieba is slow)


@dataclass(frozen=True)
class _LexicalSide:
    """What the lexical worker read: index statistics, its hits, and their rows."""

    total: int
    frequencies: dict[str, int]
    hits: list[RetrieverHit]
    found: frozenset[str]
    rows: dict[str, ChunkRow]


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
        # Concurrent recalls each need a lexical worker; more than this queue (the machine has few cores).
        self._pool = ThreadPoolExecutor(max_workers=_LEXICAL_WORKERS, thread_name_prefix="lexical")

    def retrieve(
        self, query: str, namespace: str, filters: SearchFilters, *, read_dense: bool = True
    ) -> Retrieved:
        """Both retrievers' candidates (over-fetched to dense_k / lexical_k), restricted to the filters.

        The lexical side (FTS5, which releases the GIL) runs on a worker thread while this one embeds the query
        and asks Chroma, so a recall costs about the slower of the two rather than their sum.

        `read_dense=False` (without filters only: a filter is checked on the rows) leaves the rows of the chunks
        that only the dense side found unread: ranking reads just those that can reach its result (see
        `_ranked`), about half of them in a recall. A dense hit whose chunk was deleted meanwhile keeps its rank.
        """
        lazy = not read_dense and filters.empty
        terms = query_terms(query)[: lexical.MAX_QUERY_TERMS]  # IDF and MATCH see the same terms
        pending = self._pool.submit(self._lexical, namespace, terms, filters)
        db = self._store.db
        rows: dict[str, ChunkRow] = {}
        try:
            dense = self._dense(query, namespace, filters)
            if not pending.done():
                # While FTS5 still runs (without the GIL), read the dense hits' rows here rather than after it.
                rows = catalog.chunk_rows(db, namespace, [h.chunk_id for h in dense], filters)
        finally:
            side = pending.result()
        rows.update(side.rows)
        if lazy:
            return self._retrieved(query, namespace, filters, terms, side, dense, rows)
        # What neither thread read: the rows of the chunks that dense alone found (and that pass the filters).
        rows.update(self._rows(
            namespace, [h.chunk_id for h in dense if h.chunk_id not in rows and h.chunk_id not in side.found], filters
        ))
        # Dense hits that the filter (or a concurrent delete) removed drop out; ranks are recounted.
        if not all(h.chunk_id in rows for h in dense):
            dense = [RetrieverHit(h.chunk_id, i, h.score) for i, h in enumerate(
                (h for h in dense if h.chunk_id in rows), 1)]
        return self._retrieved(query, namespace, filters, terms, side, dense, rows)

    def _retrieved(
        self, query: str, namespace: str, filters: SearchFilters, terms: tuple[str, ...], side: _LexicalSide,
        dense: list[RetrieverHit], rows: dict[str, ChunkRow],
    ) -> Retrieved:
        return Retrieved(
            query=query, namespace=namespace, filters=filters, terms=terms, cjk_share=cjk_share(query),
            temporal=asks_about_time(query), idf=MappingProxyType(idf(side.total, side.frequencies)),
            dense=tuple(dense[: self._config.dense_k]), lexical=tuple(h for h in side.hits if h.chunk_id in rows),
            rows=MappingProxyType(rows),
        )

    def _rows(self, namespace: str, ids: list[str], filters: SearchFilters) -> dict[str, ChunkRow]:
        """catalog.chunk_rows, half of a long list read by an idle worker meanwhile (SQLite steps without the GIL)."""
        if len(ids) < _SPLIT_ROWS:
            return catalog.chunk_rows(self._store.db, namespace, ids, filters)
        half = len(ids) // 2
        other = self._pool.submit(lambda: catalog.chunk_rows(self._store.db, namespace, ids[:half], filters))
        rows = catalog.chunk_rows(self._store.db, namespace, ids[half:], filters)
        rows.update(other.result())
        return rows

    def close(self) -> None:
        """Stop the lexical worker threads (searches after this fail)."""
        self._pool.shutdown(wait=True)

    def _lexical(self, namespace: str, terms: tuple[str, ...], filters: SearchFilters) -> _LexicalSide:
        db = self._store.db  # this worker thread's own connection
        total, frequencies = lexical.frequencies(db, terms)
        matched = lexical.affordable(terms, frequencies, self._config.lexical_max_postings)
        share = lexical.namespace_share(db, namespace, total)
        hits = lexical.search(db, namespace, matched, self._config.lexical_k, filters, share)
        found = {h.chunk_id for h in hits}
        rows = catalog.chunk_rows(db, namespace, list(found), filters)
        return _LexicalSide(total, frequencies, hits, frozenset(found), rows)

    def _dense(self, query: str, namespace: str, filters: SearchFilters) -> list[RetrieverHit]:
        # A query without a letter or digit ("？！", "") asks nothing; MiniLM would still find neighbours for it.
        if not any(ch.isalnum() for ch in query):
            return []
        vector = self._embedder.encode_query(query)
        if filters.empty:
            return self._vectors.search(namespace, vector, self._config.dense_k)
        allowed = catalog.filtered_chunk_ids(self._store.db, namespace, filters, EXACT_FILTER_LIMIT)
        if len(allowed) <= EXACT_FILTER_LIMIT:
            return self._vectors.search(namespace, vector, self._config.dense_k, within=allowed)
        return self._vectors.search(namespace, vector, self._config.dense_k * _OVERFETCH)

    def rank(
        self, retrieved: Retrieved, k: int, *, reranked: bool = True, reach_tokens: int | None = None
    ) -> tuple[Weights, list[Snippet]]:
        """Fuse (and unless told otherwise rerank) the candidates; the k best as snippets (see rerank for
        `reach_tokens`)."""
        weights, ranked, rows = self._ranked(retrieved, k, reranked, reach_tokens)
        hits = results.by_retriever(retrieved.dense, retrieved.lexical)
        return weights, [_made(retrieved, rows, r, hits) for r in ranked]

    def _ranked(
        self, retrieved: Retrieved, k: int, reranked: bool, reach_tokens: int | None
    ) -> tuple[Weights, list[Ranked], dict[str, ChunkRow]]:
        """The k best, with the boosts for the speakers and dates the query names, and the rows of every candidate
        (those retrieve left unread are read here, only as far as the k best can reach)."""
        config = self._config
        weights, fused = fuse(retrieved.dense, retrieved.lexical, retrieved.cjk_share, sum(retrieved.idf.values()),
                              config)
        rows = dict(retrieved.rows)
        boost = _Boost(names(retrieved.query), periods(retrieved.query), config)
        if not reranked:
            fused, reach = self._reach(retrieved, fused, rows, k, 0, boost.ceiling)
            head = boost(fused[:reach], rows)[:k]
            return weights, [Ranked(c, c.fused.score, None, 1.0) for c in _candidates(head, rows)], rows
        now = self._clock()
        window = None
        if reach_tokens is not None and not config.coverage_weight:
            # Rerank's window follows the tokens of its k best before any pairwise change, which candidates that
            # can be among those k hold: found first, they narrow what the rest of the ranking must read.
            fused, first = self._reach(retrieved, fused, rows, k, 0, boost.ceiling)
            window = rerank_window(_candidates(boost(fused[:first], rows), rows), retrieved.idf, now,
                                   retrieved.temporal, config, k, reach_tokens)
        fused, reach = self._reach(retrieved, fused, rows, k, window, boost.ceiling)
        ranked = rerank(_candidates(boost(fused[:reach], rows), rows), retrieved.idf, now, retrieved.temporal,
                        config, k, reach_tokens)
        return weights, ranked[:k], rows

    def _reach(
        self, retrieved: Retrieved, fused: list[Fused], rows: dict[str, ChunkRow], k: int, window: int | None,
        ceiling: float,
    ) -> tuple[list[Fused], int]:
        """fused (without chunks found deleted) and how many of it can reach the k best, their rows all read."""
        while True:
            reach = reachable(fused, k, retrieved.temporal, self._config, window, ceiling)
            before = len(fused)
            fused = self._read(retrieved, fused, reach, rows)
            if len(fused) == before:
                return fused, reach

    def _read(self, retrieved: Retrieved, fused: list[Fused], upto: int, rows: dict[str, ChunkRow]) -> list[Fused]:
        """Read the missing rows of the first `upto` candidates into `rows`; fused without those that have none."""
        missing = [f.chunk_id for f in fused[:upto] if f.score > 0 and f.chunk_id not in rows]
        if not missing:
            return fused
        rows.update(self._rows(retrieved.namespace, missing, retrieved.filters))
        gone = {chunk_id for chunk_id in missing if chunk_id not in rows}
        return [f for f in fused if f.chunk_id not in gone] if gone else fused

    def explain(
        self, query: str, namespace: str, k: int, filters: SearchFilters, reach_tokens: int | None = None
    ) -> SearchExplanation:
        """Search, keeping each retriever's list next to the result."""
        retrieved = self.retrieve(query, namespace, filters)
        weights, snippets = self.rank(retrieved, k, reach_tokens=reach_tokens)
        snippets = self._with_neighbours(namespace, snippets, retrieved.rows, k, filters)
        return SearchExplanation(
            query=query, terms=retrieved.terms, cjk_share=retrieved.cjk_share, temporal=retrieved.temporal,
            dense_weight=weights.dense, lexical_weight=weights.lexical, dense=retrieved.dense,
            lexical=retrieved.lexical, results=tuple(snippets),
        )

    def shortlist(
        self, query: str, namespace: str, k: int, filters: SearchFilters, reach_tokens: int
    ) -> Shortlist:
        """explain's results cut at `reach_tokens` (see Shortlist); only the snippets within reach are built.

        A caller that will use at most `reach_tokens` tokens needs only the scores of the rest (to count them);
        building a snippet (metadata, the why of its score) costs about as much as ranking it.
        """
        retrieved = self.retrieve(query, namespace, filters, read_dense=False)
        _, ranked, rows = self._ranked(retrieved, k, True, reach_tokens)
        hits = results.by_retriever(retrieved.dense, retrieved.lexical)
        if self._neighbours_apply(ranked, rows):  # turns around the best turns join: build them all
            snippets = [_made(retrieved, rows, r, hits) for r in ranked]
            ordered = sorted(self._with_neighbours(namespace, snippets, rows, k, filters),
                             key=lambda s: (-s.score, s.id))
            usable = results.within([s.tokens for s in ordered], reach_tokens)
            return Shortlist(tuple(ordered[:usable]), tuple(s.score for s in ordered[usable:]))
        shown = sorted(((results.shown(r.score), r) for r in ranked),
                       key=lambda pair: (-pair[0], pair[1].candidate.fused.chunk_id))
        usable = results.within([r.candidate.tokens for _, r in shown], reach_tokens)
        return Shortlist(
            tuple(_made(retrieved, rows, r, hits) for _, r in shown[:usable]),
            tuple(score for score, _ in shown[usable:]),
        )

    def _neighbours_on(self) -> bool:
        """Whether the neighbour rings are switched on (neighbour_weight, neighbour_seeds and neighbour_hops)."""
        config = self._config
        return config.neighbour_weight > 0 and config.neighbour_seeds > 0 and config.neighbour_hops > 0

    def _neighbours_apply(self, ranked: Sequence[Ranked], rows: Mapping[str, ChunkRow]) -> bool:
        """Whether _with_neighbours would change these results: some of its seeds are conversation turns."""
        return self._neighbours_on() and any(
            rows[r.candidate.fused.chunk_id].kind == "memory" for r in ranked[:self._config.neighbour_seeds])

    def _with_neighbours(
        self, namespace: str, snippets: list[Snippet], rows: Mapping[str, ChunkRow], k: int, filters: SearchFilters
    ) -> list[Snippet]:
        """Add the turns around the best conversation turns, at a share of their score.

        An answer often sits in the reply to the turn that matched (or the question before it), or one turn
        further on. A turn just before or after one of the neighbour_seeds best turns scores neighbour_weight ×
        that turn's score, and the turns next to those neighbour_weight × theirs, for neighbour_hops rings in all
        (so the second ring comes at neighbour_weight² of the seed). A turn keeps its own score when that is higher.
        """
        weight, count, hops = self._config.neighbour_weight, self._config.neighbour_seeds, self._config.neighbour_hops
        if not self._neighbours_on() or not snippets:
            return snippets
        ring = [s for s in snippets[:count] if rows[s.id].kind == "memory"]
        by_id = {s.id: s for s in snippets}
        row_of = dict(rows)
        db = self._store.db
        for _ in range(hops):
            if not ring:
                break
            around = catalog.neighbour_turns(db, namespace, [row_of[s.id] for s in ring],
                                             self._config.neighbour_window_s)
            wanted = {n for ids in around.values() for n in ids}
            found = catalog.chunk_rows(db, namespace, sorted(wanted), filters)
            row_of.update(found)
            raised: dict[str, Snippet] = {}
            for seed in ring:  # best first
                for neighbour in around.get(seed.id, ()):
                    row = found.get(neighbour)
                    score = weight * seed.score
                    if row is None or (neighbour in by_id and by_id[neighbour].score >= score):
                        continue
                    why = by_id[neighbour].why if neighbour in by_id else {}  # its own ranks, if it had any
                    by_id[neighbour] = raised[neighbour] = results.snippet(
                        row, math.atanh(min(score, 0.999999)), {**why, "neighbour_of": seed.id}
                    )
            ring = sorted(raised.values(), key=lambda s: (-s.score, s.id))
        merged = sorted(by_id.values(), key=lambda s: (-s.score, s.id))
        return merged[:k]


def _made(
    retrieved: Retrieved, rows: Mapping[str, ChunkRow], ranked: Ranked, hits: Mapping[str, Mapping[str, RetrieverHit]]
) -> Snippet:
    row = rows[ranked.candidate.fused.chunk_id]
    return results.snippet(row, ranked.score, results.why(ranked, hits, retrieved.idf))


class _Boost:
    """What a query names (speakers, periods) and the boosts it earns: applied to fused candidates with rows."""

    def __init__(self, named: Callable[[str], bool], dated: frozenset[str], config: RetrievalConfig) -> None:
        self._named = named
        self._dated = dated
        self._config = config
        # The most a boost can scale a fused score by: whose turns a candidate holds is known only from its row.
        self.ceiling = (1.0 + config.speaker_boost) * (1.0 + config.date_boost if dated else 1.0)

    def __call__(self, fused: list[Fused], rows: Mapping[str, ChunkRow]) -> list[Fused]:
        """`fused` (all with rows) with the named speakers' turns and the named periods' memories favoured, best
        first."""
        fused = favour_named(fused, rows, self._named, self._config.speaker_boost)
        return favour_dated(fused, rows, self._dated, self._config.date_boost)


def _candidates(fused: Sequence[Fused], rows: Mapping[str, ChunkRow]) -> list[Candidate]:
    """Candidates of the fused chunks that have evidence and a row."""
    # A candidate with no evidence at all (cosine below the floor, no query term) is noise, not a result.
    return [Candidate(f, _group(row), row.terms, row.updated_at, row.tokens)
            for f in fused if f.score > 0 and (row := rows.get(f.chunk_id)) is not None]


def _group(row: ChunkRow) -> str:
    """Where a newer snippet supersedes an older similar one: its document, or a conversation's speaker."""
    if row.kind == "memory" and row.speaker:
        return f"speaker:{row.speaker}"
    return f"doc:{row.doc_id}"
