"""`memory serve` replicas on one PostgreSQL database and one Chroma server, through REST: what one acknowledges
the next request to another reads, in English and Chinese; concurrent writers and readers across replicas lose
nothing; a replica killed with SIGKILL in the middle of ingesting leaves the others a consistent store."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import httpx
import pytest

from bench.chroma_server import ChromaServer
from bench.postgres_cluster import PostgresCluster
from bench.server_process import ServerProcess, logged_errors

TEXTS = {
    "en": ("The nightly loader reads the billing CSV exports from S3 and retries a failed batch twice.",
           "How does the loader get the billing data?", "Never use Python 2 syntax."),
    "zh": ("夜间加载器从S3读取账单CSV导出文件，失败的批次会重试两次。", "加载器从哪里读取账单数据？", "以后不要用Python 2的语法。"),
}


@pytest.fixture(scope="module")
def replicas(postgres: PostgresCluster, chroma_server: ChromaServer,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[ServerProcess]]:
    """Three `memory serve` processes, each with its own data folder, on one database and one Chroma server (the
    tests use namespaces of their own)."""
    tmp_path = tmp_path_factory.mktemp("replicas")
    url = postgres.create_database("s" + uuid.uuid4().hex[:12], template="memory_template")
    config = tmp_path / "shared.toml"
    config.write_text(f'[store]\nurl = "{url}"\n\n[chroma]\nhost = "127.0.0.1"\nport = {chroma_server.port}\n',
                      encoding="utf-8")
    servers = [ServerProcess(tmp_path / f"data-{i}", tmp_path / f"server-{i}.log", config) for i in range(3)]
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.stop()
    for server in servers:
        assert logged_errors(server.log_text()) == []


def _post(server: ServerProcess, path: str, body: dict[str, object]) -> dict[str, object]:
    answer = httpx.post(server.url + path, json=body, timeout=120)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_a_write_acknowledged_by_one_replica_is_read_by_the_next(replicas: list[ServerProcess], lang: str) -> None:
    text, question, rule = TEXTS[lang]
    namespace = f"{lang}-{uuid.uuid4().hex[:8]}"
    a, b, c = replicas
    _post(a, "/v1/documents", {"namespace": namespace, "text": text, "doc_id": "notes/loader.md"})
    _post(b, "/v1/facts/pin", {"namespace": namespace, "text": rule})
    for server in (c, a, b):
        recalled = _post(server, "/v1/recall", {"namespace": namespace, "query": question, "budget": 600})
        assert text in str(recalled["rendered"]) and "Python 2" in str(recalled["rendered"])
    assert httpx.delete(f"{c.url}/v1/namespaces/{namespace}", timeout=60).status_code == 200
    for server in replicas:
        recalled = _post(server, "/v1/recall", {"namespace": namespace, "query": question, "budget": 600})
        assert recalled["items"] == []
        listed = httpx.get(server.url + "/v1/documents", params={"namespace": namespace}, timeout=60).json()
        assert listed["documents"] == [] and listed["total"] == 0


def test_writers_and_readers_on_every_replica_lose_nothing(replicas: list[ServerProcess]) -> None:
    namespace = f"busy-{uuid.uuid4().hex[:8]}"
    failures: list[str] = []
    start = threading.Barrier(8)

    def work(worker: int) -> None:
        server = replicas[worker % len(replicas)]
        start.wait()
        for n in range(6):
            body = {"namespace": namespace, "text": f"Worker {worker} note {n}: 第{worker}号工人的第{n}条笔记。",
                    "doc_id": f"w{worker}/n{n}.md"}
            answer = httpx.post(server.url + "/v1/documents", json=body, timeout=120)
            if answer.status_code != 200:
                failures.append(answer.text)
            found = httpx.post(replicas[(worker + n) % len(replicas)].url + "/v1/recall", timeout=120,
                               json={"namespace": namespace, "query": f"worker {worker} note", "budget": 300})
            if found.status_code != 200:
                failures.append(found.text)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for server in replicas:
        listed = httpx.get(server.url + "/v1/documents", params={"namespace": namespace}, timeout=60).json()
        assert listed["total"] == 48 and len({d["doc_id"] for d in listed["documents"]}) == 48


def test_a_replica_killed_mid_ingest_leaves_the_others_a_whole_store(replicas: list[ServerProcess]) -> None:
    namespace = f"killed-{uuid.uuid4().hex[:8]}"
    a, b, _ = replicas
    long = "\n\n".join(f"## Part {i}\n\nThe loader's part {i} streams rows. 加载器的第{i}部分按行读取。" for i in range(400))
    def ingest() -> None:
        try:
            httpx.post(a.url + "/v1/documents", timeout=120, json={"namespace": namespace, "text": long,
                                                                   "doc_id": "big.md"})
        except httpx.TransportError:  # the replica was killed while it worked: no answer is the point
            pass

    sent = threading.Thread(target=ingest, daemon=True)
    sent.start()
    sent.join(timeout=1.5)  # the ingest is under way (embedding 400 parts takes longer)
    a.kill()
    listed = httpx.get(b.url + "/v1/documents", params={"namespace": namespace}, timeout=60).json()
    if listed["total"]:  # it finished before the kill: whole
        assert listed["documents"][0]["chunks"] >= 1
    chunks = [h for h in _post(b, "/v1/search", {"namespace": namespace, "query": "loader part streams rows",
                                                 "k": 50})["results"]]
    documents = {d["doc_id"]: d["chunks"] for d in listed["documents"]}
    assert all(h["doc_id"] in documents for h in chunks)  # nothing searchable of a document not stored
    _post(b, "/v1/documents", {"namespace": namespace, "text": "After the kill. 杀掉之后。", "doc_id": "after.md"})
    a.start()  # the killed replica comes back on the same store
    recalled = _post(a, "/v1/recall", {"namespace": namespace, "query": "after the kill", "budget": 300})
    assert "After the kill" in str(recalled["rendered"])
