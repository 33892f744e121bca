"""`memory serve` replicas on one PostgreSQL database and one Chroma server, through REST: what one acknowledges
the next request to another reads, in English and Chinese; concurrent writers and readers across replicas lose
nothing and read each other's writes; a replica killed with SIGKILL in the middle of ingesting, or of running an
ingest job, leaves the others a consistent store (the job finished by another); and a tenant's API key reaches
nothing of another tenant's on any replica."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest

from bench.chroma_server import ChromaServer
from bench.postgres_cluster import PostgresCluster
from bench.server_process import ServerProcess, logged_errors
from tests.conftest import fresh_database

TEXTS = {
    "en": ("The nightly loader reads the billing CSV exports from S3 and retries a failed batch twice.",
           "How does the loader get the billing data?", "Never use Python 2 syntax."),
    "zh": ("夜间加载器从S3读取账单CSV导出文件，失败的批次会重试两次。", "加载器从哪里读取账单数据？", "以后不要用Python 2的语法。"),
}

# Every request of these tests carries a key: one for every namespace, and one per tenant (namespaces a-*, b-*).
ADMIN, TENANT_A, TENANT_B = "k-admin-3c9e71", "k-tenant-a-5d20", "k-tenant-b-8e41"
# The shortest lease allowed: a killed replica's job moves on within seconds instead of minutes.
LEASE_S = 10


class Replicas(list[ServerProcess]):
    """The three running replicas, and the URL of the database they share (to read what the API does not say)."""

    def __init__(self, servers: list[ServerProcess], url: str) -> None:
        super().__init__(servers)
        self.url = url

    def sql(self, statement: str, *params: object) -> Any:
        """The first row of a query of the shared database."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            return conn.execute(statement, params).fetchone()


@pytest.fixture(scope="module")
def replicas(postgres: PostgresCluster, chroma_server: ChromaServer,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicas]:
    """Three `memory serve` processes, each with its own data folder, on one database and one Chroma server (the
    tests use namespaces of their own). A test that kills one starts it again."""
    tmp_path = tmp_path_factory.mktemp("replicas")
    url = fresh_database(postgres)
    config = tmp_path / "shared.toml"
    config.write_text(
        f'[store]\nurl = "{url}"\n\n[chroma]\nhost = "127.0.0.1"\nport = {chroma_server.port}\n\n'
        f'[jobs]\nlease_s = {LEASE_S}\n\n'
        f'[auth.keys]\n"{ADMIN}" = ["*"]\n"{TENANT_A}" = ["a-*"]\n"{TENANT_B}" = ["b-*"]\n', encoding="utf-8")
    servers = [ServerProcess(tmp_path / f"data-{i}", tmp_path / f"server-{i}.log", config) for i in range(3)]
    try:
        for server in servers:
            server.start()
        yield Replicas(servers, url)
    finally:
        for server in servers:
            server.stop()
    for server in servers:
        assert logged_errors(server.log_text()) == []


def _call(server: ServerProcess, method: str, path: str, key: str = ADMIN, **kwargs: Any) -> httpx.Response:
    return httpx.request(method, server.url + path, headers={"Authorization": f"Bearer {key}"}, timeout=120,
                         **kwargs)


def _post(server: ServerProcess, path: str, body: dict[str, object], key: str = ADMIN) -> dict[str, Any]:
    answer = _call(server, "POST", path, key, json=body)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def _get(server: ServerProcess, path: str, key: str = ADMIN, **params: object) -> dict[str, Any]:
    answer = _call(server, "GET", path, key, params=params)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_a_write_acknowledged_by_one_replica_is_read_by_the_next(replicas: Replicas, lang: str) -> None:
    text, question, rule = TEXTS[lang]
    namespace = f"{lang}-{uuid.uuid4().hex[:8]}"
    a, b, c = replicas
    _post(a, "/v1/documents", {"namespace": namespace, "text": text, "doc_id": "notes/loader.md"})
    _post(b, "/v1/facts/pin", {"namespace": namespace, "text": rule})
    for server in (c, a, b):
        recalled = _post(server, "/v1/recall", {"namespace": namespace, "query": question, "budget": 600})
        assert text in str(recalled["rendered"]) and "Python 2" in str(recalled["rendered"])
    assert _call(c, "DELETE", f"/v1/namespaces/{namespace}").status_code == 200
    for server in replicas:
        recalled = _post(server, "/v1/recall", {"namespace": namespace, "query": question, "budget": 600})
        assert recalled["items"] == []
        listed = _get(server, "/v1/documents", namespace=namespace)
        assert listed["documents"] == [] and listed["total"] == 0


def test_writers_and_readers_on_every_replica_lose_nothing(replicas: Replicas) -> None:
    """8 threads write through every replica at once, each reading its write back through another replica at
    once (recall, while the others write); then every replica lists and finds (lexical and dense) all 48."""
    namespace = f"busy-{uuid.uuid4().hex[:8]}"
    failures: list[str] = []
    start = threading.Barrier(8)

    def work(worker: int) -> None:
        writer = replicas[worker % len(replicas)]
        start.wait()
        for n in range(6):
            mark = f"zq{worker}x{n}k"  # a word of this note alone, which recall must find it by
            body = {"namespace": namespace, "doc_id": f"w{worker}/n{n}.md",
                    "text": f"Worker {worker} filed note {n} under {mark}. 第{worker}号工人的第{n}条笔记归档为{mark}。"}
            answer = _call(writer, "POST", "/v1/documents", json=body)
            if answer.status_code != 200:
                failures.append(answer.text)
                continue
            reader = replicas[(worker + 1 + n % 2) % len(replicas)]  # never the replica that wrote it
            found = _call(reader, "POST", "/v1/recall",
                          json={"namespace": namespace, "query": f"which note is filed under {mark}?", "budget": 300})
            if found.status_code != 200 or not any(mark in item["text"] for item in found.json()["items"]):
                failures.append(f"{mark} written on {writer.port} not recalled on {reader.port}: {found.text}")

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    wanted = {f"w{w}/n{n}.md" for w in range(8) for n in range(6)}
    for server in replicas:
        listed = _get(server, "/v1/documents", namespace=namespace)
        assert listed["total"] == 48 and {d["doc_id"] for d in listed["documents"]} == wanted
        hits = _post(server, "/v1/search", {"namespace": namespace, "query": "worker note", "k": 100})["results"]
        assert {h["doc_id"] for h in hits} == wanted and all(h["dense"] for h in hits)  # every vector is there


def test_a_replica_killed_mid_ingest_leaves_the_others_a_whole_store(replicas: Replicas) -> None:
    namespace = f"killed-{uuid.uuid4().hex[:8]}"
    a, b, _ = replicas
    long = "\n\n".join(f"## Part {i}\n\nThe loader's part {i} streams rows. 加载器的第{i}部分按行读取。" for i in range(400))

    def ingest() -> None:
        try:
            _call(a, "POST", "/v1/documents", json={"namespace": namespace, "text": long, "doc_id": "big.md"})
        except httpx.TransportError:  # the replica was killed while it worked: no answer is the point
            pass

    sent = threading.Thread(target=ingest, daemon=True)
    sent.start()
    sent.join(timeout=1.5)  # the ingest is under way (embedding 400 parts takes longer)
    a.kill()
    try:
        listed = _get(b, "/v1/documents", namespace=namespace)
        if listed["total"]:  # it finished before the kill: whole
            assert listed["documents"][0]["chunks"] >= 1
        chunks = _post(b, "/v1/search", {"namespace": namespace, "query": "loader part streams rows",
                                         "k": 50})["results"]
        documents = {d["doc_id"]: d["chunks"] for d in listed["documents"]}
        assert all(h["doc_id"] in documents for h in chunks)  # nothing searchable of a document not stored
        _post(b, "/v1/documents", {"namespace": namespace, "text": "After the kill. 杀掉之后。", "doc_id": "after.md"})
    finally:
        a.start()  # the killed replica comes back on the same store (and the tests after this one have three)
    recalled = _post(a, "/v1/recall", {"namespace": namespace, "query": "after the kill", "budget": 300})
    assert "After the kill" in str(recalled["rendered"])


LEDGER = "\n\n".join(f"## Part {i}\n\nThe ledger's part {i} settles the invoices of day {i} every night. "
                     f"账本的第{i}部分每晚结算第{i}天的发票。" for i in range(800))


def test_a_job_whose_replica_is_killed_is_finished_by_another(replicas: Replicas) -> None:
    """SIGKILL the replica whose worker runs a job: nothing of the document shows meanwhile, another replica
    takes the job over once its lease runs out and stores the document whole, and every replica reads it."""
    namespace = f"job-{uuid.uuid4().hex[:8]}"
    answer = _call(replicas[0], "POST", "/v1/documents", params={"background": "true"},
                   json={"namespace": namespace, "text": LEDGER, "doc_id": "ledger.md"})
    assert answer.status_code == 202, answer.text
    job_id = answer.json()["job_id"]
    deadline = time.monotonic() + 120
    while (job := _get(replicas[1], f"/v1/jobs/{job_id}", namespace=namespace))["done"] == 0:  # no report yet
        assert job["state"] in ("queued", "running") and time.monotonic() < deadline, job
        time.sleep(0.1)
    # Long enough to be reported half-way: killed in the middle of its embedding, not at its write.
    assert job["state"] == "running" and job["done"] < job["total"], job
    owner = replicas.sql("SELECT owner FROM jobs WHERE id = %s", job_id)[0]
    killed = next(s for s in replicas if owner.startswith(f"p{s.pid}-"))  # the lease's owner names its process
    killed.kill()
    try:
        survivors = [s for s in replicas if s is not killed]
        for server in survivors:  # its rows and vectors come together or not at all
            assert _get(server, "/v1/documents", namespace=namespace)["total"] == 0
            assert _post(server, "/v1/search", {"namespace": namespace, "query": "ledger invoices",
                                                "k": 10})["results"] == []
        deadline = time.monotonic() + 6 * LEASE_S + 120  # the lease, a survivor's look, and the whole job again
        while (job := _get(survivors[0], f"/v1/jobs/{job_id}", namespace=namespace))["state"] != "done":
            assert job["state"] in ("queued", "running") and time.monotonic() < deadline, job
            time.sleep(0.2)
        assert job["doc_id"] == "ledger.md" and job["status"] == "created" and job["chunks"] > 1
        taker = replicas.sql("SELECT owner FROM jobs WHERE id = %s", job_id)[0]
        assert any(taker.startswith(f"p{s.pid}-") for s in survivors)
        assert replicas.sql("SELECT count(*) FROM chunks WHERE namespace = %s", namespace)[0] == job["chunks"]
    finally:
        killed.start()  # back on the same store, for the tests after this one
    for server in replicas:
        stored = _get(server, "/v1/documents/ledger.md", namespace=namespace)
        assert (stored["version"], stored["chunks"]) == (1, job["chunks"])  # written once, whole
        hits = _post(server, "/v1/search", {"namespace": namespace, "query": "ledger part 217 invoices", "k": 100})
        assert hits["results"] and {h["doc_id"] for h in hits["results"]} == {"ledger.md"}
        recalled = _post(server, "/v1/recall", {"namespace": namespace, "query": "账本的第217部分结算什么？", "budget": 400})
        assert "第217部分" in str(recalled["rendered"])


def test_a_tenants_key_reaches_nothing_of_another_tenant_on_any_replica(replicas: Replicas) -> None:
    """Tenant B writes through two replicas (EN and ZH documents, pinned rules, a job); tenant A's key, on every
    replica, can neither read, list, recall, search, overwrite nor delete any of it (404, as if absent)."""
    tag = uuid.uuid4().hex[:8]
    mine, theirs = f"a-{tag}", f"b-{tag}"
    for lang, (text, _, rule) in TEXTS.items():
        _post(replicas[1], "/v1/documents", {"namespace": theirs, "text": text, "doc_id": f"{lang}.md"}, TENANT_B)
        _post(replicas[2], "/v1/facts/pin", {"namespace": theirs, "text": rule}, TENANT_B)
    queued = _call(replicas[2], "POST", "/v1/documents", TENANT_B, params={"background": "true"},
                   json={"namespace": theirs, "text": "B's plan: ship the ledger on Friday. 乙方计划周五发布账本。",
                         "doc_id": "plan.md"})
    assert queued.status_code == 202, queued.text
    job_id = queued.json()["job_id"]
    deadline = time.monotonic() + 120
    while _get(replicas[2], f"/v1/jobs/{job_id}", TENANT_B, namespace=theirs)["state"] != "done":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    _post(replicas[0], "/v1/documents", {"namespace": mine, "text": "A's own note on tide tables. 甲方的潮汐表笔记。",
                                         "doc_id": "tides.md"}, TENANT_A)
    fact_id = _get(replicas[1], "/v1/facts", TENANT_B, namespace=theirs)["facts"][0]["id"]
    refused = [
        ("GET", "/v1/documents", {"params": {"namespace": theirs}}),
        ("GET", "/v1/documents/en.md", {"params": {"namespace": theirs}}),
        ("GET", "/v1/documents/en.md", {"params": {"namespace": mine}}),  # ids do not cross namespaces
        ("POST", "/v1/recall", {"json": {"namespace": theirs, "query": TEXTS["en"][1]}}),
        ("POST", "/v1/recall", {"json": {"namespace": theirs, "query": TEXTS["zh"][1]}}),
        ("POST", "/v1/search", {"json": {"namespace": theirs, "query": "billing 账单"}}),
        ("GET", "/v1/facts", {"params": {"namespace": theirs}}),
        ("GET", f"/v1/facts/{fact_id}/history", {"params": {"namespace": theirs}}),
        ("GET", "/v1/jobs", {"params": {"namespace": theirs}}),
        ("GET", f"/v1/jobs/{job_id}", {"params": {"namespace": theirs}}),
        ("GET", f"/v1/jobs/{job_id}", {"params": {"namespace": mine}}),
        ("POST", "/v1/documents", {"json": {"namespace": theirs, "text": "Overwritten. 覆盖。", "doc_id": "en.md"}}),
        ("DELETE", "/v1/documents/zh.md", {"params": {"namespace": theirs}}),
        ("DELETE", f"/v1/facts/{fact_id}", {"params": {"namespace": theirs}}),
        ("DELETE", f"/v1/facts/{fact_id}", {"params": {"namespace": mine}}),
        ("DELETE", f"/v1/jobs/{job_id}", {"params": {"namespace": theirs}}),
        ("DELETE", f"/v1/namespaces/{theirs}", {}),
    ]
    for server in replicas:
        for method, path, kwargs in refused:
            answer = _call(server, method, path, TENANT_A, **kwargs)
            assert answer.status_code == 404, (server.port, method, path, answer.text)
        for text, question, _ in TEXTS.values():  # B's words asked in A's own namespace find nothing of B's
            recalled = _post(server, "/v1/recall", {"namespace": mine, "query": question, "budget": 600}, TENANT_A)
            assert text not in str(recalled) and "Python 2" not in str(recalled)
        counts = _get(server, "/healthz", TENANT_A)["counts"]  # a scoped key's store-wide view is its own
        assert (counts["namespaces"], counts["documents"], counts["facts"]) == (1, 1, 0)
        assert _call(server, "GET", "/v1/documents", "k-nobody-0000", params={"namespace": theirs}).status_code == 401
    for server in replicas:  # and B's own key still finds all of it, through every replica
        listed = _get(server, "/v1/documents", TENANT_B, namespace=theirs)
        assert {d["doc_id"] for d in listed["documents"]} == {"en.md", "zh.md", "plan.md"}
        assert len(_get(server, "/v1/facts", TENANT_B, namespace=theirs)["facts"]) == 2
        for text, question, _ in TEXTS.values():
            assert text in str(_post(server, "/v1/recall", {"namespace": theirs, "query": question, "budget": 600},
                                     TENANT_B)["rendered"])
