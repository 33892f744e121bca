"""Crash consistency of the real service: SIGKILL `memory serve` while it ingests, replaces, pins and adds task items.

After each kill the store is checked twice: a copy is opened in-process exactly as the service opens it (repair
included) and every document is checked whole at one revision (SQLite rows, FTS5 rows, Chroma vectors, both
retrievers); then the service restarts on the real folder and its REST view is checked, including every fact and
task item it acknowledged before the kill.

    .venv/bin/python -m bench.reliability_crash [--trials 25] [--max-delay 1.5] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.server_process import ServerProcess, logged_errors
from memory.config import load_config
from memory.embedding import Embedder, load_embedder
from memory.experience import DocumentInfo, lexical
from memory.experience.dense import VectorIndex
from memory.experience.model import content_hash, indexed_text
from memory.service import Memory
from memory.store import Store, open_store

__all__ = ["NS", "CrashReport", "Ledger", "check_service", "check_store", "doc_text", "main", "run_trials", "title"]

NS = "crash"
POOL = 4  # document ids d0..d3 are replaced again and again; every fourth write creates a new document
_TOPICS = (
    "The billing service exports invoices every night and retries a failed upload three times.",
    "Our garden club plants tomatoes in May and waters them deeply twice a week in summer.",
    "The railway timetable changes in December, when the night trains to the coast stop.",
    "The dumpling recipe needs pork, cabbage and a thin dough rested for half an hour.",
    "Our backup job copies the database to cold storage every Sunday and checks the hashes.",
    "The violin teacher asks for thirty minutes of scales before any new piece is tried.",
)


def marker(doc_id: str, rev: int) -> str:
    """The one-token word that only revision `rev` of `doc_id` contains (in every chunk)."""
    return f"zq{doc_id}r{rev}"


def sections(doc_id: str, rev: int) -> list[str]:
    """Chunk bodies of a revision: 2 or 3 sections (one chunk each), so a swap also changes the chunk count."""
    start = sum(map(ord, doc_id)) + rev
    return [f"Marker {marker(doc_id, rev)}. {_TOPICS[(start + i) % len(_TOPICS)]} Revision {rev} of {doc_id}."
            for i in range(2 + rev % 2)]


def doc_text(doc_id: str, rev: int) -> str:
    """The markdown of a revision: one `##` section per chunk."""
    return "\n\n".join(f"## Part {i}\n\n{body}" for i, body in enumerate(sections(doc_id, rev)))


def title(doc_id: str, rev: int) -> str:
    """The title that names the revision (read back to tell which revision is stored)."""
    return f"{doc_id} r{rev}"


@dataclass
class Ledger:
    """What the client sent and what the service acknowledged; `revision` is the state last verified."""

    revision: dict[str, int] = field(default_factory=dict)  # doc id -> stored revision (0 = absent)
    acked: dict[str, int] = field(default_factory=dict)  # since the last check
    inflight: dict[str, int] = field(default_factory=dict)  # sent, answer not seen
    replacing: bool = False  # the in-flight document write replaces a stored document
    next_rev: dict[str, int] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)  # acknowledged fact id -> key
    items: dict[str, tuple[str, str]] = field(default_factory=dict)  # acknowledged item key -> (task, text)
    doc_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def allowed(self, doc_id: str) -> set[int]:
        """Revisions the document may be at now: the acknowledged (or last verified) one, or the in-flight one."""
        base = self.acked.get(doc_id, self.revision.get(doc_id, 0))
        return {base} | ({self.inflight[doc_id]} if doc_id in self.inflight else set())


@dataclass(frozen=True)
class CrashReport:
    """Totals over all trials; `inconsistencies` must be empty."""

    trials: int
    kills_during_replacement: int
    torn_by_kill: int  # kills that left Chroma and SQLite apart (between a vector write and its SQLite swap)
    acked_documents: int
    acked_facts: int
    acked_items: int
    inconsistencies: tuple[str, ...]


def _post_document(client: httpx.Client, ledger: Ledger, doc_id: str) -> bool:
    rev = ledger.next_rev.get(doc_id, 1)
    ledger.next_rev[doc_id] = rev + 1
    ledger.replacing = ledger.acked.get(doc_id, ledger.revision.get(doc_id, 0)) > 0
    ledger.inflight[doc_id] = rev
    started = time.perf_counter()
    try:
        answer = client.post("/v1/documents", json={"namespace": NS, "doc_id": doc_id, "title": title(doc_id, rev),
                                                    "text": doc_text(doc_id, rev)})
    except httpx.TransportError:
        return False  # killed: the write stays in flight
    del ledger.inflight[doc_id]
    if answer.status_code == 200:
        ledger.acked[doc_id] = rev
        ledger.doc_ms.append((time.perf_counter() - started) * 1000)
    else:
        ledger.errors.append(f"POST /v1/documents {doc_id} r{rev}: {answer.status_code} {answer.text[:200]}")
    return True


def _write_documents(client: httpx.Client, ledger: Ledger, trial: int) -> None:
    n = 0
    while _post_document(client, ledger, f"n{trial}x{n}" if n % 4 == 3 else f"d{n % POOL}"):
        n += 1


def _write_notes(client: httpx.Client, ledger: Ledger, trial: int) -> None:
    n = 0
    while True:
        try:
            if n % 2:
                task = f"crash-t{trial}"
                text = f"Note {n} of trial {trial}."
                answer = client.post(f"/v1/tasks/{task}/items", json={"namespace": NS, "kind": "note", "text": text})
                if answer.status_code == 200:
                    ledger.items[answer.json()["key"]] = (task, text)
            else:
                key = f"crash-k{trial}-{n}"
                answer = client.post("/v1/facts/pin", json={"namespace": NS, "key": key, "value": f"value {n}"})
                if answer.status_code == 200:
                    ledger.facts.update((f["id"], key) for f in answer.json()["stored"])
        except httpx.TransportError:
            return
        if answer.status_code != 200:
            ledger.errors.append(f"{answer.request.url.path}: {answer.status_code} {answer.text[:200]}")
        n += 1


def _kill_under_load(server: ServerProcess, ledger: Ledger, trial: int, delay: float, jitter: float,
                     target_replacement: bool) -> bool:
    """Run both writers, SIGKILL the server after `delay` (then, if asked, inside a replacement); True if it was."""
    clients = [httpx.Client(base_url=server.url, timeout=60.0) for _ in range(2)]
    writers = [threading.Thread(target=w, args=(c, ledger, trial), daemon=True)
               for w, c in zip((_write_documents, _write_notes), clients, strict=True)]
    for writer in writers:
        writer.start()
    time.sleep(delay)
    deadline = time.monotonic() + 10
    while target_replacement and time.monotonic() < deadline:
        if ledger.inflight and ledger.replacing:
            time.sleep(jitter)  # somewhere inside the write, not always at its start
            if ledger.inflight and ledger.replacing:
                break
            jitter /= 2  # that write ended first: aim earlier inside the next one
        time.sleep(0.002)
    during = bool(ledger.inflight) and ledger.replacing
    server.kill()
    for writer in writers:
        writer.join(timeout=60)
    for client in clients:
        client.close()
    return during


def check_store(memory: Memory, ledger: Ledger, touched: set[str]) -> tuple[list[str], dict[str, int]]:
    """Deep check of an opened (and so repaired) store; returns problems and the revision of every document."""
    db = memory.store.db
    problems: list[str] = []
    observed: dict[str, int] = {}
    stored = {d.doc_id: d for d in memory.experience.list_documents(NS)}
    known = set(ledger.revision) | set(ledger.acked) | set(ledger.inflight)
    problems += [f"{d}: stored but never sent" for d in set(stored) - known]
    for doc_id in sorted(known):
        info = stored.get(doc_id)
        rev = int(info.title.rsplit("r", 1)[1]) if info and info.title else 0
        observed[doc_id] = rev
        if rev not in ledger.allowed(doc_id):
            problems.append(f"{doc_id}: at revision {rev}, expected one of {sorted(ledger.allowed(doc_id))}")
        elif info is not None:
            problems += _check_document(memory, info, rev, doc_id in touched)
        if doc_id in touched:
            for old in ledger.allowed(doc_id) - {0, rev}:
                if lexical.search(db, NS, (marker(doc_id, old),), 50):
                    problems.append(f"{doc_id}: revision {old} is still in the lexical index beside r{rev}")
    return problems + consistency(memory.store), observed


def consistency(store: Store) -> list[str]:
    """Store-wide invariants: each namespace's vectors are exactly its chunks; each document has all its chunks,
    of its own version, each with one FTS row."""
    db = store.db
    names = {r[0] for r in db.execute("SELECT namespace FROM chunks UNION SELECT namespace FROM documents")}
    for collection in store.chroma.list_collections():
        name = str(getattr(collection, "name", collection))
        names.add(str((store.chroma.get_collection(name, embedding_function=None).metadata or {}).get("namespace")))
    out = []
    for name in sorted(names - {"None"}):
        chunks = {r[0] for r in db.execute("SELECT id FROM chunks WHERE namespace = ?", [name]).fetchall()}
        vectors = VectorIndex(store).ids(name)
        if chunks != vectors:
            out.append(f"{name}: {len(vectors - chunks)} vectors without a chunk, {len(chunks - vectors)} chunks "
                       "without a vector")
    torn = db.execute(
        "SELECT d.namespace, d.doc_id, d.version, d.chunk_count, count(c.id), min(c.doc_version), max(c.doc_version) "
        "FROM documents d LEFT JOIN chunks c ON c.namespace = d.namespace AND c.doc_id = d.doc_id "
        "GROUP BY d.namespace, d.doc_id HAVING count(c.id) != d.chunk_count OR min(c.doc_version) IS NOT d.version "
        "OR max(c.doc_version) IS NOT d.version").fetchall()
    out += [f"{ns}/{doc}: document v{v} of {n} chunks has {rows} rows of versions {lo}..{hi}"
            for ns, doc, v, n, rows, lo, hi in torn]
    for what, sql in (
        ("chunks without a document", ("SELECT count(*) FROM chunks c LEFT JOIN documents d "
                                       "ON d.namespace = c.namespace AND d.doc_id = c.doc_id WHERE d.doc_id IS NULL")),
        ("chunks without an FTS row", "SELECT count(*) FROM chunks WHERE rowid NOT IN (SELECT rowid FROM chunks_fts)"),
        ("FTS rows without a chunk", "SELECT count(*) FROM chunks_fts WHERE rowid NOT IN (SELECT rowid FROM chunks)"),
    ):
        count = db.execute(sql).fetchone()[0]
        out += [f"{count} {what}"] if count else []
    return out


def _check_document(memory: Memory, info: DocumentInfo, rev: int, retrieve: bool) -> list[str]:
    """One stored document: its hash and chunk texts are r`rev`'s, its marker finds them, and (if asked) so do both
    retrievers given each chunk's own text."""
    doc_id, db = info.doc_id, memory.store.db
    out = []
    want = content_hash(doc_text(doc_id, rev), title=title(doc_id, rev), source=None, metadata={}, project=None,
                        tags=[], updated_at=None)
    rows = db.execute("SELECT id, text, heading FROM chunks WHERE namespace = ? AND doc_id = ? ORDER BY ordinal",
                      [NS, doc_id]).fetchall()
    if info.content_hash != want or [r[1] for r in rows] != sections(doc_id, rev):
        out.append(f"{doc_id} r{rev}: chunk texts or hash are not those of r{rev}: {[r[1][:40] for r in rows]}")
    ids = {r[0] for r in rows}
    found = {h.chunk_id for h in lexical.search(db, NS, (marker(doc_id, rev),), 50)}
    if found != ids:
        out.append(f"{doc_id} r{rev}: lexical index finds {len(found)} of its {len(ids)} chunks by its marker")
    for chunk, text, heading in rows if retrieve else []:
        seen = memory.experience.explain(NS, indexed_text(text, heading), k=3)
        if not seen.dense or seen.dense[0].chunk_id != chunk or chunk not in {h.chunk_id for h in seen.lexical}:
            out.append(f"{doc_id} r{rev}: chunk {chunk} is not found by both retrievers with its own text")
    return out


def check_service(client: httpx.Client, ledger: Ledger) -> list[str]:
    """The restarted service's view: document revisions, and every acknowledged fact and task item."""
    out = []
    for doc_id, rev in sorted(ledger.revision.items()):
        got = client.get(f"/v1/documents/{doc_id}", params={"namespace": NS})
        if (got.status_code == 404) != (rev == 0) or (rev and (got.json().get("title"), got.json().get("chunks"))
                                                     != (title(doc_id, rev), len(sections(doc_id, rev)))):
            out.append(f"service: {doc_id} should be at r{rev}, answers {got.status_code} {got.text[:120]}")
    facts = {f["id"] for f in client.get("/v1/facts", params={"namespace": NS}).json()["facts"]}
    out += [f"service: acknowledged fact {i} ({k}) is lost" for i, k in ledger.facts.items() if i not in facts]
    for task in sorted({t for t, _ in ledger.items.values()}):
        got = client.get(f"/v1/tasks/{task}/items", params={"namespace": NS}).json().get("items", [])
        have = {i["key"]: i["text"] for i in got}
        out += [f"service: acknowledged task item {k} is lost" for k, (t, text) in ledger.items.items()
                if t == task and have.get(k) != text]
    return out


def _deep_check(data: Path, scratch: Path, embedder: Embedder, ledger: Ledger, touched: set[str],
                ) -> tuple[list[str], dict[str, int], bool]:
    """Copy the killed service's folder and open the copy as the service would (repair runs), then check it.

    Also tells whether the kill left Chroma and SQLite apart before that repair.
    """
    shutil.copytree(data, scratch)
    config = load_config().replace("service", data_dir=str(scratch))
    try:
        store = open_store(config, embedder.identity)
        try:
            known = {r[0] for r in store.db.execute("SELECT id FROM chunks WHERE namespace = ?", [NS]).fetchall()}
            torn = VectorIndex(store).ids(NS) != known
        finally:
            store.close()
        with Memory(config, embedder=embedder) as memory:
            return (*check_store(memory, ledger, touched), torn)
    finally:
        from chromadb.api.shared_system_client import SharedSystemClient

        SharedSystemClient.clear_system_cache()  # the copy's Chroma is never opened again
        shutil.rmtree(scratch, ignore_errors=True)


def run_trials(trials: int, root: Path, embedder: Embedder, *, seed: int = 0, max_delay: float = 1.5,
               progress: Callable[[str], None] | None = None) -> CrashReport:
    """Seed the pool, then `trials` times: write under load, SIGKILL, check the store, restart, check the service."""
    rng = random.Random(seed)
    ledger = Ledger()
    server = ServerProcess(root / "data", root / "server.log")
    server.start()
    problems: list[str] = []
    replacing = torn = 0
    try:
        with httpx.Client(base_url=server.url, timeout=60.0) as client:
            for i in range(POOL):
                _post_document(client, ledger, f"d{i}")
        ledger.revision, ledger.acked = dict(ledger.acked), {}
        for trial in range(trials):
            jitter = rng.uniform(0, statistics.median(ledger.doc_ms) / 1000)
            replacing += _kill_under_load(server, ledger, trial, rng.uniform(0.05, max_delay), jitter, trial % 2 == 1)
            touched = set(ledger.acked) | set(ledger.inflight)
            found, observed, was_torn = _deep_check(root / "data", root / "check", embedder, ledger, touched)
            torn += was_torn
            problems += [f"trial {trial}: {p}" for p in found + ledger.errors]
            ledger.revision, ledger.acked, ledger.inflight, ledger.errors = observed, {}, {}, []
            server.start()
            with httpx.Client(base_url=server.url, timeout=60.0) as client:
                problems += [f"trial {trial}: {p}" for p in check_service(client, ledger)]
            if progress:
                progress(f"trial {trial + 1}/{trials}: {len(problems)} inconsistencies so far")
    finally:
        server.stop()
    problems += [f"server log: {line}" for line in logged_errors(server.log_text())]
    return CrashReport(trials, replacing, torn, len(ledger.doc_ms) - POOL, len(ledger.facts), len(ledger.items),
                       tuple(problems))


def main() -> None:
    """Run the trials and print what they found."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=25)
    parser.add_argument("--max-delay", type=float, default=1.5, help="longest wait (s) before a kill")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="work in this new folder and keep it (store, server.log)")
    args = parser.parse_args()
    embedder = load_embedder(load_config().embedding)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        root = args.keep or Path(folder)
        root.mkdir(parents=True, exist_ok=True)
        report = run_trials(args.trials, root, embedder, seed=args.seed, max_delay=args.max_delay, progress=print)
    print(f"\n{'trials':<34}{report.trials:>8}")
    print(f"{'kills during a replacement':<34}{report.kills_during_replacement:>8}")
    print(f"{'kills between vectors and SQLite':<34}{report.torn_by_kill:>8}")
    print(f"{'document writes acknowledged':<34}{report.acked_documents:>8}")
    print(f"{'facts acknowledged':<34}{report.acked_facts:>8}")
    print(f"{'task items acknowledged':<34}{report.acked_items:>8}")
    print(f"{'inconsistencies found':<34}{len(report.inconsistencies):>8}")
    print(f"{'wall time (s)':<34}{time.perf_counter() - started:>8.0f}")
    for problem in report.inconsistencies:
        print("  " + problem)


if __name__ == "__main__":
    main()
