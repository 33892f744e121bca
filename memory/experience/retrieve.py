"""Both retrievers of one search: dense (Chroma) and lexical (FTS5), over-fetched, restricted to the filters."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import MappingProxyType

from memory.config import RetrievalConfig
from memory.embedding.queries import QueryVectors
from memory.experience import catalog, lexical
from memory.experience.catalog import ChunkRow
from memory.experience.dense import VectorIndex
from memory.experience.freshness import asks_about_time
from memory.experience.fuse import idf
from memory.experience.model import RetrieverHit, SearchFilters
from memory.experience.rows import Rows
from memory.store import Store
from memory.text.analyze import cjk_share, query_terms

__all__ = ["EXACT_FILTER_LIMIT", "Retrieved", "Retriever"]

# With filters that leave at most this many chunks, dense search runs over exactly those chunks; above it,
# dense over-fetches this many times dense_k and the filter is applied to what comes back.
EXACT_FILTER_LIMIT = 5000
_OVERFETCH = 4
_LEXICAL_WORKERS = 4


@dataclass(frozen=True)
class Retrieved:
    """Everything both retrievers found for one query, before fusion.

    `rows` holds the rows read so far (with each chunk's analysed terms as indexed: jieba is not run again) and
    reads the others when ranking first asks for them. Under filters every hit's row has been read, since the
    filter is checked on the rows: hits outside it are gone and the dense ranks are counted without them. Without
    filters a dense hit whose chunk was deleted meanwhile keeps its rank; ranking drops it when it reads the row.
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
    rows: Rows


@dataclass(frozen=True)
class _LexicalSide:
    """What the lexical worker read: the namespace's index statistics, its hits, and their rows."""

    total: int
    frequencies: dict[str, int]
    hits: list[RetrieverHit]
    rows: dict[str, ChunkRow]


class Retriever:
    """Runs both retrievers for a query: the lexical side on a worker thread while this one embeds and asks Chroma."""

    def __init__(self, store: Store, vectors: VectorIndex, queries: QueryVectors, config: RetrievalConfig) -> None:
        self._store = store
        self._vectors = vectors
        self._queries = queries
        self._config = config
        # Concurrent searches each need a lexical worker; more than this queue (the machine has few cores).
        self._pool = ThreadPoolExecutor(max_workers=_LEXICAL_WORKERS, thread_name_prefix="lexical")

    def retrieve(self, namespace: str, query: str, filters: SearchFilters) -> Retrieved:
        """Both retrievers' candidates (over-fetched to dense_k / lexical_k), restricted to the filters.

        FTS5 releases the GIL, so a search costs about the slower of the two sides rather than their sum.
        """
        terms = query_terms(query)[: lexical.MAX_QUERY_TERMS]  # IDF and MATCH see the same terms
        pending = self._pool.submit(self._lexical, namespace, terms, filters)
        read: dict[str, ChunkRow] = {}
        try:
            dense = self._dense(query, namespace, filters)
            if not pending.done():
                # While FTS5 still runs (without the GIL), read the dense hits' rows here rather than later.
                read = catalog.chunk_rows(self._store.db, namespace, [h.chunk_id for h in dense], filters)
        finally:
            side = pending.result()
        read.update(side.rows)
        rows = Rows(lambda ids: catalog.chunk_rows(self._store.db, namespace, ids, filters), read)
        if not filters.empty:
            absent = rows.read(h.chunk_id for h in dense)
            if absent:  # outside the filters (or deleted): the rest of the dense list is ranked anew
                dense = [RetrieverHit(h.chunk_id, i, h.score)
                         for i, h in enumerate((h for h in dense if h.chunk_id not in absent), 1)]
        return Retrieved(
            query=query, namespace=namespace, filters=filters, terms=terms, cjk_share=cjk_share(query),
            temporal=asks_about_time(query), idf=MappingProxyType(idf(side.total, side.frequencies)),
            dense=tuple(dense[: self._config.dense_k]), lexical=tuple(h for h in side.hits if h.chunk_id in rows),
            rows=rows,
        )

    def close(self) -> None:
        """Stop the lexical worker threads (searches after this fail)."""
        self._pool.shutdown(wait=True)

    def _lexical(self, namespace: str, terms: tuple[str, ...], filters: SearchFilters) -> _LexicalSide:
        db = self._store.db  # this worker thread's own connection
        stats = lexical.statistics(db, namespace, terms)  # the namespace's own: no other namespace moves them
        matched = lexical.affordable(terms, stats.frequencies, self._config.lexical_max_postings)
        hits = lexical.search(db, namespace, matched, self._config.lexical_k, filters, stats)
        rows = catalog.chunk_rows(db, namespace, [h.chunk_id for h in hits], filters)
        return _LexicalSide(stats.rows, dict(stats.frequencies), hits, rows)

    def _dense(self, query: str, namespace: str, filters: SearchFilters) -> list[RetrieverHit]:
        # A query without a letter or digit ("？！", "") asks nothing; MiniLM would still find neighbours for it.
        if not any(ch.isalnum() for ch in query):
            return []
        vector = self._queries(namespace, query)
        if filters.empty:
            return self._vectors.search(namespace, vector, self._config.dense_k)
        allowed = catalog.filtered_chunk_ids(self._store.db, namespace, filters, EXACT_FILTER_LIMIT)
        if len(allowed) <= EXACT_FILTER_LIMIT:
            return self._vectors.search(namespace, vector, self._config.dense_k, within=allowed)
        return self._vectors.search(namespace, vector, self._config.dense_k * _OVERFETCH)
