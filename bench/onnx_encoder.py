"""The encoder backends of the bundled MiniLM side by side in one run: speed, agreement with torch fp32, threads.

    .venv/bin/python -m bench.onnx_encoder [--backends sentence-transformers onnx onnx-int8] [--threads 1 2]
                                           [--batches 8 32] [--texts 64] [--queries 80] [--rounds 3] [--no-busy]

Texts are real: SciFact abstracts (English) and CMRC 2018 paragraphs (Chinese) cut into pieces of about 80 and
about 200 cl100k tokens (bench.corpora.chunk_text; pieces within 25 % of the target). For every thread count and
batch size the backends encode the same pieces, alternating round by round so that a shared machine's drift weighs
on all alike; the best round counts (the least disturbed). Query latency is one query per call (SciFact and CMRC
questions, never the same text twice per backend, so no cache answers). Agreement is the cosine of each backend's
vector with the torch fp32 vector of the same text. With a busy neighbour (the default adds this phase; --no-busy
skips it) a second process keeps one core busy while the same measurements run again: the machine is shared, and
the thread setting must hold up then too.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from bench.corpora import chunk_text, load_cmrc, load_scifact
from memory.config import load_config
from memory.embedding import Embedder, load_embedder, onnx_minilm
from memory.tokens import get_counter

TORCH = "sentence-transformers"


def pieces(target: int, count: int, rng: random.Random) -> dict[str, list[str]]:
    """`count` English and `count` Chinese pieces of about `target` cl100k tokens."""
    counter = get_counter()
    out: dict[str, list[str]] = {}
    for lang, corpus in (("en", load_scifact()), ("zh", load_cmrc())):
        found: list[str] = []
        docs = list(corpus.docs)
        rng.shuffle(docs)
        for doc in docs:
            for chunk in chunk_text(doc.title, doc.text, target):
                if abs(counter.count(chunk.text) - target) <= target // 4:
                    found.append(chunk.text)
            if len(found) >= count:
                break
        out[lang] = found[:count]
    return out


def questions(count: int, rng: random.Random) -> list[str]:
    """`count` distinct queries, half SciFact, half CMRC."""
    en = [q.text for q in load_scifact().queries]
    zh = [q.text for q in load_cmrc().queries]
    return rng.sample(en, count // 2) + rng.sample(zh, count - count // 2)


SPINNING = "onnx-int8 spinning"


def embedders(backends: Sequence[str], threads: int, batch: int) -> dict[str, Embedder]:
    """The backends at `threads` and `batch`; with several threads also onnx-int8 whose idle pool threads
    busy-wait (onnxruntime's own default, which the backend turns off)."""
    base = load_config().embedding
    out = {b: load_embedder(dataclasses.replace(base, backend=b, torch_threads=threads, batch_size=batch))
           for b in backends}
    if threads > 1 and "onnx-int8" in backends:
        import onnxruntime as ort

        settings = dataclasses.replace(base, backend="onnx-int8", torch_threads=threads, batch_size=batch)
        session = ort.InferenceSession(str(onnx_minilm.graph_path(settings)),
                                       onnx_minilm.session_options(threads, spinning=True),
                                       providers=["CPUExecutionProvider"])
        out[SPINNING] = onnx_minilm.OnnxEmbedder(session, onnx_minilm.tokenizer(), settings)
    return out


def _threads(backend: str, threads: int) -> None:
    if backend == TORCH:  # torch's thread count is the process's, not the model's: set it before each turn
        import torch

        torch.set_num_threads(threads)


def encode_rate(models: dict[str, Embedder], texts: Sequence[str], batch: int, threads: int,
                rounds: int) -> dict[str, float]:
    """Pieces per second, the best of `rounds` alternating rounds (documents in batches of `batch`)."""
    ordered = sorted(texts, key=len, reverse=True)
    best = dict.fromkeys(models, 0.0)
    for _ in range(rounds):
        for name, model in models.items():
            _threads(name, threads)
            start = time.perf_counter()
            for i in range(0, len(ordered), batch):
                model._run(list(ordered[i:i + batch]), "document")
            best[name] = max(best[name], len(ordered) / (time.perf_counter() - start))
    return best


def query_latency(models: dict[str, Embedder], queries: Sequence[str], threads: int) -> dict[str, list[float]]:
    """Milliseconds per single-query call, backends alternating query by query."""
    times: dict[str, list[float]] = {name: [] for name in models}
    for name in models:  # a warm-up call each: the first run of a session allocates
        _threads(name, threads)
        models[name]._run(["warm-up"], "query")
    for query in queries:
        for name, model in models.items():
            _threads(name, threads)
            start = time.perf_counter()
            model._run([query], "query")
            times[name].append(1000 * (time.perf_counter() - start))
    return times


def agreement(models: dict[str, Embedder], texts: Sequence[str], role: str) -> dict[str, tuple[float, float]]:
    """(mean, min) cosine of each backend's vectors with the torch fp32 vectors of the same texts."""
    reference = np.concatenate([models[TORCH]._run(list(texts[i:i + 16]), role) for i in range(0, len(texts), 16)])
    out = {}
    for name, model in models.items():
        got = np.concatenate([model._run(list(texts[i:i + 16]), role) for i in range(0, len(texts), 16)])
        cosines = (got * reference).sum(axis=1)
        out[name] = (float(cosines.mean()), float(cosines.min()))
    return out


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@contextmanager
def busy_neighbour(active: bool) -> Iterator[None]:
    """A second process spinning on one core for the duration (nothing when not `active`)."""
    if not active:
        yield
        return
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        yield
    finally:
        spinner.kill()
        spinner.wait()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", nargs="+", default=[TORCH, "onnx", "onnx-int8"])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--batches", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--texts", type=int, default=64, help="pieces per language and size")
    parser.add_argument("--queries", type=int, default=80)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-busy", action="store_true", help="skip the phase with a busy neighbour")
    args = parser.parse_args(argv)
    if TORCH not in args.backends:
        args.backends.insert(0, TORCH)
    rng = random.Random(21)
    sizes = {target: pieces(target, args.texts, rng) for target in (80, 200)}
    asked = questions(args.queries * (len(args.threads) * (1 if args.no_busy else 2)), rng)

    models = embedders(args.backends, 1, 32)
    print("Agreement with torch fp32 (cosine mean / min):")
    print(f"{'backend':24s} " + " ".join(f"{f'{lang}-{t}':>15s}" for t in sizes for lang in ("en", "zh"))
          + f" {'queries':>15s}")
    rows = {name: [] for name in models}
    for texts in sizes.values():
        for lang in ("en", "zh"):
            for name, (mean, low) in agreement(models, texts[lang], "document").items():
                rows[name].append(f"{mean:.4f} / {low:.4f}")
    for name, (mean, low) in agreement(models, asked[:args.queries], "query").items():
        rows[name].append(f"{mean:.4f} / {low:.4f}")
    for name, cells in rows.items():
        print(f"{name:24s} " + " ".join(f"{c:>15s}" for c in cells))

    used = 0
    for load in ("idle",) + (() if args.no_busy else ("busy neighbour",)):
        with busy_neighbour(load != "idle"):
            for threads in args.threads:
                print(f"\n{load}, {threads} thread(s):")
                for batch in args.batches:
                    models = embedders(args.backends, threads, batch)
                    for target, texts in sizes.items():
                        for lang in ("en", "zh"):
                            rates = encode_rate(models, texts[lang], batch, threads, args.rounds)
                            base = rates[TORCH]
                            print(f"  {lang}-{target} batch {batch:2d}: " + "  ".join(
                                f"{name} {rate:6.1f}/s ({rate / base:.2f}x)" for name, rate in rates.items()))
                queries = asked[used:used + args.queries]
                used += args.queries
                latency = query_latency(embedders(args.backends, threads, 32), queries, threads)
                p50 = {n: statistics.median(v) for n, v in latency.items()}
                p95 = {n: percentile(v, 0.95) for n, v in latency.items()}
                print("  query p50 / p95: " + "  ".join(
                    f"{n} {p50[n]:.1f} / {p95[n]:.1f} ms ({p50[n] / p50[TORCH]:.2f}x / {p95[n] / p95[TORCH]:.2f}x)"
                    for n in latency))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
