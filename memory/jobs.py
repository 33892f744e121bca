"""Ingest jobs: a very large document is written in the background, its progress readable, nothing lost.

A job's input is kept in the store until the job ends, so a server stopped or killed half-way runs it again (a
document write is atomic, so a job cut short has stored nothing). One worker thread per process runs jobs in the
order they came, at a lower scheduling priority than the threads that answer recalls.

A running job holds a lease in its row: the process that claimed it (`owner`) reports its progress there every
few seconds (`heartbeat_at`), and reads there whether it was cancelled or its namespace forgotten, so every
process sharing the store (PostgreSQL replicas) sees the same job and can stop it. The document's write asks the
row once more inside its own transaction, so a job stopped after its last report stores nothing either. A job
whose owner stopped reporting for `jobs.lease_s` is taken over by the next worker that looks; on a store one
process holds (the SQLite file), what was running when that process opened was left by a stopped one and runs
again at once.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from memory.clock import Clock, to_iso
from memory.config import JobsConfig
from memory.database import Connection
from memory.errors import MemoryError_, NotFoundError, ValidationError
from memory.store import Store

__all__ = ["Job", "JobOutcome", "JobRunner", "JobState", "Jobs"]

_COLUMNS = "id, namespace, state, chars, outcome, error, error_kind, created_at, updated_at, stage, done, total"

JobState = Literal["queued", "running", "done", "failed", "cancelled"]

_log = logging.getLogger(__name__)

# How far below the request threads the worker runs (Linux nice is per thread; raising it needs no privilege).
_NICE = 10
# A running job reports at most this often (jobs.lease_s, which must be well above it, says when it is taken over).
_REPORT_S = 2.0
# An idle worker looks for work this often (and purges finished jobs); a store other processes share is looked at
# twice a lease too, so a job whose replica died moves on within one and a half leases.
_IDLE_S = 60.0
_CANCEL_WAIT_S = 5 * _REPORT_S  # how long a cancel waits for another process's runner to stop
_CANCELLED = "cancelled before the document was stored"  # the error of every job stopped before its write


@dataclass(frozen=True)
class JobOutcome:
    """What a finished document job stored."""

    doc_id: str
    chunks: int
    status: str


@dataclass(frozen=True)
class Job:
    """One ingest job: state, the stage it is in, progress within the stage, and its outcome or error."""

    id: str
    namespace: str
    state: JobState
    stage: str  # queued | starting | chunking (sentences embedded for topic shifts) | embedding (chunks) | finished
    done: int
    total: int
    chars: int
    created_at: str
    updated_at: str
    outcome: JobOutcome | None = None
    error: str | None = None
    error_kind: str | None = None


class Cancelled(Exception):
    """Raised by a job's progress callback or write check when it is to stop: cancelled, forgotten with its
    namespace, or taken over by another process."""


# (namespace, the payload given to submit, progress(stage, done, total), check) -> what was stored. The runner has
# its document write call check(tx) inside the write's own transaction, before it commits: it raises Cancelled
# when the job may no longer store anything, and the write rolls back.
JobRunner = Callable[[str, Mapping[str, Any], Callable[[str, int, int], None], Callable[[Connection], None]],
                     JobOutcome]


class Jobs:
    """The job queue of one store and its worker thread."""

    def __init__(self, store: Store, clock: Clock, run: JobRunner, settings: JobsConfig) -> None:
        self._store = store
        self._clock = clock
        self._run = run
        self._keep = timedelta(seconds=settings.keep_finished_s)
        self._lease = timedelta(seconds=settings.lease_s)
        self._idle_s = _IDLE_S if store.database.exclusive else min(_IDLE_S, settings.lease_s / 2)
        self._wake = threading.Condition()
        self._stop = threading.Event()
        self._live: dict[str, tuple[str, int, int]] = {}  # progress of the running job, not worth a write
        self._cancel: set[str] = set()
        self._running: str | None = None  # the job the worker is on (read under _wake)
        self._poked = False  # a job was submitted since the worker last looked
        # This Jobs in the rows of the jobs it runs; the process id lets an operator tell which replica holds one.
        self._owner = f"p{os.getpid()}-{uuid.uuid4().hex[:16]}"
        self._reported = 0.0  # time.monotonic() of the running job's last report
        if store.database.exclusive:  # what was running was left by a stopped process: it starts again at once
            with store.transaction() as tx:
                tx.execute("UPDATE jobs SET state = 'queued', owner = NULL WHERE state = 'running'")
        self._thread = threading.Thread(target=self._work, name="ingest-jobs", daemon=True)
        self._thread.start()

    def submit(self, namespace: str, payload: Mapping[str, Any], chars: int) -> Job:
        """Queue a job; `payload` (JSON-serialisable) is handed to the runner as it is."""
        try:
            text = json.dumps(dict(payload), ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"the document's fields cannot be stored as JSON: {exc}") from None
        moment = self._clock()
        # The queue runs by (created_at, id) and created_at has whole seconds: an id that starts with the moment
        # in microseconds keeps jobs sent within one second in the order they came.
        job_id = f"j-{int(moment.timestamp() * 1_000_000):013x}{uuid.uuid4().hex[:7]}"
        now = to_iso(moment)
        with self._store.transaction() as tx:
            tx.execute(
                "INSERT INTO jobs (id, namespace, state, payload, chars, created_at, updated_at) "
                "VALUES (?, ?, 'queued', ?, ?, ?, ?)", [job_id, namespace, text, chars, now, now],
            )
        with self._wake:
            self._poked = True
            self._wake.notify_all()
        return self.get(namespace, job_id)

    def get(self, namespace: str, job_id: str) -> Job:
        """One job of a namespace; NotFoundError when there is none (or it finished long ago)."""
        row = self._store.db.execute(
            f"SELECT {_COLUMNS} FROM jobs WHERE namespace = ? AND id = ?", [namespace, job_id],
        ).fetchone()
        if row is None:
            raise NotFoundError(
                f"no ingest job {job_id!r} in namespace {namespace!r}; finished jobs are kept "
                f"{int(self._keep.total_seconds())} s (jobs.keep_finished_s)"
            )
        return self._job(row)

    def of_namespace(self, namespace: str) -> list[Job]:
        """The jobs of a namespace, newest first."""
        rows = self._store.db.execute(
            f"SELECT {_COLUMNS} FROM jobs WHERE namespace = ? ORDER BY created_at DESC, id DESC", [namespace],
        ).fetchall()
        return [self._job(r) for r in rows]

    def cancel(self, namespace: str, job_id: str) -> Job:
        """Stop a queued or running job; one stopped stores nothing, one whose document was already committed
        finishes (`done`).

        A job running in another process is asked in its row and stops at its next report, or at its write."""
        self.get(namespace, job_id)
        with self._store.transaction() as tx:
            queued = tx.execute(
                "UPDATE jobs SET state = 'cancelled', payload = NULL, updated_at = ? WHERE id = ? AND state = 'queued'",
                [to_iso(self._clock()), job_id],
            ).rowcount
            if queued:
                self._store.erase_later(tx)
            else:
                tx.execute("UPDATE jobs SET cancel = 1 WHERE id = ? AND state = 'running'", [job_id])
        if not queued:
            self._cancel.add(job_id)
            self._wait_off([job_id])
            self._cancel.discard(job_id)
            self._wait_elsewhere(job_id)
        return self.get(namespace, job_id)

    def forget_namespace(self, namespace: str) -> int:
        """Stop and remove every job of a namespace (its queued text included); returns how many there were.

        Returns once the worker is off them, so nothing of them is written after the namespace is forgotten.
        """
        with self._store.transaction() as tx:  # first: once the rows are gone the worker can claim none of them
            ids = [r[0] for r in tx.execute("SELECT id FROM jobs WHERE namespace = ?", [namespace]).fetchall()]
            self._cancel.update(ids)  # the one running, if any, stops at its next batch
            if tx.execute("DELETE FROM jobs WHERE namespace = ?", [namespace]).rowcount:
                self._store.erase_later(tx)
        self._wait_off(ids)
        self._cancel.difference_update(ids)
        return len(ids)

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop the worker; a running job is cut short and runs again from the start on the next open."""
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        self._thread.join(timeout=timeout_s)

    def _wait_off(self, ids: list[str]) -> None:
        with self._wake:
            self._wake.wait_for(lambda: self._running not in ids)

    def _wait_elsewhere(self, job_id: str) -> None:
        """Until the job is no longer running in any process (its owner stops at its next report), at most
        _CANCEL_WAIT_S: an owner that stopped never reports, and the worker that takes its job over cancels it
        instead of running it (the cancel stays asked in the row)."""
        deadline = time.monotonic() + _CANCEL_WAIT_S
        while time.monotonic() < deadline:
            row = self._store.db.execute("SELECT state FROM jobs WHERE id = ?", [job_id]).fetchone()
            if row is None or row[0] != "running":
                return
            time.sleep(0.1)

    def _job(self, row: Any) -> Job:
        job_id, namespace, state, chars, outcome, error, kind, created, updated, stage, done, total = row
        idle = {"queued": "queued", "running": "starting"}.get(state, "finished")
        # This process's own job as it is now; another's as it last reported.
        stage, done, total = self._live.get(job_id, (stage or idle, done, total) if state == "running"
                                            else (idle, 0, 0))
        found = JobOutcome(**json.loads(outcome)) if outcome else None
        if state == "done" and found is not None:
            done = total = found.chunks
        return Job(job_id, namespace, state, stage, done, total, chars, created, updated, found, error, kind)

    def _work(self) -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _NICE)
        except (AttributeError, OSError):  # not Linux, or not allowed: the job still runs, only less politely
            pass
        while not self._stop.is_set():
            claimed = self._claim()
            if claimed is None:
                self._purge()
                with self._wake:  # a predicate, not a bare wait: a submit or close just before must not be lost
                    self._wake.wait_for(lambda: self._poked or self._stop.is_set(), timeout=self._idle_s)
                    self._poked = False
                continue
            self._execute(*claimed)

    def _claim(self) -> tuple[str, str, Mapping[str, Any]] | None:
        """The oldest queued job, or a running one whose owner stopped reporting, now this process's."""
        now = self._clock()
        stale = to_iso(now - self._lease)
        with self._store.transaction() as tx:  # the writer lock: one process claims it
            while True:
                row = tx.execute(
                    "SELECT id, namespace, payload, cancel FROM jobs WHERE state = 'queued' OR (state = 'running' "
                    "AND (heartbeat_at IS NULL OR heartbeat_at < ?)) ORDER BY created_at, id LIMIT 1", [stale]
                ).fetchone()
                if row is None:
                    return None
                if not row[3]:
                    break
                # A cancel asked of a job whose owner stopped before it read it: cancelled now, never run.
                tx.execute("UPDATE jobs SET state = 'cancelled', payload = NULL, cancel = 0, error = ?, updated_at = ? "
                           "WHERE id = ?", [_CANCELLED, to_iso(now), row[0]])
                self._store.erase_later(tx)
            tx.execute("UPDATE jobs SET state = 'running', owner = ?, heartbeat_at = ?, stage = 'starting', "
                       "done = 0, total = 0, updated_at = ? WHERE id = ?",
                       [self._owner, to_iso(now), to_iso(now), row[0]])
        self._reported = time.monotonic()
        with self._wake:
            self._running = row[0]
        return row[0], row[1], json.loads(row[2])

    def _execute(self, job_id: str, namespace: str, payload: Mapping[str, Any]) -> None:
        def progress(stage: str, done: int, total: int) -> None:
            if job_id in self._cancel or self._stop.is_set():
                raise Cancelled
            self._live[job_id] = (stage, done, total)
            if time.monotonic() - self._reported >= _REPORT_S and not self._report(job_id, stage, done, total):
                raise Cancelled

        def check(tx: Connection) -> None:
            # The last report may be seconds old: a cancel, a delete of the namespace or a takeover since then
            # must find nothing of the document committed after it.
            if not self._renew(tx, job_id, *self._live.get(job_id, ("starting", 0, 0))):
                raise Cancelled

        try:
            outcome = self._run(namespace, payload, progress, check)
        except Cancelled:
            if self._stop.is_set():  # the process is stopping: the job runs again, here or in another process
                with self._store.transaction() as tx:
                    tx.execute("UPDATE jobs SET state = 'queued', owner = NULL WHERE id = ? AND state = 'running' "
                               "AND owner = ?", [job_id, self._owner])
            else:  # cancelled here or in its row (a job whose row is gone was forgotten: nothing to record)
                self._finish(job_id, "cancelled", error=_CANCELLED)
        except MemoryError_ as exc:
            self._finish(job_id, "failed", error=str(exc), kind=type(exc).__name__.rstrip("_"))
        except Exception as exc:  # a bug: the job fails, the worker goes on
            _log.exception("ingest job %s failed", job_id)
            self._finish(job_id, "failed", error=f"the job stopped on an internal error ({type(exc).__name__}); "
                                                 "the document was not stored, see the service log",
                         kind="InternalError")
        else:
            self._finish(job_id, "done", outcome=outcome)
        finally:
            self._live.pop(job_id, None)
            with self._wake:
                self._running = None
                self._wake.notify_all()

    def _report(self, job_id: str, stage: str, done: int, total: int) -> bool:
        """Write the running job's progress and renew its lease in a transaction of its own (see _renew)."""
        self._reported = time.monotonic()
        with self._store.transaction() as tx:
            return self._renew(tx, job_id, stage, done, total)

    def _renew(self, tx: Connection, job_id: str, stage: str, done: int, total: int) -> bool:
        """Inside `tx`: write the running job's progress and renew its lease; False when it is to stop (cancelled,
        forgotten with its namespace, or taken over by another process after a lease that ran out). The one
        decision whether a job goes on, at each report and in its document's write."""
        row = tx.execute(
            "UPDATE jobs SET stage = ?, done = ?, total = ?, heartbeat_at = ? WHERE id = ? AND state = 'running' "
            "AND owner = ? RETURNING cancel", [stage, done, total, to_iso(self._clock()), job_id, self._owner]
        ).fetchone()
        return row is not None and not row[0]

    def _finish(self, job_id: str, state: JobState, *, outcome: JobOutcome | None = None, error: str | None = None,
                kind: str | None = None) -> None:
        """Record how a job ended and drop its input (the text must not outlive the job); only the job's owner
        does (one that lost its lease to another process leaves the row to that one)."""
        stored = json.dumps(outcome.__dict__) if outcome else None
        with self._store.transaction() as tx:
            tx.execute(
                "UPDATE jobs SET state = ?, payload = NULL, outcome = ?, error = ?, error_kind = ?, updated_at = ?, "
                "cancel = 0 WHERE id = ? AND state IN ('queued', 'running') AND (owner = ? OR owner IS NULL)",
                [state, stored, error, kind, to_iso(self._clock()), job_id, self._owner],
            )
            self._store.erase_later(tx)  # the payload's text is still in the WAL

    def _purge(self) -> None:
        cutoff = to_iso(self._clock() - self._keep)
        with self._store.transaction() as tx:
            tx.execute("DELETE FROM jobs WHERE state IN ('done', 'failed', 'cancelled') AND updated_at < ?", [cutoff])
