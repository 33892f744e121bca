"""The service's records in PostgreSQL and its vectors in a Chroma server, as replicas share them: settings that
cannot work are refused in a sentence, and two Memory objects over one database and one Chroma server (two
replicas, each with its own data folder) read what the other wrote, in English and Chinese."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bench.chroma_server import ChromaServer
from bench.postgres_cluster import PostgresCluster
from memory import ConfigError, MemoryTurn, TextInput
from memory.clock import to_iso, utc_now
from memory.config import Config, load_config
from memory.database import redacted
from memory.embedding import Embedder
from memory.jobs import Job
from memory.service import Memory
from tests.conftest import fresh_database

TEXTS = {
    "en": ("The nightly loader reads the billing CSV exports from S3 and retries a failed batch twice.",
           "How does the loader get the billing data?", "Never use Python 2 syntax.", "Python 2"),
    "zh": ("夜间加载器从S3读取账单CSV导出文件，失败的批次会重试两次。", "加载器从哪里读取账单数据？",
           "以后不要用Python 2的语法。", "Python 2"),
}


def test_a_postgres_store_without_a_chroma_server_is_refused_in_a_sentence() -> None:
    with pytest.raises(ConfigError, match=r"cannot share an embedded Chroma: set chroma\.host"):
        load_config(env={"MEMORY_STORE_URL": "postgresql://memory:secret@db.internal/memory"})


def test_a_url_of_another_database_is_refused_without_its_password() -> None:
    with pytest.raises(ConfigError, match=r"must be empty .* or a postgresql:// URL") as raised:
        load_config(env={"MEMORY_STORE_URL": "mysql://memory:secret@db.internal/memory"})
    assert "secret" not in str(raised.value)


@pytest.fixture()
def shared(postgres: PostgresCluster, chroma_server: ChromaServer, tmp_path: Path) -> Config:
    """Settings of one replica: a fresh database of the cluster, the session's Chroma server."""
    url = fresh_database(postgres)
    return (load_config().replace("chroma", host="127.0.0.1", port=chroma_server.port)
            .replace("store", url=url).replace("service", data_dir=str(tmp_path / "replica-a")))


@pytest.fixture()
def replicas(shared: Config, embedder: Embedder, tmp_path: Path) -> Iterator[tuple[Memory, Memory]]:
    """Two Memory objects over one PostgreSQL database and one Chroma server, each with its own data folder."""
    other = shared.replace("service", data_dir=str(tmp_path / "replica-b"))
    with Memory(shared, embedder=embedder) as a, Memory(other, embedder=embedder) as b:
        yield a, b


@pytest.mark.parametrize("lang", sorted(TEXTS))
def test_what_one_replica_writes_the_other_reads(replicas: tuple[Memory, Memory], lang: str) -> None:
    a, b = replicas
    text, question, rule, mark = TEXTS[lang]
    namespace = f"{lang}-{uuid.uuid4().hex[:8]}"
    assert a.add_document(namespace, TextInput(text, doc_id="notes/loader.md")).status == "created"
    a.remember(namespace, [MemoryTurn(text, speaker="assistant")])
    pinned = b.facts.pin(namespace, text=rule).stored
    assert pinned and mark in pinned[0].value + pinned[0].text
    recalled = b.recall(namespace, question, 600)
    assert text in recalled.rendered and mark in recalled.rendered  # a's document, b's pinned fact
    assert a.recall(namespace, question, 600).rendered == recalled.rendered  # the same store, the same answer
    assert b.experience.get_document(namespace, "notes/loader.md").chunks >= 1
    assert "secret" not in a.health().store and a.health().store.startswith("postgresql://")
    gone = b.delete_namespace(namespace)
    assert gone.documents == 2 and gone.facts >= 1
    assert a.recall(namespace, question, 600).items == ()
    assert a.store.collection(namespace, create=False) is None  # its vectors are gone from the server too


def test_a_one_shot_item_is_consumed_once_across_replicas(replicas: tuple[Memory, Memory]) -> None:
    a, b = replicas
    namespace = f"once-{uuid.uuid4().hex[:8]}"
    key = a.tasks.add(namespace, "t1", "note", "Use the staging key once. 只用一次测试密钥。", ephemeral=True).key
    taken: list[tuple[str, ...]] = []
    start = threading.Barrier(8)

    def consume(memory: Memory) -> None:
        start.wait()
        taken.append(tuple(memory.tasks.consume(namespace, [key])))

    threads = [threading.Thread(target=consume, args=(m,)) for m in (a, b) * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(taken, key=len) == [()] * 7 + [(key,)]


def _wait(memory: Memory, namespace: str, job_id: str, done: Callable[[Job], bool], timeout_s: float = 120) -> Job:
    deadline = time.monotonic() + timeout_s
    while not done(job := memory.jobs.get(namespace, job_id)):
        assert time.monotonic() < deadline, job
        time.sleep(0.05)
    return job


def _owner(memory: Memory, job_id: str) -> str | None:
    row = memory.store.db.execute("SELECT owner FROM jobs WHERE id = ?", [job_id]).fetchone()
    return None if row is None else row[0]


LONG = "\n\n".join(f"## Part {i}\n\nThe loader's part {i} streams rows in batches. 加载器的第{i}部分按批读取行。"
                   for i in range(2000))


def test_a_job_runs_once_and_every_replica_sees_it_and_can_cancel_it(replicas: tuple[Memory, Memory]) -> None:
    a, b = replicas
    namespace = f"jobs-{uuid.uuid4().hex[:8]}"
    short = a.submit_document(namespace, TextInput("A short note. 一条短笔记。", doc_id="short.md"))
    finished = _wait(b, namespace, short.id, lambda j: j.state == "done")  # read on the other replica
    assert finished.outcome is not None and finished.outcome.status == "created"
    assert [j.id for j in a.jobs.of_namespace(namespace)] == [short.id]
    job = a.submit_document(namespace, TextInput(LONG, doc_id="long.md"))
    running = _wait(a, namespace, job.id, lambda j: j.state == "running" and j.total > 0)
    runner = a if _owner(a, job.id) == a.jobs._owner else b
    other = b if runner is a else a
    seen = _wait(other, namespace, job.id, lambda j: j.total > 0)  # progress as the runner last reported it
    assert seen.stage in ("chunking", "embedding") and running.total > 0
    assert other.jobs.cancel(namespace, job.id).state == "cancelled"  # asked in the row, stopped by the runner
    assert other.experience.list_documents(namespace) == [finished_doc(other, namespace)]


def finished_doc(memory: Memory, namespace: str) -> Any:
    return memory.experience.get_document(namespace, "short.md")


def test_a_job_whose_replica_stopped_reporting_is_taken_over(replicas: tuple[Memory, Memory]) -> None:
    a, b = replicas
    namespace = f"lease-{uuid.uuid4().hex[:8]}"
    stale = to_iso(utc_now() - timedelta(seconds=a.config.jobs.lease_s + 60))
    payload = json.dumps(TextInput("Left running by a replica that died. 死去的副本留下的任务。", doc_id="left.md").payload())
    with a.store.transaction() as tx:  # what a replica killed mid-job leaves: running, owned, silent
        tx.execute("INSERT INTO jobs (id, namespace, state, payload, chars, created_at, updated_at, owner, "
                   "heartbeat_at) VALUES ('j-left', ?, 'running', ?, 40, ?, ?, 'p-dead', ?)",
                   [namespace, payload, stale, stale, stale])
        # ...and one a user cancelled after it died, which is then never run
        tx.execute("INSERT INTO jobs (id, namespace, state, payload, chars, created_at, updated_at, owner, "
                   "heartbeat_at, cancel) VALUES ('j-gone', ?, 'running', ?, 40, ?, ?, 'p-dead', ?, 1)",
                   [namespace, payload.replace("left.md", "gone.md"), stale, stale, stale])
    poke = b.submit_document(namespace, TextInput("A new job wakes the worker. 新任务唤醒工作线程。", doc_id="new.md"))
    taken = _wait(a, namespace, "j-left", lambda j: j.state == "done")
    assert taken.outcome is not None and taken.outcome.doc_id == "left.md"
    assert _wait(a, namespace, poke.id, lambda j: j.state == "done").outcome is not None
    assert b.experience.get_document(namespace, "left.md").chunks == 1
    gone = _wait(b, namespace, "j-gone", lambda j: j.state != "running")
    assert gone.state == "cancelled" and gone.outcome is None
    # Both stored, once each (the list is newest first, and which of the two finished last varies).
    assert sorted(d.doc_id for d in a.experience.list_documents(namespace)) == ["left.md", "new.md"]


def test_a_postgres_store_of_another_model_is_refused_naming_the_database(shared: Config) -> None:
    from memory.embedding import EmbedderIdentity
    from memory.errors import StoreMismatchError
    from memory.store import open_store

    open_store(shared, EmbedderIdentity("onnx-int8", "all-MiniLM-L6-v2", 384)).close()
    with pytest.raises(StoreMismatchError, match=rf"the store in {re.escape(redacted(shared.store.url))} was built"):
        open_store(shared, EmbedderIdentity("sentence-transformers", "another-model", 768))
