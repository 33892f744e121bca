"""What zeroing fresh memory costs (memory.erase.zero_fresh_memory: glibc's M_PERTURB, on in `memory` commands with
embedded Chroma, [chroma] zero_fresh_memory): ingest, recall and delete through the library with it on and off,
alternating in one process.

Real SciFact and CMRC documents and queries, the default encoder, one store. Each round ingests a batch of
documents, runs the queries and deletes the batch, once with the setting on and once off (which goes first
alternates), so both see the same machine. Figures are printed only.

    .venv/bin/python -m bench.zeroing_cost [--rounds 6] [--docs 20] [--queries 40]
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.corpora import BenchDoc, load_cmrc, load_scifact
from memory import TextInput
from memory.config import load_config
from memory.erase import zero_fresh_memory
from memory.service import Memory

_M_PERTURB = -6


def _set(on: bool) -> None:
    assert ctypes.CDLL("libc.so.6").mallopt(_M_PERTURB, 0xFF if on else 0) == 1


def _round(memory: Memory, namespace: str, docs: Sequence[BenchDoc], queries: Sequence[str]) -> dict[str, float]:
    begun = time.perf_counter()
    for doc in docs:
        memory.add_document(namespace, TextInput(doc.text, doc_id=doc.doc_id, title=doc.title))
    ingest = time.perf_counter() - begun
    recalls = []
    for query in queries:
        begun = time.perf_counter()
        memory.recall(namespace, query, 800)
        recalls.append(time.perf_counter() - begun)
    begun = time.perf_counter()
    for doc in docs:
        memory.experience.delete_document(namespace, doc.doc_id)
    delete = time.perf_counter() - begun
    return {"ingest s": ingest, "recall p50 ms": statistics.median(recalls) * 1000,
            "recall p95 ms": sorted(recalls)[int(len(recalls) * 0.95) - 1] * 1000, "delete s": delete}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--docs", type=int, default=20, help="documents per language per round")
    parser.add_argument("--queries", type=int, default=40, help="queries per language per round")
    args = parser.parse_args()
    corpora = [load_scifact(), load_cmrc()]
    with tempfile.TemporaryDirectory() as folder:
        config = load_config(None).replace("service", data_dir=str(Path(folder) / "data"))
        with Memory(config) as memory:
            assert zero_fresh_memory(), "glibc only: the setting is not available here"
            for corpus in corpora:  # a standing store to recall from, beside the batches that come and go
                for doc in corpus.docs[:100]:
                    memory.add_document("ns", TextInput(doc.text, doc_id=doc.doc_id, title=doc.title))
            queries = [q.text for corpus in corpora for q in corpus.queries[:args.queries]]
            results: dict[bool, list[dict[str, float]]] = {True: [], False: []}
            for r in range(args.rounds):
                batch = [d for corpus in corpora
                         for d in corpus.docs[100 + r * args.docs:100 + (r + 1) * args.docs]]
                for on in ((True, False) if r % 2 == 0 else (False, True)):
                    _set(on)
                    results[on].append(_round(memory, "ns", batch, queries))
            _set(True)
    print(f"{args.rounds} rounds; each: {2 * args.docs} documents ingested and deleted, {len(queries)} recalls "
          "(budget 800) over 200 standing documents\n")
    print("| measure | zeroing on | off | on ÷ off |")
    print("|---|---:|---:|---:|")
    for name in results[True][0]:
        on_value = statistics.median(r[name] for r in results[True])
        off_value = statistics.median(r[name] for r in results[False])
        print(f"| {name} | {on_value:.2f} | {off_value:.2f} | {on_value / off_value:.3f} |")


if __name__ == "__main__":
    main()
