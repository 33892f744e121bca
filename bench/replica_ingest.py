"""Ingest through REST into one and into two `memory serve` replicas on one PostgreSQL database and one Chroma
server, and into the SQLite file of one process, with the same real documents: documents and chunks per second,
then whether every acknowledged document is listed by every replica and found again by search.

    .venv/bin/python -m bench.replica_ingest [--scifact 300] [--cmrc 150] [--threads 4]

SciFact abstracts (English) and CMRC 2018 paragraphs (Chinese), from ../shared/benchdata, each POSTed to
/v1/documents by one of several client threads; with two replicas the threads alternate between them. Each
set-up gets its own database (or data folder) and namespace, so each starts empty. Writes are serialised across
replicas (one advisory lock) and the model shares the machine's cores, so on one machine a second replica cannot
add throughput: what this shows is that two lose nothing and do not slow each other beyond the cores they share.
Each replica's resident memory is printed idle (started, nothing asked) and at its peak (after the ingest).
"""

from __future__ import annotations

import argparse
import queue
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.backend_latency import resident_mb
from bench.chroma_server import ChromaServer
from bench.corpora import BenchDoc, load_cmrc, load_scifact
from bench.postgres_cluster import PostgresCluster
from bench.server_process import ServerProcess, logged_errors

__all__ = ["Ingested", "documents", "ingest", "main", "verify"]


@dataclass(frozen=True)
class Ingested:
    """One set-up's ingest: what was acknowledged, how long it took, and what checking found."""

    setup: str
    acknowledged: dict[str, int]  # doc_id -> chunks
    failed: int  # requests not answered 200
    seconds: float
    missing: int = 0  # acknowledged but not listed by some replica
    not_found: int = 0  # listed but not among a search's hits for its own opening words
    resident: tuple[tuple[float, float], ...] = ()  # per replica: idle MB, peak MB


def documents(scifact: int, cmrc: int) -> list[BenchDoc]:
    """The first `scifact` SciFact abstracts and `cmrc` CMRC paragraphs, interleaved (both languages all along)."""
    english, chinese = load_scifact().docs[:scifact], load_cmrc().docs[:cmrc]
    placed = [(i / len(english), 0, d) for i, d in enumerate(english)]
    placed += [(i / len(chinese), 1, d) for i, d in enumerate(chinese)]
    return [d for _, _, d in sorted(placed, key=lambda p: p[:2])]


def _doc_id(doc: BenchDoc) -> str:
    return f"corpus/{doc.doc_id}"


def ingest(servers: Sequence[ServerProcess], namespace: str, docs: Sequence[BenchDoc],
           threads: int) -> tuple[dict[str, int], int, float]:
    """POST every document from `threads` client threads, thread i to servers[i % len]: acknowledged
    (doc_id -> chunks), failures, seconds."""
    work: queue.Queue[BenchDoc] = queue.Queue()
    for doc in docs:
        work.put(doc)
    acknowledged: dict[str, int] = {}
    failed: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(threads + 1)

    def worker(n: int) -> None:
        with httpx.Client(base_url=servers[n % len(servers)].url, timeout=300) as http:
            start.wait()
            while True:
                try:
                    doc = work.get_nowait()
                except queue.Empty:
                    return
                answer = http.post("/v1/documents", json={"namespace": namespace, "text": doc.text,
                                                          "title": doc.title, "doc_id": _doc_id(doc)})
                with lock:
                    if answer.status_code == 200:
                        acknowledged[_doc_id(doc)] = int(answer.json()["chunks"])
                    else:
                        failed.append(answer.text[:300])

    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for thread in pool:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in pool:
        thread.join()
    return acknowledged, len(failed), time.perf_counter() - began


def verify(servers: Sequence[ServerProcess], namespace: str, docs: Sequence[BenchDoc],
           acknowledged: dict[str, int]) -> tuple[int, int]:
    """(acknowledged documents some replica does not list with their chunks, listed documents that a search for
    their own opening words on another replica does not find among its 20 hits)."""
    missing: set[str] = set()
    for server in servers:
        listed = httpx.get(server.url + "/v1/documents", timeout=120,
                           params={"namespace": namespace}).json()["documents"]
        chunks = {d["doc_id"]: d["chunks"] for d in listed}
        missing |= {i for i, n in acknowledged.items() if chunks.get(i) != n}
    not_found = 0
    for n, doc in enumerate(d for d in docs if _doc_id(d) in acknowledged and _doc_id(d) not in missing):
        server = servers[(n + 1) % len(servers)]
        hits = httpx.post(server.url + "/v1/search", timeout=120,
                          json={"namespace": namespace, "query": doc.text[:120], "k": 20}).json()["results"]
        not_found += _doc_id(doc) not in {h["doc_id"] for h in hits}
    return len(missing), not_found


def _run(setup: str, servers: list[ServerProcess], docs: Sequence[BenchDoc], threads: int) -> Ingested:
    """Start the servers, ingest, verify, stop them."""
    namespace = "ingest-" + "".join(c for c in setup if c.isalnum())
    try:
        for server in servers:
            server.start()
        idle = [resident_mb(s.pid)[0] for s in servers]
        for server in servers:  # a first request of each language loads what the timed ones should not pay for
            for n, text in enumerate(("A first note on tidal power in Brittany.", "关于潮汐发电的第一条笔记。")):
                httpx.post(server.url + "/v1/documents", timeout=300,
                           json={"namespace": "warm-up", "text": text, "doc_id": f"warm-{n}"}).raise_for_status()
        acknowledged, failed, seconds = ingest(servers, namespace, docs, threads)
        peak = [resident_mb(s.pid)[1] for s in servers]
        missing, not_found = verify(servers, namespace, docs, acknowledged)
    finally:
        for server in servers:
            server.stop()
    errors = [e for s in servers for e in logged_errors(s.log_text())]
    if errors:
        raise RuntimeError(f"{setup}: the servers logged errors: {errors[:5]}")
    return Ingested(setup, acknowledged, failed, seconds, missing, not_found, tuple(zip(idle, peak, strict=True)))


def _row(r: Ingested, docs: int) -> str:
    chunks = sum(r.acknowledged.values())
    memory = ", ".join(f"{idle:.0f} / {peak:.0f}" for idle, peak in r.resident)
    return (f"| {r.setup} | {len(r.acknowledged)}/{docs} | {chunks} | {r.seconds:.1f} | "
            f"{len(r.acknowledged) / r.seconds:.2f} | {chunks / r.seconds:.1f} | {r.failed} | "
            f"{r.missing} | {r.not_found} | {memory} |")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scifact", type=int, default=300, help="SciFact abstracts to ingest")
    parser.add_argument("--cmrc", type=int, default=150, help="CMRC paragraphs to ingest")
    parser.add_argument("--threads", type=int, default=4, help="client threads")
    args = parser.parse_args(argv)
    docs = documents(args.scifact, args.cmrc)
    results = []
    with PostgresCluster() as cluster, ChromaServer() as chroma, \
            tempfile.TemporaryDirectory(prefix="replica-ingest-") as folder:
        tmp = Path(folder)
        sqlite = ServerProcess(tmp / "sqlite", tmp / "sqlite.log", None)
        results.append(_run("sqlite, one process", [sqlite], docs, args.threads))
        for count in (1, 2):
            url = cluster.create_database(f"ingest_{count}")
            config = tmp / f"shared-{count}.toml"
            config.write_text(f'[store]\nurl = "{url}"\n\n[chroma]\nhost = "127.0.0.1"\nport = {chroma.port}\n',
                              encoding="utf-8")
            servers = [ServerProcess(tmp / f"data-{count}-{i}", tmp / f"server-{count}-{i}.log", config)
                       for i in range(count)]
            results.append(_run(f"postgres, {count} replica{'s' * (count > 1)}", servers, docs, args.threads))
    print(f"\n{len(docs)} documents ({args.scifact} SciFact, {args.cmrc} CMRC) from {args.threads} client threads")
    print("| set-up | acknowledged | chunks | s | documents/s | chunks/s | failed | lost (not listed) | "
          "not found by search | MB resident per replica, idle / peak |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(_row(r, len(docs)))


if __name__ == "__main__":
    main()
