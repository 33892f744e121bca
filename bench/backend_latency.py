"""Recall and /v1/context latency through REST on the three set-ups a store can be served from, at 10k and 100k
chunks, in one run: the SQLite file with embedded Chroma (the default), the SQLite file with a Chroma server, and
PostgreSQL with the same Chroma server (what replicas run).

    .venv/bin/python -m bench.backend_latency [--sizes 10000 100000] [--queries 60]

Every set-up holds the same documents: real sentences of SciFact and CMRC (so the lexical index sees real words)
with synthetic vectors (bench.experience_scale.SyntheticEncoder: the build does not pay for the model), written
by the same seed, so chunk ids, texts and vectors agree; the two Chroma-server set-ups read one collection. The
SQLite store is kept under bench/.cache/latency-N and reused; PostgreSQL and the Chroma server are throwaway
(bench.postgres_cluster, bench.chroma_server) and built in the run, their build time printed. Each store is
labelled with the default encoder before it is served (the vectors are synthetic; the query's is real).

One `memory serve` per set-up, timed round by round: each round sends one recall and one context turn to every
set-up, the order rotating, so that the drift of a shared machine weighs on all alike. Each set-up gets the same
queries and turns (a paired comparison), and every one of them is new to every server, so no query cache answers.
A context turn is a whole agent turn over its window (system prompt, three tools, tool calls and results, user
follow-ups): it is read for constraints, followed as a conversation, compacted and its tools selected, which
writes in the store's transaction what /v1/context writes. Storage per set-up and each server's resident memory
are printed after the timings.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from bench._agent_turn import WINDOW, context_body, questions
from bench.chroma_server import ChromaServer
from bench.experience_scale import SyntheticEncoder, fill, sentence_pool
from bench.postgres_cluster import PostgresCluster
from bench.server_process import ServerProcess
from memory.clock import utc_now
from memory.config import Config, load_config
from memory.embedding import EmbedderIdentity, resolved
from memory.experience.dense import VectorIndex
from memory.experience.writer import DocumentWriter
from memory.store import StoreIdentity, open_store, stored_identity
from memory.tokens import get_counter

__all__ = ["SETUPS", "build_postgres", "build_sqlite", "main", "relabel", "resident_mb"]

_ROOT = Path(__file__).resolve().parent.parent
_CACHE = _ROOT / "bench" / ".cache"
NAMESPACE = "speed"
DIMENSION = 384  # all-MiniLM-L6-v2's, which the stores are labelled with
# What built the stores: recorded as such, then relabelled with the default encoder to be served.
SYNTHETIC = EmbedderIdentity("synthetic", "all-MiniLM-L6-v2", DIMENSION)
SETUPS = ("sqlite", "sqlite + chroma server", "postgres + chroma server")
_WARMUP = 5
_BUDGET = 1000


def default_identity() -> StoreIdentity:
    """The identity a store built by the default encoder records (without loading the model)."""
    config = load_config()
    chosen = resolved(config.embedding)
    return StoreIdentity(chosen.backend, chosen.model, DIMENSION, config.tokenizer.encoding)


def _writer(config: Config) -> tuple[Any, DocumentWriter]:
    store = open_store(config, SYNTHETIC)
    return store, DocumentWriter(store, VectorIndex(store), SyntheticEncoder(DIMENSION), get_counter(), utc_now)


def _fill(config: Config, size: int, pool: Sequence[str]) -> float:
    """Write the store of `size` chunks (the seed is the size, so every backend gets the same); seconds taken."""
    store, writer = _writer(config)
    started = time.perf_counter()
    try:
        fill(writer, NAMESPACE, size, random.Random(size), pool)
    finally:
        store.close()
    return time.perf_counter() - started


def build_sqlite(size: int, pool: Sequence[str]) -> Path:
    """The SQLite file and embedded Chroma of `size` chunks, built once under bench/.cache and then reused."""
    folder = _CACHE / f"latency-{size}" / "sqlite"
    if (folder / "built").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    seconds = _fill(load_config().replace("service", data_dir=str(folder)), size, pool)
    (folder / "built").write_text(f"{size} chunks in {seconds:.0f} s\n")
    print(f"built {size:,} chunks on SQLite + embedded Chroma in {seconds:.0f} s", file=sys.stderr)
    return folder


def server_config(base: Config, chroma_port: int, url: str = "") -> Config:
    """`base` with its vectors on the Chroma server at `chroma_port`, its records at `url` (empty: SQLite)."""
    return base.replace("chroma", host="127.0.0.1", port=chroma_port).replace("store", url=url)


def build_postgres(size: int, pool: Sequence[str], cluster: PostgresCluster, chroma_port: int,
                   folder: Path) -> tuple[str, float | None]:
    """The same store in a new database of `cluster`, its vectors on the Chroma server at `chroma_port`: its URL,
    and the seconds the build took (None when it was restored from bench/.cache, where the first build leaves a
    dump: building through the writer is several times slower on PostgreSQL than on the SQLite file)."""
    url = cluster.create_database(f"latency_{size}")
    config = server_config(load_config().replace("service", data_dir=str(folder)), chroma_port, url)
    dump = _CACHE / f"latency-{size}" / "postgres.dump"
    if dump.exists():
        started = time.perf_counter()
        _client(cluster, "pg_restore", "--no-owner", "-j", "2", "-d", url, str(dump))
        _client(cluster, "vacuumdb", "--analyze", "-d", url)  # a dump holds no statistics; a store written has them
        _copy_vectors(load_config().replace("service", data_dir=str(build_sqlite(size, pool))), config)
        print(f"restored {size:,} chunks into PostgreSQL + the Chroma server in "
              f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
        return url, None
    seconds = _fill(config, size, pool)
    print(f"built {size:,} chunks on PostgreSQL + the Chroma server in {seconds:.0f} s", file=sys.stderr)
    _client(cluster, "pg_dump", "-Fc", "-f", str(dump), url)
    return url, seconds


def _client(cluster: PostgresCluster, program: str, *args: str) -> None:
    """Run one of PostgreSQL's client programs (as this user: they connect over TCP, nothing runs as nobody)."""
    subprocess.run([str(cluster.bin / program), *args], check=True, capture_output=True, timeout=1800)


def _copy_vectors(source: Config, target: Config) -> None:
    """Every chunk vector of the store `source` opens into the store `target` opens (the same chunk ids)."""
    stores = [open_store(c, SYNTHETIC) for c in (source, target)]
    try:
        ids = [r[0] for r in stores[0].db.execute("SELECT id FROM chunks ORDER BY id").fetchall()]
        reading, writing = VectorIndex(stores[0]), VectorIndex(stores[1])
        for start in range(0, len(ids), 5000):
            found = reading.fetch(NAMESPACE, ids[start:start + 5000])
            writing.add(NAMESPACE, list(found), np.stack(list(found.values())))
    finally:
        for store in stores:
            store.close()


def relabel(config: Config, identity: StoreIdentity) -> None:
    """Record `identity` as the model of the store `config` opens: its vectors are synthetic, so the default
    encoder may serve it (memory serve refuses a store of another model)."""
    recorded = stored_identity(config)
    assert recorded is not None, "relabel a store that exists"
    store = open_store(config, recorded.embedder)
    try:
        store.switch_identity(identity, store.generation)
    finally:
        store.close()


def _toml(config: Config) -> str:
    """The settings a served set-up needs besides the defaults."""
    lines = []
    if config.store.url:
        lines += ["[store]", f'url = "{config.store.url}"', ""]
    if config.chroma.host:
        lines += ["[chroma]", f'host = "{config.chroma.host}"', f"port = {config.chroma.port}", ""]
    return "\n".join(lines)


# --- the timing --------------------------------------------------------------------------------------------------

@dataclass
class Served:
    """One set-up's running server and its HTTP client."""

    name: str
    server: ServerProcess
    http: httpx.Client

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST and check the answer."""
        answer = self.http.post(path, json=body)
        if answer.status_code != 200:
            raise RuntimeError(f"{self.name}: {path} answered {answer.status_code}: {answer.text[:500]}")
        result: dict[str, Any] = answer.json()
        return result


def _timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def interleaved(served: Sequence[Served], recalls: Sequence[str],
                turns: Sequence[dict[str, Any]]) -> dict[tuple[str, str], list[float]]:
    """(set-up, call) -> ms: round n sends recalls[n] and turns[n] to every set-up, the set-ups' order rotating."""
    out: dict[tuple[str, str], list[float]] = {(s.name, c): [] for s in served for c in ("recall", "context")}
    for n, (query, turn) in enumerate(zip(recalls, turns, strict=True)):
        order = [*served[n % len(served):], *served[:n % len(served)]]
        recall = {"namespace": NAMESPACE, "query": query, "budget": _BUDGET}
        for call, path, body in (("recall", "/v1/recall", recall), ("context", "/v1/context", turn)):
            for s in order:
                ms = _timed(partial(s.post, path, body))
                if n >= _WARMUP:
                    out[(s.name, call)].append(ms)
    return out


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-quantile (nearest rank below) of `samples`."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def resident_mb(pid: int | None) -> tuple[float, float]:
    """A process's resident memory now and at its peak, in MB (Linux /proc)."""
    if pid is None:
        return 0.0, 0.0
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def folder_bytes(path: Path) -> int:
    """Bytes of every file under `path`."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def postgres_tables(url: str) -> list[tuple[str, int, int]]:
    """(table, bytes of its rows with TOAST, bytes of its indexes) of every table of the database, largest first."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        rows = conn.execute(
            "SELECT relname, pg_table_size(oid), pg_indexes_size(oid) FROM pg_class "
            "WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace "
            "ORDER BY pg_total_relation_size(oid) DESC").fetchall()
    return [(str(name), int(table), int(indexes)) for name, table, indexes in rows]


# --- one size ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Measured:
    """One size's timings, storage and memory."""

    size: int
    build_postgres_s: float | None  # None: restored from bench/.cache
    times: dict[tuple[str, str], list[float]]
    storage: dict[str, int]  # what -> bytes
    tables: list[tuple[str, int, int]]
    resident: dict[str, tuple[float, float, float]]  # set-up -> idle MB, after the run MB, peak MB


def measure(size: int, pool: Sequence[str], queries: int, cluster: PostgresCluster, tmp: Path) -> Measured:
    """Build the three set-ups of `size` chunks, serve each, time them interleaved, and size their storage."""
    sqlite = build_sqlite(size, pool)
    rng = random.Random(size * 7 + 1)
    rounds = queries + _WARMUP
    recalls = questions(rng, pool, rounds, 8)
    turns = [context_body(q, rng, pool) for q in questions(rng, pool, rounds, 10)]
    identity = default_identity()
    base = load_config()
    with ChromaServer() as chroma, ExitStack() as stack:
        pg_folder = tmp / f"pg-{size}"
        url, build_s = build_postgres(size, pool, cluster, chroma.port, pg_folder)
        configs = {
            SETUPS[0]: base.replace("service", data_dir=str(tmp / f"a-{size}")),
            SETUPS[1]: server_config(base.replace("service", data_dir=str(tmp / f"b-{size}")), chroma.port),
            SETUPS[2]: server_config(base.replace("service", data_dir=str(pg_folder)), chroma.port, url),
        }
        shutil.copytree(sqlite, configs[SETUPS[0]].service.data_dir)
        Path(configs[SETUPS[1]].service.data_dir).mkdir()
        shutil.copy(sqlite / "memory.db", Path(configs[SETUPS[1]].service.data_dir) / "memory.db")
        served: list[Served] = []
        for name, config in configs.items():
            relabel(config, identity)
            toml = tmp / f"{size}-{len(served)}.toml"
            toml.write_text(_toml(config), encoding="utf-8")
            server = ServerProcess(Path(config.service.data_dir), tmp / f"{size}-{len(served)}.log", toml)
            stack.enter_context(server)
            http = stack.enter_context(httpx.Client(base_url=server.url, timeout=300))
            served.append(Served(name, server, http))
        idle = {s.name: resident_mb(s.server.pid)[0] for s in served}
        _show_turn(served[-1], turns[0])
        times = interleaved(served, recalls, turns)
        resident = {s.name: (idle[s.name], *resident_mb(s.server.pid)) for s in served}
        assert chroma.folder is not None
        storage = {
            "sqlite file": (sqlite / "memory.db").stat().st_size,
            "embedded chroma": folder_bytes(sqlite / "chroma"),
            "chroma server": folder_bytes(chroma.folder),
        }
    tables = postgres_tables(url)
    storage["postgres"] = sum(t + i for _, t, i in tables)
    return Measured(size, build_s, times, storage, tables, resident)


def _show_turn(served: Served, turn: dict[str, Any]) -> None:
    """What the packer did with a turn like the timed ones (to stderr), so the bench shows it works for its time."""
    last = {"role": "user", "content": "Which of these papers is the most recent?"}
    report = served.post("/v1/context", {**turn, "messages": [*turn["messages"][:-1], last]})["report"]
    kinds = sorted({a["kind"] for a in report["actions"]})
    print(f"a turn of {report['tokens']['total']} tokens sent of a {WINDOW}-token window; actions: {kinds}; "
          f"retrieved {report['retrieved']}", file=sys.stderr)


# --- the tables --------------------------------------------------------------------------------------------------

def _cell(samples: Sequence[float]) -> str:
    return f"{statistics.median(samples):.1f} / {percentile(samples, 0.95):.1f}"


def latency_rows(m: Measured) -> list[str]:
    """The latency table's rows of one size: each set-up, then the ratios."""
    rows = [f"| {m.size:,} | {name} | {_cell(m.times[(name, 'recall')])} | {_cell(m.times[(name, 'context')])} |"
            for name in SETUPS]
    for label, top, bottom in (("PostgreSQL ÷ SQLite, same Chroma server", SETUPS[2], SETUPS[1]),
                               ("PostgreSQL ÷ SQLite, as shipped", SETUPS[2], SETUPS[0])):
        cells = []
        for call in ("recall", "context"):
            a, b = m.times[(top, call)], m.times[(bottom, call)]
            cells.append(f"{statistics.median(a) / statistics.median(b):.2f} / "
                         f"{percentile(a, 0.95) / percentile(b, 0.95):.2f}")
        rows.append(f"| {m.size:,} | {label} | {cells[0]} | {cells[1]} |")
    return rows


def storage_rows(m: Measured) -> list[str]:
    """Bytes per chunk and per million chunks of each store, and PostgreSQL's tables."""
    def row(what: str, size: int) -> str:
        per = size / m.size
        return f"| {m.size:,} | {what} | {size / 2**20:,.1f} | {per:,.0f} | {per * 1e6 / 2**30:.2f} |"

    rows = [row(what, size) for what, size in m.storage.items()]
    rows += [row(f"postgres: {name} (rows {t / 2**20:,.1f} MB + indexes {i / 2**20:,.1f} MB)", t + i)
             for name, t, i in m.tables if t + i > 2**20]
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="store sizes (chunks)")
    parser.add_argument("--queries", type=int, default=60, help=f"timed rounds per size (after {_WARMUP} warm-up)")
    args = parser.parse_args(argv)
    pool = sentence_pool()
    found = []
    with PostgresCluster() as cluster, tempfile.TemporaryDirectory(prefix="backend-latency-") as tmp:
        for size in args.sizes:
            found.append(measure(size, pool, args.queries, cluster, Path(tmp)))
    print(f"\nlatency through REST, ms p50 / p95, {args.queries} rounds alternating (recall budget {_BUDGET}; "
          f"context: a 19-message agent turn, window {WINDOW})")
    print("| chunks | set-up | POST /v1/recall | POST /v1/context |")
    print("|---|---|---|---|")
    for m in found:
        print("\n".join(latency_rows(m)))
    print("\nstorage: what is on disk (PostgreSQL: its tables and their indexes, after VACUUM)")
    print("| chunks | what | MB | bytes per chunk | GB per million chunks |")
    print("|---|---|---|---|---|")
    for m in found:
        print("\n".join(storage_rows(m)))
    print("\n| chunks | PostgreSQL build s | " + " | ".join(f"{n} MB idle / after / peak" for n in SETUPS) + " |")
    print("|---|---|" + "---|" * len(SETUPS))
    for m in found:
        built = "restored" if m.build_postgres_s is None else f"{m.build_postgres_s:.0f}"
        print(f"| {m.size:,} | {built} | " + " | ".join(
            "{:.0f} / {:.0f} / {:.0f}".format(*m.resident[n]) for n in SETUPS) + " |")


if __name__ == "__main__":
    main()
