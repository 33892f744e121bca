"""Ingest jobs on the real store and model: progress, outcome, cancel, restart, forgetting the namespace."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pytest

from memory import TextInput
from memory.config import Config, EmbeddingConfig
from memory.embedding import Embedder, Progress
from memory.embedding.onnx_minilm import OnnxEmbedder
from memory.experience.lexical import namespace_token
from memory.jobs import Job
from memory.service import Memory
from tests.conftest import fresh_database


def english(sections: int) -> str:
    return "\n\n".join(" ".join(f"Section {i}, sentence {j}: the ingest worker stores this note about tidal energy "
                                  f"and grid costs." for j in range(3)) for i in range(sections))


def chinese(sections: int) -> str:
    return "\n\n".join("".join(f"第{i}节第{j}句：潮汐能发电的成本与电网接入是这里讨论的问题。" for j in range(3))
                       for i in range(sections))


EN, ZH = english(12), chinese(12)
LONG_EN, LONG_ZH = english(40), chinese(40)


def wait_for(memory: Memory, namespace: str, job_id: str, until: Callable[[Job], bool],
             timeout_s: float = 300) -> Job:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = memory.jobs.get(namespace, job_id)
        if until(job):
            return job
        time.sleep(0.02)
    raise AssertionError(f"job {job_id} never got there: {memory.jobs.get(namespace, job_id)}")


def finished(job: Job) -> bool:
    return job.state in ("done", "failed", "cancelled")


@pytest.mark.parametrize("text", [EN, ZH], ids=["en", "zh"])
def test_a_job_stores_what_add_document_would(memory: Memory, text: str) -> None:
    job = memory.submit_document("jobs", TextInput(text, doc_id="big", title="Tides"))
    assert job.state in ("queued", "running") and job.chars == len(text)
    done = wait_for(memory, "jobs", job.id, finished)
    assert done.state == "done" and done.error is None
    assert done.outcome is not None and done.outcome.doc_id == "big" and done.outcome.status == "created"
    stored = memory.experience.get_document("jobs", "big")
    assert stored.chunks == done.outcome.chunks > 1
    again = memory.add_document("jobs", TextInput(text, doc_id="big", title="Tides"))
    assert again.status == "unchanged" and again.chunks == done.outcome.chunks
    assert [j.id for j in memory.jobs.of_namespace("jobs")] == [job.id]


def test_progress_is_readable_while_the_job_runs(memory: Memory) -> None:
    seen: list[tuple[str, int, int]] = []
    job = memory.submit_document("jobs", TextInput(EN + "\n\n" + ZH, doc_id="watched"))
    while not finished(now := memory.jobs.get("jobs", job.id)):
        if now.state == "running" and now.total:
            seen.append((now.stage, now.done, now.total))
        time.sleep(0.005)
    assert now.state == "done"
    assert {stage for stage, _, _ in seen} <= {"chunking", "embedding"} and seen
    assert all(0 < done <= total for _, done, total in seen)


def test_a_failed_job_says_why_and_stores_nothing(memory: Memory) -> None:
    first = memory.add_document("jobs", TextInput(EN, source="notes.md"))
    job = memory.submit_document("jobs", TextInput(ZH, source="notes.md"))  # the same derived id, other content
    failed = wait_for(memory, "jobs", job.id, finished)
    assert failed.state == "failed" and failed.error_kind == "ConflictError" and failed.outcome is None
    assert failed.error and f"doc_id={first.doc_id!r}" in failed.error
    assert [d.doc_id for d in memory.experience.list_documents("jobs")] == [first.doc_id]
    assert memory.experience.get_document("jobs", first.doc_id).version == 1


def test_cancelling_a_running_job_stores_nothing(memory: Memory) -> None:
    job = memory.submit_document("jobs", TextInput(LONG_EN, doc_id="cancel-me"))
    wait_for(memory, "jobs", job.id, lambda j: j.state == "running" and j.done > 0)
    cancelled = memory.jobs.cancel("jobs", job.id)
    assert cancelled.state == "cancelled"
    assert memory.experience.list_documents("jobs") == []
    assert memory.jobs.cancel("jobs", job.id).state == "cancelled"  # a second cancel changes nothing


def test_forgetting_the_namespace_stops_its_job_before_deleting(memory: Memory) -> None:
    job = memory.submit_document("gone", TextInput(LONG_ZH, doc_id="zh"))
    wait_for(memory, "gone", job.id, lambda j: j.state == "running" and j.done > 0)
    memory.delete_namespace("gone")
    assert memory.jobs.of_namespace("gone") == []
    time.sleep(0.5)  # the worker is off the job: nothing arrives late
    assert memory.experience.list_documents("gone") == []
    assert memory.store.db.execute("SELECT count(*) FROM jobs WHERE namespace = 'gone'").fetchone()[0] == 0


def test_a_job_cut_short_by_a_stop_runs_again_on_the_next_open(config: Config, embedder: Embedder) -> None:
    first = Memory(config, embedder=embedder)
    job = first.submit_document("jobs", TextInput(LONG_EN, doc_id="resumed"))
    wait_for(first, "jobs", job.id, lambda j: j.state == "running" and j.done > 0)
    first.close()
    with Memory(config, embedder=embedder) as second:
        done = wait_for(second, "jobs", job.id, finished)
        assert done.state == "done" and done.outcome is not None
        assert second.experience.get_document("jobs", "resumed").chunks == done.outcome.chunks
        payload = second.store.db.execute("SELECT payload FROM jobs WHERE id = ?", [job.id]).fetchone()[0]
        assert payload is None  # the text does not outlive its job


def test_a_recall_goes_on_while_a_job_runs(memory: Memory) -> None:
    memory.add_document("other", TextInput("Berlin's tram network is one of the oldest in the world.", doc_id="tram"))
    job = memory.submit_document("jobs", TextInput(LONG_EN, doc_id="slow"))
    wait_for(memory, "jobs", job.id, lambda j: j.state == "running" and j.done > 0)
    result = memory.recall("other", "How old is the tram network in Berlin?", 300)
    assert memory.jobs.get("jobs", job.id).state == "running"  # answered before the job ended
    assert any(item.snippet.doc_id == "tram" for item in result.items)
    wait_for(memory, "jobs", job.id, finished)


def test_jobs_run_and_list_in_the_order_they_came(memory: Memory) -> None:
    jobs = [memory.submit_document("order", TextInput(f"Note {i}. 第{i}条笔记。", doc_id=f"n{i}")) for i in range(4)]
    assert [j.id for j in jobs] == sorted(j.id for j in jobs)  # within one second too (created_at has seconds)
    assert [j.id for j in memory.jobs.of_namespace("order")] == [j.id for j in reversed(jobs)]  # newest first
    while True:
        states = {j.id: j.state for j in memory.jobs.of_namespace("order")}  # one read: one moment
        started = [states[j.id] != "queued" for j in jobs]
        assert started == sorted(started, reverse=True), states  # none before an earlier one
        if all(s == "done" for s in states.values()):
            break
        time.sleep(0.002)


def test_unknown_jobs_and_other_namespaces_are_not_found(memory: Memory) -> None:
    from memory.errors import NotFoundError

    job = memory.submit_document("a", TextInput(EN, doc_id="x"))
    with pytest.raises(NotFoundError, match="no ingest job"):
        memory.jobs.get("b", job.id)
    with pytest.raises(NotFoundError):
        memory.jobs.get("a", "j-missing")
    wait_for(memory, "a", job.id, finished)


def test_the_worker_runs_below_the_request_threads(memory: Memory) -> None:
    import os

    worker = next(t for t in threading.enumerate() if t.name == "ingest-jobs" and t.is_alive())
    assert worker.native_id is not None
    assert os.getpriority(os.PRIO_PROCESS, worker.native_id) > os.getpriority(os.PRIO_PROCESS, 0)


def test_submit_refuses_bad_input_at_once(memory: Memory, tmp_path: Path) -> None:
    from memory.errors import TooLargeError, ValidationError

    with pytest.raises(ValidationError):
        memory.submit_document("jobs", "   ")
    with pytest.raises(ValidationError, match="namespace"):
        memory.submit_document("bad namespace!", EN)
    with pytest.raises(TooLargeError):
        memory.submit_document("jobs", "x" * (memory.config.limits.max_text_chars + 1))
    with pytest.raises(ValidationError, match="updated_at"):
        memory.submit_document("jobs", TextInput(EN, updated_at="not a time"))
    assert memory.jobs.of_namespace("jobs") == []


def test_a_document_is_a_text_input_or_a_string(memory: Memory) -> None:
    from memory.errors import ValidationError

    with pytest.raises(ValidationError, match=r"memory\.TextInput, not a dict"):
        memory.submit_document("jobs", {"text": EN})  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=r"memory\.TextInput, not a bytes"):
        memory.add_document("jobs", ZH.encode())  # type: ignore[arg-type]
    assert memory.jobs.of_namespace("jobs") == []


@pytest.mark.parametrize("text", [EN, ZH], ids=["en", "zh"])
def test_a_jobs_payload_is_the_document_it_was_given(text: str) -> None:
    document = TextInput(text, doc_id="d", derived_id="n.md", title="标题", source="s",
                         updated_at="2026-01-02T00:00:00Z", metadata={"k": [1, "二"]}, project="p", tags=("a", "乙"))
    payload = document.payload()
    assert json.loads(json.dumps(payload)) == payload  # stored as JSON
    assert TextInput.from_payload(payload) == document


class Interrupting(OnnxEmbedder):
    """The real bundled model (the default backend's session) that calls `after` on the embedding thread each time
    it has embedded a call's texts: for a job, the seam between its last batch and its document's write."""

    def __init__(self, model: OnnxEmbedder, after: Callable[[], None]) -> None:
        super().__init__(model._session, model._tokenizer, EmbeddingConfig(backend=model.identity.backend))
        self._after = after

    def encode_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        vectors = super().encode_documents(texts, progress)
        self._after()
        return vectors


@pytest.fixture()
def stoppable(backend: str, config: Config, embedder: Embedder,
              request: pytest.FixtureRequest) -> Iterator[tuple[Memory, Memory, list[Callable[[], None]]]]:
    """The Memory that runs a job and the one that stops it, on each backend, with a list of what to do once the
    runner has embedded a document's chunks. On SQLite one Memory is both (one process holds the file); on
    PostgreSQL they are two replicas over one database and one Chroma server."""
    assert isinstance(embedder, OnnxEmbedder)
    hooks: list[Callable[[], None]] = []
    interrupting = Interrupting(embedder, lambda: [hook() for hook in hooks])
    if backend == "postgres":
        cluster = request.getfixturevalue("postgres")
        chroma = request.getfixturevalue("chroma_server")
        url = fresh_database(cluster)
        config = config.replace("chroma", host="127.0.0.1", port=chroma.port).replace("store", url=url)
    with ExitStack() as stack:
        runner = stack.enter_context(Memory(config, embedder=interrupting))
        stopper = runner if backend == "sqlite" else stack.enter_context(
            Memory(config.replace("service", data_dir=str(Path(config.service.data_dir).parent / "other")),
                   embedder=interrupting))
        yield runner, stopper, hooks


@pytest.mark.parametrize("stop", ["cancel", "delete"])
def test_a_job_stopped_between_its_embedding_and_its_write_stores_nothing(
        stoppable: tuple[Memory, Memory, list[Callable[[], None]]], stop: str) -> None:
    """The write asks the job's row inside its own transaction: a cancel, or the namespace's delete on another
    replica, that lands after the last progress report and before the commit leaves nothing of the document."""
    first, stopper, hooks = stoppable
    namespace = f"race-{uuid.uuid4().hex[:8]}"
    stopped = threading.Event()
    runners: list[Memory] = []  # whose worker claimed the job (on PostgreSQL either replica's may)
    stops: list[threading.Thread] = []  # the stop's thread, joined before the stores close

    def row() -> tuple[int, str] | None:
        return stopper.store.db.execute("SELECT cancel, owner FROM jobs WHERE namespace = ?", [namespace]).fetchone()

    def once_embedded() -> None:
        jobs = [j for m in (first, stopper) for j in m.jobs.of_namespace(namespace)]
        if stopped.is_set() or not any(j.stage == "embedding" and j.done == j.total for j in jobs):
            return  # still chunking (its sentences are embedded first)
        found = row()
        assert found is not None
        runners.append(next(m for m in (first, stopper) if m.jobs._owner == found[1]))
        action = (lambda: stopper.jobs.cancel(namespace, jobs[0].id)) if stop == "cancel" else \
            (lambda: stopper.delete_namespace(namespace))
        # In a thread: a stop on the runner's own Memory waits for its worker, which is this thread.
        thread = threading.Thread(target=action)
        thread.start()
        stops.append(thread)
        deadline = time.monotonic() + 30
        while not (row() is None if stop == "delete" else row() == (1, found[1])):
            assert time.monotonic() < deadline, f"the {stop} never reached the job's row"
            time.sleep(0.01)
        if stop == "delete" and stopper is not runners[0]:
            thread.join()  # the whole delete, collection dropped, before the write: the race as replicas meet it
        stopped.set()

    hooks.append(once_embedded)
    job = first.submit_document(namespace, TextInput(EN + "\n\n" + ZH, doc_id="raced"))
    assert stopped.wait(120), first.jobs.of_namespace(namespace)
    # A worker runs its jobs one at a time: once a later one is done it is off this one (which a delete removed,
    # so it cannot say so itself).
    runner = runners[0]
    later = runner.submit_document("barrier", TextInput("A later job. 之后的任务。", doc_id="later"))
    wait_for(runner, "barrier", later.id, finished)
    if stop == "cancel":
        ended = stopper.jobs.get(namespace, job.id)
        assert ended.state == "cancelled" and ended.outcome is None
        assert ended.error == "cancelled before the document was stored"
    else:
        assert runner.jobs.of_namespace(namespace) == stopper.jobs.of_namespace(namespace) == []
    for memory in {id(first): first, id(stopper): stopper}.values():
        assert memory.experience.list_documents(namespace) == []
        assert memory.recall(namespace, "tidal energy and grid costs 潮汐能发电的成本", 600).items == ()
        db = memory.store.db
        assert [db.execute(f"SELECT count(*) FROM {table} WHERE {column} = ?", [value]).fetchone()[0]
                for table, column, value in [("documents", "namespace", namespace), ("chunks", "namespace", namespace),
                                             ("chunks_fts", "ns", namespace_token(namespace)),
                                             ("lexical_rows", "ns", namespace_token(namespace))]] == [0, 0, 0, 0]
        collection = memory.store.collection(namespace, create=False)
        assert collection is None or collection.count() == 0
    for thread in stops:  # a cancel on the other replica may still be waiting for the job's row to say it stopped
        thread.join(30)
        assert not thread.is_alive()
