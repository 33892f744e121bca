"""Recall latency in one namespace while another ingests a very large document, against idle, in one run.

    .venv/bin/python -m bench.ingest_contention [--chars N] [--docs N] [--queries N] [--pause S] [--sync] [--root DIR]

A real `memory serve` in a subprocess. Namespace `reader` holds SciFact abstracts; its recalls (SciFact queries,
budget 500) are timed idle, then while namespace `writer` ingests one document of `--chars` characters built
from other SciFact abstracts (a 202 ingest job; `--sync` sends it with a wait-for-it request instead, as a
client that asks for no job would), then idle again. The goal of issue 17: p95 during ingest <= 2x idle p95.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench.corpora import load_scifact
from bench.server_process import ServerProcess


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def timed_recalls(client: httpx.Client, queries: list[str], count: int, pause_s: float,
                  until: threading.Event | None = None, offset: int = 0) -> list[float]:
    """Recalls in `reader`, one every `pause_s` at most; `count` of them, or (with `until`) until it is set.

    Each query is asked once (a round number is appended after the first round): a repeated query would be
    answered from the embedder's query cache and hide what a new one costs.
    """
    latencies = []
    i = offset
    while (until is None and len(latencies) < count) or (until is not None and not until.is_set()):
        query = queries[i % len(queries)] + ("" if i < len(queries) else f" ({i // len(queries)})")
        i += 1
        time.sleep(pause_s)
        started = time.perf_counter()
        response = client.post("/v1/recall", json={"namespace": "reader", "query": query, "budget": 500})
        latencies.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
    return latencies


def row(name: str, values: list[float], idle_p95: float) -> str:
    p95 = percentile(values, 0.95)
    return (f"| {name} | {len(values)} | {statistics.median(values):.1f} | {p95:.1f} | {percentile(values, 0.99):.1f} "
            f"| {max(values):.1f} | {p95 / idle_p95:.2f}x |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=1_000_000, help="size of the large document")
    parser.add_argument("--docs", type=int, default=300, help="SciFact abstracts in the reader namespace")
    parser.add_argument("--queries", type=int, default=200, help="timed recalls per idle phase")
    parser.add_argument("--pause", type=float, default=0.1, help="seconds between two recalls (an agent's pace)")
    parser.add_argument("--sync", action="store_true", help="ingest in one waiting request, not a job")
    parser.add_argument("--root", type=Path, help="serve from another checkout (an older commit, for before / after)")
    args = parser.parse_args()

    corpus = load_scifact()
    reader_docs = corpus.docs[:args.docs]
    big, size = [], 0
    for doc in corpus.docs[args.docs:]:
        if size >= args.chars:
            break
        big.append(f"## {doc.title}\n\n{doc.text}")
        size += len(big[-1]) + 2
    text = "\n\n".join(big)[:args.chars]
    queries = [q.text for q in corpus.queries]

    with tempfile.TemporaryDirectory() as folder, ServerProcess(
            Path(folder) / "data", Path(folder) / "log", **({"root": args.root} if args.root else {})) as server:
        client = httpx.Client(base_url=server.url, timeout=3600)
        started = time.perf_counter()
        for doc in reader_docs:
            client.post("/v1/documents", json={"namespace": "reader", "doc_id": doc.doc_id, "title": doc.title,
                                               "text": doc.text}).raise_for_status()
        print(f"reader: {len(reader_docs)} abstracts in {time.perf_counter() - started:.0f} s")
        timed_recalls(client, queries[-20:], 20, args.pause)  # warm-up, on queries not timed after
        queries = queries[:-20]
        idle = timed_recalls(client, queries, args.queries, args.pause)

        done = threading.Event()
        outcome: dict[str, object] = {}

        def ingest() -> None:
            writer = httpx.Client(base_url=server.url, timeout=3600)
            began = time.perf_counter()
            body = {"namespace": "writer", "doc_id": "big", "title": "SciFact abstracts", "text": text}
            answer = writer.post("/v1/documents" + ("?background=false" if args.sync else ""), json=body)
            answer.raise_for_status()
            job = answer.json()
            while job.get("state") in ("queued", "running"):
                time.sleep(0.5)
                job = writer.get(f"/v1/jobs/{job['job_id']}", params={"namespace": "writer"}).json()
            outcome.update(job, seconds=time.perf_counter() - began, http=answer.status_code)
            done.set()

        thread = threading.Thread(target=ingest)
        thread.start()
        busy = timed_recalls(client, queries, 0, args.pause, until=done, offset=args.queries)
        thread.join()
        after = timed_recalls(client, queries, args.queries, args.pause, offset=args.queries + len(busy))

    idle_p95 = percentile(idle, 0.95)
    print(f"\nlarge document: {len(text):,} characters, answered HTTP {outcome['http']}, "
          f"{outcome.get('chunks')} chunks, state {outcome.get('state', 'done')}, {outcome['seconds']:.0f} s")
    print("\n| phase | recalls | p50 ms | p95 ms | p99 ms | max ms | p95 / idle p95 |")
    print("|---|---|---|---|---|---|---|")
    print(row("idle (before)", idle, idle_p95))
    print(row("while `writer` ingests", busy, idle_p95))
    print(row("idle (after)", after, idle_p95))


if __name__ == "__main__":
    main()
