"""Concurrency of the real service: client threads send mixed requests on loopback; no 5xx, no lock, nothing lost.

Each thread keeps a ledger of what the service acknowledged (and what it deleted); afterwards every acknowledged
write must still be there (and every deleted one gone). Besides, all threads write to, recall from and forget two
shared scratch namespaces (no ledger there: any thread may wipe them), and the stopped server's store must be
consistent (vectors = chunks, FTS rows = chunks, documents whole).

    .venv/bin/python -m bench.reliability_concurrency [--threads 8] [--requests 500] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.reliability_crash import consistency
from bench.server_process import ServerProcess, logged_errors
from memory.config import load_config
from memory.store import open_store, stored_identity

__all__ = ["KINDS", "ConcurrencyReport", "KindStats", "Ledger", "main", "run_load", "store_problems", "verify"]

KINDS = ("recall", "pin", "extract", "ingest", "task_item", "delete", "memories", "forget")
_WEIGHTS = (30, 12, 10, 12, 14, 8, 14, 2)
_SCRATCH = ("scratch-0", "scratch-1")  # shared by every thread, forgotten now and then by any of them
_QUERIES = ("How often does the billing export retry?", "When do the night trains stop?",
            "What should I keep in mind about the budget?", "预算是多少？", "Which backup checks run on Sunday?")
_FACTS = ("Keep the budget under {n} dollars.", "Never use Python 2 syntax.", "Please avoid jargon in your answers.",
          "以后预算不超过{n}元。", "I prefer answers in English.")
_TOPICS = ("The billing export retries a failed upload {n} times before paging the on-call engineer.",
           "The night trains to the coast stop running in December and return in spring, week {n}.",
           "The backup job copies the database to cold storage on Sunday and checks {n} hashes.")


@dataclass
class Ledger:
    """One thread's acknowledged writes and deletes, and the outcome of each of its requests."""

    namespace: str
    docs: dict[str, str] = field(default_factory=dict)  # doc id -> title of the last acknowledged version
    deleted_docs: set[str] = field(default_factory=set)
    pins: dict[str, str] = field(default_factory=dict)  # fact id -> key
    deleted_pins: set[str] = field(default_factory=set)
    extracted: set[str] = field(default_factory=set)
    items: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (task, text)
    ended: set[str] = field(default_factory=set)
    memories: set[str] = field(default_factory=set)
    outcomes: list[tuple[str, int, float, str]] = field(default_factory=list)  # kind, status, ms, body if not 2xx
    lost: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class KindStats:
    """Latency and status counts of one kind of request."""

    requests: int
    server_errors: int
    client_errors: int
    p50_ms: float
    p95_ms: float


@dataclass(frozen=True)
class ConcurrencyReport:
    """Totals of one run; server_errors, locked and lost must all be 0."""

    requests: int
    server_errors: int
    locked: int
    lost: tuple[str, ...]
    seconds: float
    kinds: dict[str, KindStats]
    problems: tuple[str, ...]  # 5xx bodies, bad answers and server-log tracebacks

    @property
    def throughput(self) -> float:
        """Requests per second over the whole run."""
        return self.requests / self.seconds


class _Worker:
    """One client thread: `requests` requests drawn from the mix, each checked and written to the ledger."""

    def __init__(self, url: str, index: int, requests: int, seed: int) -> None:
        self.index = index
        self.requests = requests
        self.rng = random.Random(seed * 1000 + index)
        self.ledger = Ledger(namespace=f"load-{index % 2}")  # four threads share each namespace
        self.client = httpx.Client(base_url=url, timeout=120.0)
        self.task = 0  # items go to task t<index>-task<task>; ending it moves on to the next number

    def run(self) -> None:
        """Send every request of this thread."""
        with self.client:
            for n in range(self.requests):
                kind = self.rng.choices(KINDS, _WEIGHTS)[0]
                getattr(self, "_" + kind)(n)

    def _send(self, kind: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        started = time.perf_counter()
        try:
            answer = self.client.request(method, path, **kwargs)
        except httpx.TransportError as exc:  # counted as a server error: the service dropped the connection
            answer = httpx.Response(599, text=f"transport error: {exc!r}")
        body = "" if answer.is_success else answer.text[:300]
        self.ledger.outcomes.append((kind, answer.status_code, (time.perf_counter() - started) * 1000, body))
        return answer

    def _recall(self, n: int) -> None:
        namespace = self.rng.choice(_SCRATCH) if n % 4 == 3 else self.ledger.namespace
        body: dict[str, Any] = {"namespace": namespace, "query": self.rng.choice(_QUERIES), "budget": 300}
        if self.ledger.items and n % 2:
            body["task_id"] = self.rng.choice(sorted({t for t, _ in self.ledger.items.values()}))
        answer = self._send("recall", "POST", "/v1/recall", json=body)
        if answer.is_success and answer.json()["used_tokens"] > 300:
            self.ledger.lost.append(f"recall over budget: {answer.json()['used_tokens']} > 300")

    def _pin(self, n: int) -> None:
        key = f"t{self.index}-k{n}"
        answer = self._send("pin", "POST", "/v1/facts/pin",
                            json={"namespace": self.ledger.namespace, "key": key, "value": f"value {n}"})
        if answer.is_success:
            self.ledger.pins.update((f["id"], key) for f in answer.json()["stored"])

    def _extract(self, n: int) -> None:
        text = self.rng.choice(_FACTS).format(n=100 + n)
        answer = self._send("extract", "POST", "/v1/facts", json={"namespace": self.ledger.namespace, "text": text})
        if answer.is_success:
            self.ledger.extracted.update(f["id"] for f in answer.json()["stored"])

    def _ingest(self, n: int) -> None:
        replace = self.ledger.docs and self.rng.random() < 0.3
        doc_id = self.rng.choice(sorted(self.ledger.docs)) if replace else f"t{self.index}-d{n}"
        title = f"{doc_id} at {n}"
        text = "\n\n".join(f"## Part {i}\n\n{t.format(n=n)} Written by thread {self.index}."
                           for i, t in enumerate(self.rng.sample(_TOPICS, 2)))
        answer = self._send("ingest", "POST", "/v1/documents",
                            json={"namespace": self.ledger.namespace, "doc_id": doc_id, "title": title, "text": text})
        if answer.is_success:
            self.ledger.docs[doc_id] = title

    def _task_item(self, n: int) -> None:
        task, text = f"t{self.index}-task{self.task}", f"Step {n}: thread {self.index} checked the loader output."
        answer = self._send("task_item", "POST", f"/v1/tasks/{task}/items",
                            json={"namespace": self.ledger.namespace, "kind": "note", "text": text})
        if answer.is_success:
            self.ledger.items[answer.json()["key"]] = (task, text)

    def _memories(self, n: int) -> None:
        messages = [{"text": f"Thread {self.index} turn {n}.{j}: the loader finished batch {n}.", "speaker": "Anna",
                     "timestamp": f"2024-01-{1 + n % 28:02d}T10:{j:02d}:00Z"} for j in range(1 + n % 2)]
        scratch = n % 3 == 2
        namespace = self.rng.choice(_SCRATCH) if scratch else self.ledger.namespace
        answer = self._send("memories", "POST", "/v1/memories", json={"namespace": namespace, "messages": messages})
        if answer.is_success and not scratch:
            self.ledger.memories.update(answer.json()["ids"])

    def _forget(self, n: int) -> None:
        self._send("forget", "DELETE", f"/v1/namespaces/{self.rng.choice(_SCRATCH)}")

    def _delete(self, n: int) -> None:
        ns, ledger = {"namespace": self.ledger.namespace}, self.ledger
        tasks = sorted({t for t, _ in ledger.items.values()} - ledger.ended)
        choice = self.rng.choice(("doc", "pin", "task"))
        if choice == "doc" and ledger.docs:
            doc_id = self.rng.choice(sorted(ledger.docs))
            answer, gone = self._send("delete", "DELETE", f"/v1/documents/{doc_id}", params=ns), doc_id
            if answer.is_success:
                del ledger.docs[doc_id]
                ledger.deleted_docs.add(doc_id)
        elif choice == "pin" and ledger.pins.keys() - ledger.deleted_pins:
            gone = self.rng.choice(sorted(ledger.pins.keys() - ledger.deleted_pins))
            answer = self._send("delete", "DELETE", f"/v1/facts/{gone}", params=ns)
            if answer.is_success:
                ledger.deleted_pins.add(gone)
        elif choice == "task" and tasks:
            gone = tasks[0]
            answer = self._send("delete", "DELETE", f"/v1/tasks/{gone}", params=ns)
            if answer.is_success:
                ledger.ended.add(gone)
                self.task += 1
        else:  # nothing of this kind to delete: an unknown document must answer 404
            answer, gone = self._send("delete", "DELETE", f"/v1/documents/none-{self.index}-{n}", params=ns), ""
            if answer.status_code != 404:
                ledger.lost.append(f"deleting an unknown document answered {answer.status_code}")
        if gone and answer.status_code == 404:
            ledger.lost.append(f"delete of acknowledged {choice} {gone}: 404")


def verify(client: httpx.Client, ledgers: list[Ledger]) -> list[str]:
    """Everything acknowledged is there, everything deleted is gone; one current version per fact key."""
    lost: list[str] = []
    for namespace in sorted({ledger.namespace for ledger in ledgers}):
        ns = {"namespace": namespace}
        docs = {d["doc_id"]: d["title"] for d in client.get("/v1/documents", params=ns).json()["documents"]}
        facts = client.get("/v1/facts", params=ns).json()["facts"]
        current = {f["id"] for f in facts}
        keys = [(f["scope"], f["key"]) for f in facts]
        lost += [f"{namespace}: two current versions of {k}" for k in set(keys) if keys.count(k) > 1]
        for ledger in (x for x in ledgers if x.namespace == namespace):
            lost += [f"document {d} ({t}) lost" for d, t in ledger.docs.items() if docs.get(d) != t]
            lost += [f"deleted document {d} is back" for d in ledger.deleted_docs - set(ledger.docs) if d in docs]
            lost += [f"memory {m} lost" for m in ledger.memories if m not in docs]
            lost += [f"pinned fact {f} lost" for f in ledger.pins.keys() - ledger.deleted_pins if f not in current]
            lost += [f"deleted fact {f} is back" for f in ledger.deleted_pins if f in current]
            for fact in sorted(ledger.extracted):
                got = client.get(f"/v1/facts/{fact}/history", params=ns)
                if not got.is_success or fact not in {f["id"] for f in got.json()["facts"]}:
                    lost.append(f"extracted fact {fact} lost ({got.status_code})")
            for task in sorted({t for t, _ in ledger.items.values()}):
                got = client.get(f"/v1/tasks/{task}/items", params=ns)
                have = {i["key"]: i["text"] for i in got.json().get("items", [])} if got.is_success else {}
                if task in ledger.ended:
                    lost += [f"ended task {task} still answers"] if got.is_success else []
                    continue
                lost += [f"task item {k} lost" for k, (t, text) in ledger.items.items()
                         if t == task and have.get(k) != text]
    return lost


def _stats(samples: list[tuple[str, int, float, str]]) -> KindStats:
    ms = sorted(s[2] for s in samples)
    p95 = statistics.quantiles(ms, n=20, method="inclusive")[18] if len(ms) > 1 else ms[0]
    return KindStats(len(ms), sum(s[1] >= 500 for s in samples), sum(400 <= s[1] < 500 for s in samples),
                     statistics.median(ms), p95)


def run_load(url: str, threads: int, requests: int, seed: int = 0,
             server_log: Callable[[], str] = str) -> ConcurrencyReport:
    """Run `threads` workers of `requests` requests each against `url`, then verify their ledgers."""
    workers = [_Worker(url, i, requests, seed) for i in range(threads)]
    runners = [threading.Thread(target=w.run, name=f"client-{w.index}") for w in workers]
    started = time.perf_counter()
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join()
    seconds = time.perf_counter() - started
    ledgers = [w.ledger for w in workers]
    with httpx.Client(base_url=url, timeout=120.0) as client:
        lost = [p for ledger in ledgers for p in ledger.lost] + verify(client, ledgers)
    outcomes = [o for ledger in ledgers for o in ledger.outcomes]
    log = server_log()
    problems = [f"{k} {s}: {b}" for k, s, _, b in outcomes if s >= 500]
    problems += [f"server log: {line}" for line in logged_errors(log)]
    locked = sum("database is locked" in b for *_, b in outcomes) + log.count("database is locked")
    kinds = {k: _stats([o for o in outcomes if o[0] == k]) for k in KINDS if any(o[0] == k for o in outcomes)}
    return ConcurrencyReport(len(outcomes), sum(o[1] >= 500 for o in outcomes), locked, tuple(lost), seconds, kinds,
                             tuple(problems))


def store_problems(data_dir: Path) -> list[str]:
    """Consistency of a stopped server's store, opened as it is (no repair): see reliability_crash.consistency."""
    config = load_config().replace("service", data_dir=str(data_dir))
    found = stored_identity(config)
    if found is None:
        return [f"no store in {data_dir}"]
    store = open_store(config, found.embedder)
    try:
        return consistency(store)
    finally:
        store.close()


def main() -> None:
    """Start a fresh server, run the load, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--requests", type=int, default=500, help="requests per thread")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="work in this new folder and keep it (store, server.log)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = args.keep or Path(folder)
        root.mkdir(parents=True, exist_ok=True)
        with ServerProcess(root / "data", root / "server.log") as server:
            report = run_load(server.url, args.threads, args.requests, args.seed, server.log_text)
        torn = store_problems(root / "data")
    print(f"{'kind':<11}{'requests':>9}{'4xx':>6}{'5xx':>6}{'p50 ms':>9}{'p95 ms':>9}")
    for kind, s in report.kinds.items():
        print(f"{kind:<11}{s.requests:>9}{s.client_errors:>6}{s.server_errors:>6}{s.p50_ms:>9.1f}{s.p95_ms:>9.1f}")
    print(f"\n{args.threads} threads x {args.requests} requests: {report.requests} requests in {report.seconds:.1f} s, "
          f"{report.throughput:.1f} req/s; 5xx {report.server_errors}, database locked {report.locked}, "
          f"lost writes {len(report.lost)}, store inconsistencies {len(torn)}")
    for line in [*report.problems, *report.lost, *torn][:40]:
        print("  " + line)


if __name__ == "__main__":
    main()
