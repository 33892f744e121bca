"""recall() latency through the library and through REST, against the floor, at 1k / 10k / 100k chunks.

The floor, measured in the same run on the same collection: one query embedding by the real model plus one raw
Chroma query for dense_k neighbours. Stores are built from real text (SciFact and CMRC sentences, so FTS5 and
jieba see real words) with synthetic vectors (bench.experience_scale.SyntheticEncoder: Chroma's cost without
the model's); queries are embedded by the real model. Every phase uses its own queries, so the embedder's query
cache never answers; floor, library and REST calls alternate round by round (floor, recall, floor, REST recall,
...) so that the drift of a shared machine weighs on all alike. Stores are kept under bench/.cache/speed-N and
reused by later runs; the service answers from a copy.

    .venv/bin/python -m bench.recall_speed [--sizes 1000 10000 100000] [--queries 60] [--budget 1000]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench._recall_service import running_service
from bench.experience_scale import SyntheticEncoder, fill, sentence_pool
from memory.clock import utc_now
from memory.config import Config, load_config
from memory.embedding import Embedder, load_embedder
from memory.experience.dense import VectorIndex
from memory.experience.store import DocumentWriter
from memory.service import Memory
from memory.store import collection_name, open_store
from memory.tokens import get_counter

_ROOT = Path(__file__).resolve().parent.parent
_CACHE = _ROOT / "bench" / ".cache"
NAMESPACE = "speed"
_WARMUP = 5


def _config(size: int) -> Config:
    return load_config().replace("service", data_dir=str(_CACHE / f"speed-{size}"))


def build(size: int, embedder: Embedder, pool: Sequence[str]) -> Config:
    """The store of `size` chunks (two per document), built once and then reused."""
    config = _config(size)
    done = Path(config.service.data_dir) / "built"
    if done.exists():
        return config
    rng = random.Random(size)
    store = open_store(config, embedder.identity)
    writer = DocumentWriter(store, VectorIndex(store), SyntheticEncoder(embedder.dimension), get_counter(), utc_now)
    start = time.perf_counter()
    fill(writer, NAMESPACE, size, rng, pool)
    store.close()
    done.write_text(f"{size}\n")
    print(f"built {size:,} chunks in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return config


def _interleaved(phases: dict[str, Sequence[Callable[[], object]]]) -> dict[str, list[float]]:
    """Every phase timed round by round (one call of each per round), so a shared machine's drift hits all alike."""
    rounds = min(len(calls) for calls in phases.values())
    out: dict[str, list[float]] = {name: [] for name in phases}
    for index in range(rounds):
        for name, calls in phases.items():
            start = time.perf_counter()
            calls[index]()
            if index >= _WARMUP:
                out[name].append((time.perf_counter() - start) * 1000)
    return out


def _p(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(size: int, embedder: Embedder, queries: list[list[str]], budget: int) -> dict[str, list[float]]:
    """Floor, library and REST latencies (ms) on the store of `size` chunks, all four phases interleaved.

    The service runs on a copy of the store (two processes must not share one embedded Chroma), so its calls
    alternate with the floor and library calls round by round and meet the same machine.
    """
    config = build(size, embedder, sentence_pool())
    with tempfile.TemporaryDirectory(prefix="recall-speed-") as tmp:
        served = Path(tmp) / "store"
        shutil.copytree(config.service.data_dir, served)
        with running_service(None, data_dir=served) as service, Memory(config, embedder=embedder) as memory:
            # The raw Chroma handle, not the store's LiveCollection wrapper: the floor is Chroma alone.
            collection = memory.store.chroma.get_collection(
                collection_name(NAMESPACE, generation=memory.store.generation), embedding_function=None
            )
            dense_k = config.retrieval.dense_k

            def floor(q: str) -> None:
                collection.query(query_embeddings=embedder.encode_query(q)[None, :], n_results=dense_k,
                                 include=["distances"])

            return _interleaved({
                "floor": [lambda q=q: floor(q) for q in queries[0]],
                "library": [lambda q=q: memory.recall(NAMESPACE, q, budget) for q in queries[1]],
                "floor again": [lambda q=q: floor(q) for q in queries[2]],
                "rest": [lambda q=q: service.recall(NAMESPACE, q, budget) for q in queries[3]],
            })


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000], help="store sizes (chunks)")
    parser.add_argument("--queries", type=int, default=60, help="timed queries per phase (after 5 warm-up ones)")
    parser.add_argument("--budget", type=int, default=1000, help="recall budget in tokens")
    args = parser.parse_args(argv)
    embedder = load_embedder(load_config().embedding)
    pool = sentence_pool()
    rng = random.Random(7)
    per_phase = args.queries + _WARMUP
    # Distinct queries for every phase of every size: the embedder's query cache must never answer.
    needed = per_phase * 4 * len(args.sizes)
    texts = list(dict.fromkeys(" ".join(s.split()[:8]) for s in rng.sample(pool, needed * 2)))[:needed]
    rows = []
    for n, size in enumerate(args.sizes):
        mine = texts[n * per_phase * 4:(n + 1) * per_phase * 4]
        queries = [mine[i * per_phase:(i + 1) * per_phase] for i in range(4)]
        got = measure(size, embedder, queries, args.budget)
        floor = got["floor"] + got["floor again"]  # interleaved with the library calls, round by round
        f50 = statistics.median(floor)
        lib50 = statistics.median(got["library"])
        rows.append(
            f"| {size:,} | {f50:.1f} / {_p(floor, 0.95):.1f} | {lib50:.1f} / {_p(got['library'], 0.95):.1f} "
            f"| {lib50 / f50:.2f}× | {statistics.median(got['rest']):.1f} / {_p(got['rest'], 0.95):.1f} |"
        )
    print(f"\nrecall(query, budget={args.budget}) latency, ms p50 / p95, {args.queries} queries per phase")
    print("| chunks | floor (embed + Chroma) | library recall | library p50 ÷ floor p50 | REST recall (loopback) |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
