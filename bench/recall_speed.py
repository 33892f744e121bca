"""recall() latency through the library and through REST, against the floor, at 1k / 10k / 100k chunks.

The floor, measured in the same run on the same collection: one query embedding by the real model plus one raw
Chroma query for dense_k neighbours. Stores are built from real text (SciFact and CMRC sentences, so FTS5 and
jieba see real words) with synthetic vectors (bench.experience_scale.SyntheticEncoder: Chroma's cost without
the model's); queries are embedded by the real model. Every phase uses its own queries, so the embedder's query
cache never answers; floor, library and REST calls alternate round by round (floor, recall, floor, REST recall,
...) so that the drift of a shared machine weighs on all alike. Stores are kept under bench/.cache/speed-N and
reused by later runs; the service answers from a copy.

    .venv/bin/python -m bench.recall_speed [--sizes 1000 10000 100000] [--queries 60] [--budget 1000]
                                           [--backends sentence-transformers onnx-int8]

With several --backends, each backend's floor and recall are timed on its own copy of the same store (the
vectors are synthetic, so the copy is relabelled with that backend's identity), all phases alternating.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

from bench._recall_service import running_service
from bench.experience_scale import SyntheticEncoder, fill, sentence_pool
from memory.clock import utc_now
from memory.config import Config, load_config
from memory.embedding import Embedder, EmbedderIdentity, load_embedder, resolved
from memory.experience.dense import VectorIndex
from memory.experience.writer import DocumentWriter
from memory.service import Memory
from memory.store import StoreIdentity, collection_name, open_store, stored_identity
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


def _relabel(config: Config, identity: EmbedderIdentity) -> None:
    """Record `identity` as the model of the store copy of `config`: its vectors are synthetic, so every MiniLM
    variant may serve it, and each backend's recall then runs on the same vectors."""
    recorded = stored_identity(config)
    assert recorded is not None, "relabel a store that exists"
    store = open_store(config, recorded.embedder)
    try:
        store.switch_identity(StoreIdentity(identity.backend, identity.model, identity.dimension,
                                            config.tokenizer.encoding), store.generation)
    finally:
        store.close()


def measure(size: int, embedders: Sequence[Embedder], queries: list[list[str]], budget: int) -> dict[str, list[float]]:
    """Per backend floor and library latencies, and REST's on the default backend (ms), all interleaved.

    Each backend and the service get a copy of the store (two processes must not share one embedded Chroma, and
    one Memory holds a store's lock), so all their calls alternate round by round and meet the same machine.
    """
    config = build(size, embedders[0], sentence_pool())
    with tempfile.TemporaryDirectory(prefix="recall-speed-") as tmp, ExitStack() as stack:
        phases: dict[str, Sequence[Callable[[], object]]] = {}
        for n, embedder in enumerate(embedders):
            folder = Path(tmp) / f"store-{n}"
            shutil.copytree(config.service.data_dir, folder)
            mine = config.replace("service", data_dir=str(folder))
            _relabel(mine, embedder.identity)
            memory = stack.enter_context(Memory(mine, embedder=embedder))
            # The raw Chroma handle, not the store's LiveCollection wrapper: the floor is Chroma alone.
            collection = memory.store.chroma.get_collection(
                collection_name(NAMESPACE, generation=memory.store.generation), embedding_function=None
            )

            def floor(q: str, collection: Any = collection, embedder: Embedder = embedder) -> None:
                collection.query(query_embeddings=embedder.encode_query(q)[None, :],
                                 n_results=config.retrieval.dense_k, include=["distances"])

            name = embedder.identity.backend
            phases[f"floor {name}"] = [partial(floor, q) for q in queries[3 * n]]
            phases[f"library {name}"] = [partial(memory.recall, NAMESPACE, q, budget) for q in queries[3 * n + 1]]
            phases[f"floor again {name}"] = [partial(floor, q) for q in queries[3 * n + 2]]
        served = Path(tmp) / "served"
        shutil.copytree(config.service.data_dir, served)
        default = resolved(load_config().embedding)
        _relabel(config.replace("service", data_dir=str(served)),
                 EmbedderIdentity(default.backend, default.model, embedders[0].dimension))
        service = stack.enter_context(running_service(None, data_dir=served))
        phases["rest"] = [partial(service.recall, NAMESPACE, q, budget) for q in queries[-1]]
        return _interleaved(phases)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000], help="store sizes (chunks)")
    parser.add_argument("--queries", type=int, default=60, help="timed queries per phase (after 5 warm-up ones)")
    parser.add_argument("--budget", type=int, default=1000, help="recall budget in tokens")
    parser.add_argument("--backends", nargs="+", help="embedding backends whose recall to time side by side "
                                                      "(default: the default backend)")
    args = parser.parse_args(argv)
    base = load_config().embedding
    embedders = [load_embedder(dataclasses.replace(base, backend=b)) for b in args.backends or [resolved(base).backend]]
    pool = sentence_pool()
    rng = random.Random(7)
    per_phase = args.queries + _WARMUP
    count = 3 * len(embedders) + 1
    # Distinct queries for every phase of every size: the embedders' query caches must never answer.
    needed = per_phase * count * len(args.sizes)
    texts = list(dict.fromkeys(" ".join(s.split()[:8]) for s in rng.sample(pool, needed * 2)))[:needed]
    rows = []
    for n, size in enumerate(args.sizes):
        mine = texts[n * per_phase * count:(n + 1) * per_phase * count]
        queries = [mine[i * per_phase:(i + 1) * per_phase] for i in range(count)]
        got = measure(size, embedders, queries, args.budget)
        first = statistics.median(got[f"library {embedders[0].identity.backend}"])
        for embedder in embedders:
            name = embedder.identity.backend
            floor = got[f"floor {name}"] + got[f"floor again {name}"]  # interleaved with the library calls
            f50 = statistics.median(floor)
            library = got[f"library {name}"]
            lib50 = statistics.median(library)
            rows.append(
                f"| {size:,} | {name} | {f50:.1f} / {_p(floor, 0.95):.1f} | {lib50:.1f} / {_p(library, 0.95):.1f} "
                f"| {lib50 / f50:.2f}× | {lib50 / first:.2f}× |"
            )
        rest = got["rest"]
        rows.append(f"| {size:,} | REST ({resolved(base).backend}) | | {statistics.median(rest):.1f} / "
                    f"{_p(rest, 0.95):.1f} | | |")
    print(f"\nrecall(query, budget={args.budget}) latency, ms p50 / p95, {args.queries} queries per phase")
    print(f"| chunks | backend | floor (embed + Chroma) | recall | recall p50 ÷ floor p50 | recall p50 ÷ "
          f"{embedders[0].identity.backend}'s |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
