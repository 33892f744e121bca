"""The lexical retriever on both backends: the same rows indexed in the SQLite file (FTS5) and in PostgreSQL (the
postings table), every query's ranked list compared, ids and scores, and each backend's search time.

    .venv/bin/python -m bench.lexical_backends [--docs N] [--queries N]

Real text nobody here wrote: SciFact's abstracts with its train queries (English) and CMRC 2018's paragraphs with
its questions (Chinese), from ../shared/benchdata. Every other query is asked with a tag filter (the joined plan).
Only the lexical side is built (no model): chunk rows and their index entries, as the writer makes them.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.corpora import Corpus, load_cmrc, load_scifact
from bench.postgres_cluster import PostgresCluster
from memory.config import Config, load_config
from memory.database import Database
from memory.database.postgres import PostgresDatabase
from memory.embedding import MINILM
from memory.experience import SearchFilters, lexical
from memory.store import Store, open_store
from memory.text.analyze import query_terms

__all__ = ["Comparison", "compare", "main"]

NAMESPACE = "bench"


@dataclass(frozen=True)
class Comparison:
    """How the two backends' lists of the same queries compare."""

    queries: int
    identical: int  # lists with the same ids in the same order
    max_score_gap: float  # over every hit of every identical list
    sqlite_ms: tuple[float, ...]  # each query's search time
    postgres_ms: tuple[float, ...]


def _fill(store: Store, texts: Sequence[tuple[str, str, str]]) -> None:
    """Chunk rows (id, tags, text) and their lexical entries, in batches of 200."""
    for start in range(0, len(texts), 200):
        with store.transaction() as db:
            for chunk_id, tag, text in texts[start:start + 200]:
                db.execute("INSERT INTO documents (namespace, doc_id, content_hash, tags, created_at, updated_at) "
                           "VALUES (?, ?, 'h', ?, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
                           [NAMESPACE, chunk_id, f'["{tag}"]'])
                rowid = db.execute(
                    "INSERT INTO chunks (id, namespace, doc_id, doc_version, ordinal, text, text_hash, tokens, "
                    "created_at, updated_at) VALUES (?, ?, ?, 1, 0, ?, 'h', 1, '2026-01-01T00:00:00Z', "
                    "'2026-01-01T00:00:00Z') RETURNING rowid", [chunk_id, NAMESPACE, chunk_id, text]).fetchone()[0]
                lexical.index(db, [(int(rowid), NAMESPACE, lexical.index_terms(text))])


def _search(store: Store, config: Config, query: str, tagged: bool) -> tuple[list[tuple[str, float]], float]:
    """The lexical hits as the retriever asks for them, and the milliseconds taken."""
    started = time.perf_counter()
    terms = query_terms(query)[:lexical.MAX_QUERY_TERMS]
    stats = lexical.statistics(store.db, NAMESPACE, terms)
    matched = lexical.affordable(terms, stats.frequencies, config.retrieval.lexical_max_postings)
    hits = lexical.search(store.db, NAMESPACE, matched, config.retrieval.lexical_k,
                          SearchFilters(tags=("even",)) if tagged else None, stats)
    return [(h.chunk_id, h.score) for h in hits], (time.perf_counter() - started) * 1000


def compare(corpus: Corpus, docs: int, queries: int, cluster: PostgresCluster, folder: Path) -> Comparison:
    """Index `docs` documents of the corpus on both backends and compare `queries` queries' lists."""
    config = load_config()
    texts = [(d.doc_id, "even" if i % 2 == 0 else "odd", f"{d.title}\n{d.text}")
             for i, d in enumerate(corpus.docs[:docs])]
    asked = [q.text for q in corpus.queries[:queries]]
    lists: dict[str, list[list[tuple[str, float]]]] = {}
    times: dict[str, list[float]] = {}
    for backend in ("sqlite", "postgres"):
        database: Database | None = None
        if backend == "postgres":
            database = PostgresDatabase(cluster.create_database(f"lexical_{corpus.name}_{docs}"))
        store = open_store(config.replace("service", data_dir=str(folder / f"{corpus.name}-{docs}-{backend}")),
                           MINILM, database)
        try:
            _fill(store, texts)
            found = [_search(store, config, q, i % 2 == 1) for i, q in enumerate(asked)]
        finally:
            store.close()
        lists[backend] = [hits for hits, _ in found]
        times[backend] = [ms for _, ms in found]
    same = [a for a, b in zip(lists["sqlite"], lists["postgres"], strict=True)
            if [i for i, _ in a] == [i for i, _ in b]]
    gaps = [abs(x - y) for a, b in zip(lists["sqlite"], lists["postgres"], strict=True)
            if [i for i, _ in a] == [i for i, _ in b] for (_, x), (_, y) in zip(a, b, strict=True)]
    return Comparison(len(asked), len(same), max(gaps, default=0.0), tuple(times["sqlite"]),
                      tuple(times["postgres"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000, help="documents of each corpus (default all)")
    parser.add_argument("--queries", type=int, default=100_000, help="queries of each corpus (default all)")
    args = parser.parse_args()
    print("| corpus | docs | queries | identical lists | max score gap | search p50 / p95 ms, SQLite | "
          "PostgreSQL | ratio p50 |")
    print("|---|---|---|---|---|---|---|---|")
    with PostgresCluster() as cluster, tempfile.TemporaryDirectory() as folder:
        for corpus in (load_scifact(), load_cmrc()):
            found = compare(corpus, args.docs, args.queries, cluster, Path(folder))
            s50, s95 = _percentiles(found.sqlite_ms)
            p50, p95 = _percentiles(found.postgres_ms)
            print(f"| {corpus.name} | {min(args.docs, len(corpus.docs))} | {found.queries} | "
                  f"{found.identical}/{found.queries} | {found.max_score_gap:.1e} | {s50:.2f} / {s95:.2f} | "
                  f"{p50:.2f} / {p95:.2f} | {p50 / s50:.2f} |")


def _percentiles(values: Sequence[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


if __name__ == "__main__":
    main()
