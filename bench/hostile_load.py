"""Another tenant's recall while an attacker sends pathological text, against idle, in one run.

    .venv/bin/python -m bench.hostile_load [--chars N] [--senders N] [--queries N] [--root DIR]

A real `memory serve` in a subprocess. Namespace `reader` holds SciFact abstracts; its recalls (SciFact queries,
budget 500) are timed idle, then while `--senders` threads send, from namespace `attacker`, requests whose text
is `--chars` characters of one pathological shape each (runs of digits, spaces, brackets, unclosed markup, CJK, as
tests/security/test_pathological_text.py has them), over every text route: a document, a fact to extract, a
recall and a search query (cut to limits.max_query_chars), a context turn whose tool result is the text. Printed:
the reader's p50 / p95 idle and under attack, their ratio (issue 34's goal: p95 within 2× idle), and each hostile
request's status and time (goal: every one answered within a few seconds, none a 5xx).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from bench.corpora import load_scifact
from bench.ingest_contention import percentile, timed_recalls
from bench.server_process import ServerProcess

SHAPES = {
    "digits": lambda n: "7" * n,
    "spaces": lambda n: "x" + " " * n + "y",
    "brackets": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "unclosed tags": lambda n: "<p><div>" + "<a" * (n // 2),
    "declarations": lambda n: "<!" * (n // 2),
    "separators": lambda n: ", " * (n // 2),
    "cjk": lambda n: "中" * n,
    "dashed ids": lambda n: "a-1" * (n // 3),
}
QUERY_CHARS = 20_000


def hostile_requests(chars: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(what, path, body) for every shape and text route."""
    out = []
    for shape, make in SHAPES.items():
        text = make(chars)
        query = make(QUERY_CHARS)
        turn = [{"role": "user", "content": "look it up"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "fetch", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": text},
                {"role": "user", "content": "what did it say?"}]
        out += [
            (f"document, {shape}", "/v1/documents", {"namespace": "attacker", "text": text}),
            (f"fact, {shape}", "/v1/facts", {"namespace": "attacker", "text": text}),
            (f"recall, {shape}", "/v1/recall", {"namespace": "attacker", "query": query, "budget": 500}),
            (f"search, {shape}", "/v1/search", {"namespace": "attacker", "query": query}),
            (f"context, {shape}", "/v1/context", {"namespace": "attacker", "messages": turn, "window": 8192}),
        ]
    return out


def attack(url: str, requests: list[tuple[str, str, dict[str, Any]]], senders: int,
           done: threading.Event) -> list[tuple[str, int, float]]:
    """Send every request once, from `senders` threads; (what, status, seconds) per request."""
    results: list[tuple[str, int, float]] = []
    lock = threading.Lock()
    queue = iter(requests)

    def send() -> None:
        with httpx.Client(base_url=url, timeout=600.0) as client:
            while True:
                with lock:
                    item = next(queue, None)
                if item is None:
                    return
                what, path, body = item
                started = time.perf_counter()
                status = client.post(path, json=body).status_code
                with lock:
                    results.append((what, status, time.perf_counter() - started))

    threads = [threading.Thread(target=send) for _ in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=1_000_000, help="characters of each hostile text")
    parser.add_argument("--senders", type=int, default=4, help="attacking threads")
    parser.add_argument("--docs", type=int, default=300, help="SciFact abstracts in the reader's namespace")
    parser.add_argument("--queries", type=int, default=60, help="idle recalls timed")
    parser.add_argument("--root", type=Path, help="the checkout whose code serves (default: this one)")
    args = parser.parse_args()
    corpus = load_scifact()
    questions = [q.text for q in corpus.queries[:200]]
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "data", Path(tmp) / "server.log",
                               **({"root": args.root} if args.root else {}))
        with server, httpx.Client(base_url=server.url, timeout=600.0) as client:
            for doc in corpus.docs[:args.docs]:
                client.post("/v1/documents", json={"namespace": "reader", "doc_id": doc.doc_id,
                                                   "text": f"## {doc.title}\n\n{doc.text}"}).raise_for_status()
            timed_recalls(client, questions, 10, 0.0)  # warm
            idle = timed_recalls(client, questions, args.queries, 0.05)
            done = threading.Event()
            results: list[tuple[str, int, float]] = []
            attacker = threading.Thread(target=lambda: results.extend(
                attack(server.url, hostile_requests(args.chars), args.senders, done)))
            attacker.start()
            during = timed_recalls(client, questions, 0, 0.05, until=done, offset=args.queries)
            attacker.join()
            after = timed_recalls(client, questions, args.queries, 0.05, offset=2 * args.queries)
            errors = [line for line in server.log_text().splitlines() if "Traceback" in line]
    print(f"reader recall p50 / p95 ms: idle {statistics.median(idle):.1f} / {percentile(idle, 0.95):.1f}; under "
          f"attack ({len(during)} recalls) {statistics.median(during):.1f} / {percentile(during, 0.95):.1f}; after "
          f"{statistics.median(after):.1f} / {percentile(after, 0.95):.1f}")
    print(f"p95 under attack ÷ idle: {percentile(during, 0.95) / percentile(idle, 0.95):.2f}×")
    print(f"\n{len(results)} hostile requests of {args.chars:,} characters from {args.senders} senders:")
    print("| request | status | seconds |\n|---|---|---|")
    for what, status, seconds in sorted(results, key=lambda r: -r[2]):
        print(f"| {what} | {status} | {seconds:.2f} |")
    print(f"\nslowest {max(r[2] for r in results):.2f} s; 5xx: {sum(1 for r in results if r[1] >= 500)}; "
          f"tracebacks in the server log: {len(errors)}")


if __name__ == "__main__":
    main()
