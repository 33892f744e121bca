"""Experience-tier retrieval benchmark: dense only, BM25 only, fused, fused + rerank, side by side.

    .venv/bin/python -m bench.experience_bench                  # SciFact + CMRC 2018 + write cost
    .venv/bin/python -m bench.experience_bench --limit 200 --corpus scifact

SciFact (train queries): nDCG@10 and recall@100, a document ranked by its best chunk. CMRC 2018 dev: hit@1 and
hit@5 of the gold paragraph. Vectors of the corpora are cached in bench/.cache (bench.warm_cache fills it).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench.corpora import Corpus, chunk_text, load_cmrc, load_scifact
from bench.embed_cache import CachedEmbedder
from bench.metrics import doc_ranking, hit_at, ndcg_at, recall_at
from memory.clock import utc_now
from memory.config import Config, load_config
from memory.embedding import load_embedder
from memory.embedding.queries import QueryVectors
from memory.experience.dense import VectorIndex
from memory.experience.model import SearchFilters
from memory.experience.search import Retrieved, Search
from memory.experience.writer import DocumentInput, DocumentWriter
from memory.store import Store, open_store
from memory.tokens import get_counter

NAMESPACE = "bench"
Variant = Callable[[Retrieved], list[str]]


def build(corpus: Corpus, config: Config, embedder: CachedEmbedder, chunk_tokens: int) -> tuple[Store, float]:
    """A fresh store holding the corpus, written through the library's batch writer; returns it and seconds."""
    store = open_store(config, embedder.identity)
    writer = DocumentWriter(store, VectorIndex(store), embedder, get_counter(), utc_now)
    docs = [
        DocumentInput(d.doc_id, tuple(chunk_text(d.title, d.text, chunk_tokens)),
                      hashlib.sha256(d.text.encode()).hexdigest(), title=d.title)
        for d in corpus.docs
    ]
    start = time.perf_counter()
    for i in range(0, len(docs), 500):
        writer.write(NAMESPACE, docs[i:i + 500])
    return store, time.perf_counter() - start


def variants(store: Store, embedder: CachedEmbedder, config: Config) -> dict[str, Variant]:
    """Each way to order the candidates, as chunk id lists (best first)."""
    vectors = VectorIndex(store)

    def searcher(**retrieval: object) -> Search:
        settings = config.replace("retrieval", **retrieval).retrieval
        return Search(store, vectors, QueryVectors(embedder), settings, utc_now)

    default, rrf, equal = searcher(), searcher(fusion="rrf"), searcher(fusion="weighted")
    depth = config.retrieval.dense_k + config.retrieval.lexical_k
    return {
        "dense only": lambda r: [h.chunk_id for h in r.dense],
        "BM25 only": lambda r: [h.chunk_id for h in r.lexical],
        "RRF (reference)": lambda r: [c.chunk_id for c in rrf.rank(r, depth, reranked=False).ranked],
        "fused, no language trust": lambda r: [c.chunk_id for c in equal.rank(r, depth, reranked=False).ranked],
        "fused": lambda r: [c.chunk_id for c in default.rank(r, depth, reranked=False).ranked],
        "fused + rerank": lambda r: [c.chunk_id for c in default.rank(r, depth).ranked],
    }


def evaluate(corpus: Corpus, config: Config, embedder: CachedEmbedder, args: argparse.Namespace) -> None:
    """Build, query and print one corpus's table."""
    queries = list(corpus.queries)
    if args.limit and args.limit < len(queries):
        queries = random.Random(7).sample(queries, args.limit)
    store, seconds = build(corpus, config, embedder, args.chunk_tokens)
    doc_of = dict(store.db.execute("SELECT id, doc_id FROM chunks").fetchall())
    searcher = Search(store, VectorIndex(store), QueryVectors(embedder), config.retrieval, utc_now)
    embedder.encode_queries([q.text for q in queries])
    ways = variants(store, embedder, config)
    scores: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    latency = []
    for query in queries:
        start = time.perf_counter()
        retrieved = searcher.retrieve(NAMESPACE, query.text, SearchFilters())
        searcher.rank(retrieved, 10)
        latency.append(time.perf_counter() - start)
        for name, way in ways.items():
            ranking = doc_ranking(way(retrieved), doc_of)
            if corpus.name == "scifact":
                scores[name].append((ndcg_at(ranking, query.relevant, 10), recall_at(ranking, query.relevant, 100)))
            else:
                scores[name].append((hit_at(ranking, query.relevant, 1), hit_at(ranking, query.relevant, 5)))
    heads = ("nDCG@10", "recall@100") if corpus.name == "scifact" else ("hit@1", "hit@5")
    print(f"\n{corpus.name}: {len(corpus.docs)} docs, {len(doc_of)} chunks (~{args.chunk_tokens or 'whole'} tokens), "
          f"{len(queries)} queries; built in {seconds:.0f}s; search p50 {np.median(latency) * 1000:.0f} ms")
    print(f"| {'variant':<26} | {heads[0]:>10} | {heads[1]:>10} |")
    print(f"|{'-' * 28}|{'-' * 12}|{'-' * 12}|")
    for name, rows in scores.items():
        a, b = np.mean(rows, axis=0)
        print(f"| {name:<26} | {a:>10.4f} | {b:>10.4f} |")
    if corpus.name == "scifact":
        hnsw_recall(store, embedder, queries[:200], config.retrieval.dense_k)
    store.close()


def hnsw_recall(store: Store, embedder: CachedEmbedder, queries: Sequence[object], k: int) -> None:
    """How much of the exact top-k (numpy over every vector) Chroma's HNSW search returns."""
    vectors = VectorIndex(store)
    ids = sorted(vectors.ids(NAMESPACE))
    found = vectors.fetch(NAMESPACE, ids)
    matrix = np.stack([found[i] for i in ids])
    overlap = []
    for query in queries:
        q = embedder.encode_query(query.text)  # type: ignore[attr-defined]
        exact = {ids[i] for i in np.argsort(-matrix @ q)[:k]}
        approx = {h.chunk_id for h in vectors.search(NAMESPACE, q, k)}
        overlap.append(len(exact & approx) / k)
    print(f"HNSW (ef_search=200) recall of the exact top-{k} over {len(ids)} vectors: {np.mean(overlap):.4f}")


def main() -> None:
    """Run the chosen benchmarks and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", default=["scifact", "cmrc2018"], choices=["scifact", "cmrc2018"])
    parser.add_argument("--limit", type=int, default=0, help="sample this many queries (0 = all)")
    parser.add_argument("--chunk-tokens", type=int, default=200, help="chunk size; 0 = one chunk per document")
    parser.add_argument("--depth", type=int, default=200, help="dense_k and lexical_k (candidates per retriever)")
    parser.add_argument("--scale", type=int, nargs="*", default=[10_000], help="store sizes for the write cost")
    args = parser.parse_args()
    base = load_config()
    embedder = CachedEmbedder(load_embedder(base.embedding))
    with tempfile.TemporaryDirectory(prefix="exp-bench-") as tmp:
        for name in args.corpus:
            corpus = load_scifact() if name == "scifact" else load_cmrc()
            config = base.replace("service", data_dir=str(Path(tmp) / name)).replace(
                "retrieval", dense_k=args.depth, lexical_k=args.depth
            )
            evaluate(corpus, config, embedder, args)
    if args.scale:
        from bench.experience_scale import measure

        measure(args.scale, embedder)


if __name__ == "__main__":
    main()
