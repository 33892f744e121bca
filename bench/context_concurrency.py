"""Context turns from several client threads at once, each thread in a namespace of its own: turns per second and
latency on one `memory serve` over the SQLite file, and on two `memory serve` replicas over one PostgreSQL database
and one Chroma server (threads alternate between them), for the code of one or two checkouts.

    .venv/bin/python -m bench.context_concurrency [--chunks 5000] [--turns 16] [--threads 1 2 4]
                                                  [--before PATH_OF_ANOTHER_CHECKOUT]

A /v1/context turn stores what it decides in one transaction under the store-wide writer lock (across replicas on
PostgreSQL); this shows how far turns in different namespaces wait for each other. With `--before` the same run
serves each set-up with that checkout's code too (e.g. `git archive` of an earlier commit unpacked in a folder), each
checkout on its own copy of the same store, all servers of a set-up running at once and the checkouts taking turns
thread count by thread count, so that the comparison shares the machine's drift.

Each namespace holds `--chunks` chunks of real SciFact and CMRC sentences with synthetic vectors
(bench.experience_scale; every query is embedded for real by the default encoder), built once under
bench/.cache/context-concurrency-N (the SQLite store, and a dump of the PostgreSQL one) and copied for each server,
so every run starts from the same store. A turn is bench._agent_turn's: a research agent's 19-message turn over a
4,096-token window, a conversation new to the server, so it is read for constraints, compacted, has a tool result
reduced and stores all of that. Each thread sends two untimed turns, then `--turns` timed ones, all threads
starting together; turns per second is all timed turns over the wall time from the start to the last answer.

On a machine with few cores the model, not the lock, caps turns per second; so the run also times, for each
checkout, how long a turn holds the writer lock (one turn at a time in one process, every outermost write
transaction timed): 1000 / that is the most turns per second the lock lets every replica together assemble.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from bench._agent_turn import context_body, questions
from bench.backend_latency import SYNTHETIC, default_identity, percentile, relabel, server_config
from bench.chroma_server import ChromaServer
from bench.experience_scale import SyntheticEncoder, fill, sentence_pool
from bench.postgres_cluster import PostgresCluster
from bench.server_process import ROOT, ServerProcess, logged_errors
from memory.clock import utc_now
from memory.config import Config, load_config
from memory.experience.dense import VectorIndex
from memory.experience.writer import DocumentWriter
from memory.store import open_store
from memory.tokens import get_counter

__all__ = ["Cell", "build_postgres", "build_sqlite", "main", "run_threads"]

_CACHE = ROOT / "bench" / ".cache"
_NAMESPACES = 4  # as many as the most threads
_WARMUP = 2


def namespace(n: int) -> str:
    """Thread n's namespace."""
    return f"ctx-{n}"


def _fill(config: Config, chunks: int, pool: Sequence[str]) -> None:
    """Write `chunks` chunks into each namespace (seeded by the namespace's number: every backend gets the same)."""
    store = open_store(config, SYNTHETIC)
    writer = DocumentWriter(store, VectorIndex(store), SyntheticEncoder(SYNTHETIC.dimension), get_counter(), utc_now)
    try:
        for n in range(_NAMESPACES):
            fill(writer, namespace(n), chunks, random.Random(chunks * 10 + n), pool)
    finally:
        store.close()


def build_sqlite(chunks: int, pool: Sequence[str]) -> Path:
    """The SQLite store with embedded Chroma, built once under bench/.cache and reused."""
    folder = _CACHE / f"context-concurrency-{chunks}" / "sqlite"
    if (folder / "built").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    _fill(load_config().replace("service", data_dir=str(folder)), chunks, pool)
    (folder / "built").write_text(f"{_NAMESPACES} x {chunks} chunks in {time.perf_counter() - started:.0f} s\n")
    return folder


def build_postgres(chunks: int, pool: Sequence[str], cluster: PostgresCluster, chroma_port: int,
                   tmp: Path) -> str:
    """The same store as a database of `cluster` named ctx_base (restored from bench/.cache's dump, else written
    and dumped there), its vectors on the Chroma server at `chroma_port`: the database to copy for each server."""
    url = cluster.create_database("ctx_base")
    config = server_config(load_config().replace("service", data_dir=str(tmp / "pg-base")), chroma_port, url)
    dump = _CACHE / f"context-concurrency-{chunks}" / "postgres.dump"
    if dump.exists():
        _client(cluster, "pg_restore", "--no-owner", "-j", "2", "-d", url, str(dump))
    else:
        _fill(config, chunks, pool)
        _client(cluster, "pg_dump", "-Fc", "-f", str(dump), url)
    _client(cluster, "vacuumdb", "--analyze", "-d", url)
    _copy_vectors(load_config().replace("service", data_dir=str(build_sqlite(chunks, pool))), config)
    relabel(config, default_identity())
    return url


def _client(cluster: PostgresCluster, program: str, *args: str) -> None:
    subprocess.run([str(cluster.bin / program), *args], check=True, capture_output=True, timeout=1800)


def _copy_vectors(source: Config, target: Config) -> None:
    """Every chunk vector of the store `source` opens into the store `target` opens (the same chunk ids)."""
    stores = [open_store(c, SYNTHETIC) for c in (source, target)]
    try:
        for n in range(_NAMESPACES):
            ids = [r[0] for r in stores[0].db.execute("SELECT id FROM chunks WHERE namespace = ? ORDER BY id",
                                                      [namespace(n)]).fetchall()]
            reading, writing = VectorIndex(stores[0]), VectorIndex(stores[1])
            for start in range(0, len(ids), 5000):
                found = reading.fetch(namespace(n), ids[start:start + 5000])
                writing.add(namespace(n), list(found), np.stack(list(found.values())))
    finally:
        for store in stores:
            store.close()


# Run in a checkout's folder (its `memory` package): a Memory on the SQLite store given, the turns read from stdin
# assembled one after another, each with the time its outermost write transactions held the writer lock.
_HELD = """
import json, sys, threading, time
from contextlib import contextmanager
from memory.config import load_config
from memory.context import ContextRequest
from memory.service import Memory

with Memory(load_config().replace("service", data_dir=sys.argv[1])) as memory:
    store, local, held = memory.store, threading.local(), []
    opened = store.transaction

    @contextmanager
    def timed(*args, **kwargs):
        outer = not getattr(local, "depth", 0)
        local.depth = getattr(local, "depth", 0) + 1
        began = time.perf_counter()
        try:
            with opened(*args, **kwargs) as db:
                yield db
        finally:
            local.depth -= 1
            if outer:
                held.append(time.perf_counter() - began)

    store.transaction = timed
    out = []
    for body in json.loads(sys.stdin.read()):
        held.clear()
        began = time.perf_counter()
        memory.context(ContextRequest(**body))
        out.append(((time.perf_counter() - began) * 1000, sum(held) * 1000))
print(json.dumps(out))
"""


def held(root: Path, data: Path, bodies: Sequence[dict[str, Any]]) -> list[tuple[float, float]]:
    """(turn ms, writer lock held ms) of each turn after the first _WARMUP, assembled one at a time in process by
    the code of the checkout at `root` on the SQLite store in `data`."""
    done = subprocess.run([sys.executable, "-c", _HELD, str(data)], cwd=root, input=json.dumps(list(bodies)),
                          capture_output=True, text=True, check=True, timeout=3600)
    return [(float(a), float(b)) for a, b in json.loads(done.stdout.strip().splitlines()[-1])][_WARMUP:]


@dataclass(frozen=True)
class Cell:
    """One measurement: a set-up, a checkout's code, a number of threads, and what they got."""

    setup: str
    code: str
    threads: int
    latencies: tuple[float, ...]  # ms, every timed turn
    seconds: float  # wall time of the timed turns

    @property
    def rate(self) -> float:
        """Turns per second."""
        return len(self.latencies) / self.seconds


def run_threads(urls: Sequence[str], bodies: Sequence[Sequence[dict[str, Any]]]) -> tuple[list[float], float]:
    """Thread n sends bodies[n] in order to urls[n % len(urls)], the first _WARMUP untimed; every timed turn's
    latency (ms) and the wall time from the common start to the last answer."""
    start = threading.Barrier(len(bodies) + 1)
    done = threading.Barrier(len(bodies) + 1)
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        with httpx.Client(base_url=urls[n % len(urls)], timeout=600) as http:
            for body in bodies[n][:_WARMUP]:
                _post(http, body, failures)
            start.wait()
            for body in bodies[n][_WARMUP:]:
                began = time.perf_counter()
                _post(http, body, failures)
                with lock:
                    latencies.append((time.perf_counter() - began) * 1000)
            done.wait()

    pool = [threading.Thread(target=worker, args=(n,)) for n in range(len(bodies))]
    for thread in pool:
        thread.start()
    start.wait()
    began = time.perf_counter()
    done.wait()
    seconds = time.perf_counter() - began
    for thread in pool:
        thread.join()
    if failures:
        raise RuntimeError(f"{len(failures)} turns failed: {failures[:3]}")
    return latencies, seconds


def _post(http: httpx.Client, body: dict[str, Any], failures: list[str]) -> None:
    answer = http.post("/v1/context", json=body)
    if answer.status_code != 200:
        failures.append(f"{answer.status_code}: {answer.text[:300]}")


def _measure(setup: str, fleets: dict[str, list[ServerProcess]], counts: Sequence[int],
             bodies: dict[int, list[list[dict[str, Any]]]]) -> list[Cell]:
    """Start every checkout's servers, warm them, then run each thread count on each checkout in turn (the order
    alternating), so that both share the machine's drift; stop them. A cell per checkout and count."""
    cells = []
    with ExitStack() as stack:
        for server in (s for fleet in fleets.values() for s in fleet):
            stack.enter_context(server)
            for n, question in enumerate(("Which paper is the most recent?", "哪篇论文最新？")):
                # The first turn of each language loads what the timed ones should not pay for.
                body = {"namespace": "warm-up", "window": 4096, "messages": [{"role": "user", "content": question}],
                        "task_id": f"warm-{n}"}
                httpx.post(server.url + "/v1/context", json=body, timeout=600).raise_for_status()
        for k, count in enumerate(counts):
            for code in (list(fleets) if k % 2 == 0 else list(fleets)[::-1]):
                latencies, seconds = run_threads([s.url for s in fleets[code]], bodies[count])
                cells.append(Cell(setup, code, count, tuple(latencies), seconds))
                print(f"{setup} | {code} | {count} threads: {cells[-1].rate:.2f} turns/s, p50 "
                      f"{statistics.median(latencies):.0f} ms", file=sys.stderr)
    errors = [e for fleet in fleets.values() for s in fleet for e in logged_errors(s.log_text())]
    if errors:
        raise RuntimeError(f"{setup}: the servers logged errors: {errors[:5]}")
    return cells


def _bodies(counts: Sequence[int], turns: int, pool: Sequence[str]) -> dict[int, list[list[dict[str, Any]]]]:
    """For each thread count, each thread's turns in its own namespace: every conversation new to the servers."""
    rng = random.Random(36)
    out = {}
    for count in counts:
        asked = questions(rng, pool, count * (turns + _WARMUP), 10)
        out[count] = [[context_body(asked[n * (turns + _WARMUP) + k], rng, pool, namespace(n))
                       for k in range(turns + _WARMUP)] for n in range(count)]
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=5000, help="chunks in each thread's namespace")
    parser.add_argument("--turns", type=int, default=16, help="timed turns per thread")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4], help="client thread counts")
    parser.add_argument("--before", type=Path, help="another checkout whose code serves the same set-ups too")
    args = parser.parse_args(argv)
    if max(args.threads) > _NAMESPACES:
        parser.error(f"at most {_NAMESPACES} threads (a namespace each)")
    pool = sentence_pool()
    codes = {"after": ROOT} if args.before is None else {"before": args.before.resolve(), "after": ROOT}
    sqlite = build_sqlite(args.chunks, pool)
    cells: list[Cell] = []
    holding: dict[str, list[tuple[float, float]]] = {}
    with PostgresCluster() as cluster, ChromaServer() as chroma, \
            tempfile.TemporaryDirectory(prefix="context-concurrency-") as folder:
        tmp = Path(folder)
        one = _bodies([1], args.turns, pool)[1][0]
        for code, root in codes.items():
            data = tmp / f"held-{code}"
            shutil.copytree(sqlite, data)
            relabel(load_config().replace("service", data_dir=str(data)), default_identity())
            holding[code] = held(root, data, one)
        base = build_postgres(args.chunks, pool, cluster, chroma.port, tmp)
        sqlite_fleets = {}
        for code, root in codes.items():
            data = tmp / f"sqlite-{code}"
            shutil.copytree(sqlite, data)
            relabel(load_config().replace("service", data_dir=str(data)), default_identity())
            sqlite_fleets[code] = [ServerProcess(data, tmp / f"sqlite-{code}.log", None, root)]
        cells += _measure("SQLite, one process", sqlite_fleets, args.threads, _bodies(args.threads, args.turns, pool))
        postgres_fleets = {}
        for code, root in codes.items():
            url = cluster.create_database(f"ctx_{code}", template=base.rsplit("/", 1)[1])
            toml = tmp / f"pg-{code}.toml"
            toml.write_text(f'[store]\nurl = "{url}"\n\n[chroma]\nhost = "127.0.0.1"\nport = {chroma.port}\n',
                            encoding="utf-8")
            postgres_fleets[code] = [ServerProcess(tmp / f"pg-{code}-{i}", tmp / f"pg-{code}-{i}.log", toml, root)
                                     for i in range(2)]
        cells += _measure("PostgreSQL, two replicas", postgres_fleets, args.threads,
                          _bodies(args.threads, args.turns, pool))
    print(f"\n/v1/context from N client threads, a namespace of {args.chunks:,} chunks each, {args.turns} timed "
          "turns per thread (a 19-message agent turn, window 4096)")
    print("| set-up | code | threads | turns/s | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|")
    for c in cells:
        print(f"| {c.setup} | {c.code} | {c.threads} | {c.rate:.2f} | {statistics.median(c.latencies):.0f} | "
              f"{percentile(c.latencies, 0.95):.0f} |")
    print(f"\nthe writer lock per turn: {args.turns} turns one at a time in process on the SQLite store, p50 ms "
          "(the most turns per second the lock lets all replicas together assemble is 1000 / held)")
    print("| code | turn | writer lock held | held ÷ turn | at most turns/s |")
    print("|---|---|---|---|---|")
    for code, times in holding.items():
        turn, lock = statistics.median(t for t, _ in times), statistics.median(h for _, h in times)
        print(f"| {code} | {turn:.0f} | {lock:.1f} | {lock / turn:.2f} | {1000 / lock:.0f} |")
    if args.before is not None:
        print("\n| set-up | threads | turns/s after ÷ before | p50 after ÷ before |")
        print("|---|---|---|---|")
        for c in cells:
            if c.code == "after":
                (b,) = [x for x in cells if (x.setup, x.code, x.threads) == (c.setup, "before", c.threads)]
                print(f"| {c.setup} | {c.threads} | {c.rate / b.rate:.2f} | "
                      f"{statistics.median(c.latencies) / statistics.median(b.latencies):.2f} |")


if __name__ == "__main__":
    main()
