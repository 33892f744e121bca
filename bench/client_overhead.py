"""What `memory_client.Client` adds to a recall over a bare `httpx.Client.post` of the same body, on one real server.

    .venv/bin/python -m bench.client_overhead [--rounds 10] [--per-round 50] [--docs 40]

Both speak to one `memory serve` (bench.server_process) over loopback, seeded with pinned facts and `--docs` short
documents in English and Chinese. Rounds alternate which side goes first, so a server warming up or a noisy
neighbour weighs on both. The bare side parses the JSON too (what any caller does); the client also builds the
frozen result dataclasses. A last table times the client's own work alone (request building, answer decoding) on
a recorded answer, with no network. Figures are printed only; bench/RESULTS.md is where they are kept.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from bench.server_process import ServerProcess
from memory_client import Client
from memory_client._calls import recall as recall_call
from memory_client._http import Settings, request_args

NS = "bench-client"
QUERIES = ["When did the La Rance tidal plant open?", "朗斯潮汐电站何时投入运行？", "What budget did I set?",
           "Which tidal stations were built in Asia?"]


def seed(client: Client, docs: int) -> None:
    """Pinned constraints in both languages and `docs` documents on tidal power."""
    client.pin("以后不要用Python 2的语法，预算不超过500元。")
    client.pin("Never use tabs for indentation.")
    for i in range(docs):
        text = (f"Tidal note {i}: the La Rance plant opened in 1966 in Brittany; station {i} logs "
                f"{100 + i} MW at spring tide." if i % 2 else
                f"潮汐笔记{i}：朗斯潮汐电站于1966年投入运行，第{i}号站在大潮时记录{100 + i}兆瓦。")
        client.add_document(text, doc_id=f"notes/{i}.md")


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def quantiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    cuts = statistics.quantiles(samples, n=20, method="inclusive")
    return statistics.median(samples) * 1000, cuts[18] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=50, help="recalls per side in each round")
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--budget", type=int, default=800)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, \
            ServerProcess(Path(folder) / "data", Path(folder) / "server.log") as server, \
            Client(server.url, namespace=NS) as client, httpx.Client(timeout=60.0) as bare:
        seed(client, args.docs)
        url = server.url + "/v1/recall"

        def through_client(query: str) -> None:
            client.recall(query, budget=args.budget)

        def through_httpx(query: str) -> None:
            response = bare.post(url, json={"namespace": NS, "query": query, "budget": args.budget})
            response.raise_for_status()
            response.json()

        sides = {"Client.recall": through_client, "httpx.Client.post": through_httpx}
        for query in QUERIES:  # warm the server's caches and both connection pools
            for side in sides.values():
                side(query)
        samples: dict[str, list[float]] = {name: [] for name in sides}
        for r in range(args.rounds):
            order = list(sides) if r % 2 == 0 else list(reversed(sides))
            for name in order:
                for i in range(args.per_round):
                    query = QUERIES[i % len(QUERIES)]
                    samples[name].append(timed(partial(sides[name], query)))
        n = args.rounds * args.per_round
        print(f"recall, budget {args.budget}, {args.docs} documents, {args.rounds} alternating rounds x "
              f"{args.per_round} per side ({n} recalls each)\n")
        print("| path | p50 ms | p95 ms |\n|---|---:|---:|")
        results = {name: quantiles(values) for name, values in samples.items()}
        for name, (p50, p95) in results.items():
            print(f"| {name} | {p50:.2f} | {p95:.2f} |")
        (c50, c95), (h50, h95) = results["Client.recall"], results["httpx.Client.post"]
        print(f"\nratio Client / httpx: p50 {c50 / h50:.3f}, p95 {c95 / h95:.3f}")

        answer = bare.post(url, json={"namespace": NS, "query": QUERIES[0], "budget": args.budget})
        settings = Settings.resolve(server.url, None, None, 0, None)

        def client_work() -> None:
            call = recall_call(NS, QUERIES[0], budget=args.budget, task_id=None, filters=None, min_score=None)
            bare.build_request(**request_args(call, settings))
            call.read(answer)

        def bare_work() -> None:
            bare.build_request("POST", url, json={"namespace": NS, "query": QUERIES[0], "budget": args.budget})
            answer.json()

        print(f"\nthe client's own work on a recorded answer ({len(answer.content):,} bytes, "
              f"{len(answer.json()['items'])} items), no network\n")
        print("| path | p50 µs | p95 µs |\n|---|---:|---:|")
        for name, work in (("build + decode to Recall", client_work), ("build + json()", bare_work)):
            offline = [timed(work) for _ in range(2000)]
            p50, p95 = quantiles(offline)
            print(f"| {name} | {p50 * 1000:.0f} | {p95 * 1000:.0f} |")


if __name__ == "__main__":
    main()
