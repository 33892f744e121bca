"""Response bodies of /v1/jobs (ingest jobs of very large documents)."""

from __future__ import annotations

from pydantic import BaseModel

from api.errors import error_name
from memory.jobs import Job

__all__ = ["JobListPublic", "JobPublic"]


class JobPublic(BaseModel):
    """One ingest job: its state, the stage it is in and progress within it, then what it stored or why not."""

    job_id: str
    namespace: str
    state: str
    stage: str
    done: int
    total: int
    chars: int
    created_at: str
    updated_at: str
    doc_id: str | None = None
    chunks: int | None = None
    status: str | None = None
    error: str | None = None
    detail: str | None = None

    @classmethod
    def of(cls, job: Job) -> JobPublic:
        """The public form of a library Job (`error`/`detail` as in every error body)."""
        outcome = job.outcome
        return cls(
            job_id=job.id, namespace=job.namespace, state=job.state, stage=job.stage, done=job.done,
            total=job.total, chars=job.chars, created_at=job.created_at, updated_at=job.updated_at,
            doc_id=outcome.doc_id if outcome else None, chunks=outcome.chunks if outcome else None,
            status=outcome.status if outcome else None, error=error_name(job.error_kind) if job.error_kind else None,
            detail=job.error,
        )


class JobListPublic(BaseModel):
    """The ingest jobs of a namespace, newest first."""

    jobs: list[JobPublic]
