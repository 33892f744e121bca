"""SciFact fusion ablation: how far model-free changes to the hybrid move nDCG@10, from one retrieval pass.

    .venv/bin/python -m bench.fusion_ablation [--limit N] [--chunk-tokens 200]

Builds SciFact as bench.experience_bench does (cached vectors), retrieves every query once (dense and lexical
over-fetched to 200 each), then scores each variant's fused order; a document ranks by its best chunk. Rows:
the product's fusion, then one change at a time: the dense/lexical balance, the dense calibration (floor,
ceiling), the lexical normaliser, per-query weights from each retriever's own confidence (top score over the
mean of its top 10), giving a chunk part of its document's other chunks' scores, a bonus for query-word pairs
found next to each other, and dense pseudo-relevance feedback (the query vector moved towards the mean of the
first pass's best chunks, then searched again in Chroma). Two builds of the HNSW index do not return exactly the
same neighbours, so the smallest differences are noise.
"""

from __future__ import annotations

import argparse
import itertools
import random
import tempfile
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from bench.corpora import load_scifact
from bench.embed_cache import CachedEmbedder
from bench.experience_bench import NAMESPACE, build
from bench.metrics import doc_ranking, ndcg_at
from memory.clock import utc_now
from memory.config import Config, load_config
from memory.embedding import load_embedder
from memory.embedding.queries import QueryVectors
from memory.experience.dense import VectorIndex
from memory.experience.fuse import Weights, weighted
from memory.experience.model import RetrieverHit, SearchFilters
from memory.experience.search import Retrieved, Search
from memory.text.analyze import terms as analyse

Scorer = Callable[[int, Retrieved], Mapping[str, float]]
DEPTH = 200


def fused(config: Config, dense_share: float = 0.5, **calibration: float) -> Scorer:
    """The product's weighted fusion with another balance or calibration."""
    retrieval = config.replace("retrieval", **calibration).retrieval if calibration else config.retrieval

    def score(_: int, r: Retrieved) -> Mapping[str, float]:
        weights = Weights(dense_share, 1.0 - dense_share)
        return {f.chunk_id: f.score for f in weighted(r.dense, r.lexical, weights, sum(r.idf.values()), retrieval)}
    return score


def normalised_by(config: Config, normaliser: Callable[[Retrieved], float]) -> Scorer:
    """Fusion with the lexical score divided by another per-query number than the query terms' IDF sum."""
    def score(_: int, r: Retrieved) -> Mapping[str, float]:
        idf_sum = sum(r.idf.values())
        scale = idf_sum / max(1e-6, normaliser(r))  # weighted() divides by idf_sum; this makes it `normaliser`
        lexical = [RetrieverHit(h.chunk_id, h.rank, h.score * scale) for h in r.lexical]
        return {f.chunk_id: f.score for f in weighted(r.dense, lexical, Weights(0.5, 0.5), idf_sum, config.retrieval)}
    return score


def confident(config: Config, shrink: float) -> Scorer:
    """Per-query balance from each side's confidence: top part over the mean of its top 10, minus 1."""
    def score(_: int, r: Retrieved) -> Mapping[str, float]:
        idf_sum = sum(r.idf.values())
        one = {f.chunk_id: f for f in weighted(r.dense, r.lexical, Weights(0.5, 0.5), idf_sum, config.retrieval)}
        sides = []
        for part in ("dense", "lexical"):
            values = sorted((getattr(f, part) for f in one.values()), reverse=True)[:10] or [0.0]
            sides.append(max(1e-6, values[0] / max(1e-9, float(np.mean(values))) - 1.0))
        share = 0.5 + (sides[0] / sum(sides) - 0.5) * shrink
        return {c: share * f.dense + (1 - share) * f.lexical for c, f in one.items()}
    return score


def with_document(base: Scorer, doc_of: Mapping[str, str], beta: float) -> Scorer:
    """A chunk also gets beta × the sum of its document's other retrieved chunks' scores."""
    def score(i: int, r: Retrieved) -> Mapping[str, float]:
        own = base(i, r)
        per_doc: dict[str, float] = defaultdict(float)
        for chunk_id, value in own.items():
            per_doc[doc_of[chunk_id]] += value
        return {c: v + beta * (per_doc[doc_of[c]] - v) for c, v in own.items()}
    return score


def with_pairs(base: Scorer, queries: Sequence[str], sequences: Mapping[str, list[str]], bonus: float) -> Scorer:
    """Among the 100 best, +bonus × the IDF share of query-word pairs found within two words of each other."""
    pair_sets = {c: set(itertools.pairwise(s)) | set(zip(s, s[2:], strict=False)) for c, s in sequences.items()}

    def score(i: int, r: Retrieved) -> Mapping[str, float]:
        own = dict(base(i, r))
        words = analyse(queries[i])
        pairs = [(a, b) for a, b in itertools.pairwise(words) if a in r.idf and b in r.idf]
        total = sum(r.idf[a] + r.idf[b] for a, b in pairs)
        if total > 0:
            for c in sorted(own, key=lambda c: -own[c])[:100]:
                found = pair_sets[c]
                own[c] += bonus * sum(r.idf[a] + r.idf[b] for a, b in pairs
                                      if (a, b) in found or (b, a) in found) / total
        return own
    return score


def with_feedback(base: Scorer, config: Config, vectors: VectorIndex, query_vectors: np.ndarray,
                  alpha: float, seeds: int) -> Scorer:
    """Dense search again with q + alpha × mean(vectors of the first pass's `seeds` best chunks)."""
    def score(i: int, r: Retrieved) -> Mapping[str, float]:
        first = base(i, r)
        best = sorted(first, key=lambda c: (-first[c], c))[:seeds]
        moved = query_vectors[i] + alpha * np.mean(list(vectors.fetch(NAMESPACE, best).values()), axis=0)
        dense = vectors.search(NAMESPACE, moved / np.linalg.norm(moved), DEPTH)
        again = weighted(dense, r.lexical, Weights(0.5, 0.5), sum(r.idf.values()), config.retrieval)
        return {f.chunk_id: f.score for f in again}
    return score


def main() -> None:
    """Retrieve once, score every variant, print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="sample this many queries (0 = all 809)")
    parser.add_argument("--chunk-tokens", type=int, default=200)
    args = parser.parse_args()
    base = load_config()
    embedder = CachedEmbedder(load_embedder(base.embedding))
    corpus = load_scifact()
    queries = list(corpus.queries)
    if args.limit and args.limit < len(queries):
        queries = random.Random(7).sample(queries, args.limit)
    with tempfile.TemporaryDirectory(prefix="fusion-ablation-") as tmp:
        config = base.replace("service", data_dir=str(Path(tmp) / "scifact")).replace(
            "retrieval", dense_k=DEPTH, lexical_k=DEPTH)
        store, _ = build(corpus, config, embedder, args.chunk_tokens)
        rows = store.db.execute("SELECT id, doc_id, heading, text FROM chunks").fetchall()
        doc_of = {r[0]: r[1] for r in rows}
        sequences = {r[0]: analyse(r[2] + "\n" + r[3]) for r in rows}
        vectors = VectorIndex(store)
        searcher = Search(store, vectors, QueryVectors(embedder), config.retrieval, utc_now)
        texts = [q.text for q in queries]
        query_vectors = np.asarray(embedder.encode_queries(texts))
        retrieved = [searcher.retrieve(NAMESPACE, t, SearchFilters()) for t in texts]
        product = fused(config)
        variants: dict[str, Scorer] = {"product fusion (0.5 / 0.5, floor 0.1, ceiling 0.8)": product}
        for share in (0.4, 0.45, 0.55, 0.6):
            variants[f"dense share {share}"] = fused(config, share)
        for floor, ceiling in ((0.05, 0.8), (0.2, 0.8), (0.1, 0.7), (0.1, 0.9), (0.25, 0.7)):
            variants[f"calibration {floor} / {ceiling}"] = fused(config, dense_floor=floor, dense_ceiling=ceiling)
        variants["lexical / best lexical score"] = normalised_by(config, lambda r: max(
            [h.score for h in r.lexical] or [0.0]))
        variants["lexical / sqrt(IDF sum)"] = normalised_by(config, lambda r: float(np.sqrt(sum(r.idf.values()))))
        for shrink in (0.25, 1.0):
            variants[f"confidence weights × {shrink}"] = confident(config, shrink)
        for beta in (0.05, 0.2):
            variants[f"document's other chunks × {beta}"] = with_document(product, doc_of, beta)
        for bonus in (0.1, 0.2):
            variants[f"word pairs +{bonus}"] = with_pairs(product, texts, sequences, bonus)
        for alpha, seeds in ((0.5, 3), (1.0, 5)):
            variants[f"dense feedback {alpha} × top {seeds}"] = with_feedback(
                product, config, vectors, query_vectors, alpha, seeds)
        print(f"\nSciFact: {len(queries)} queries, {len(doc_of)} chunks of ~{args.chunk_tokens} tokens")
        print(f"| {'variant':<52} | nDCG@10 |")
        print(f"|{'-' * 54}|---------|")
        for name, scorer in variants.items():
            values = []
            for i, (query, r) in enumerate(zip(queries, retrieved, strict=True)):
                scores = scorer(i, r)
                order = sorted(scores, key=lambda c: (-scores[c], c))
                values.append(ndcg_at(doc_ranking(order, doc_of), query.relevant, 10))
            print(f"| {name:<52} | {np.mean(values):.4f} |", flush=True)
        store.close()


if __name__ == "__main__":
    main()
