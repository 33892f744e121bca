"""/v1/jobs: the ingest jobs very large documents become (POST /v1/documents answers 202 with one)."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import AccessDep, MemoryDep, NamespaceQuery
from api.schemas.jobs import JobListPublic, JobPublic

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])


@router.get("", response_model=JobListPublic)
def list_jobs(memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> JobListPublic:
    """The namespace's ingest jobs, newest first (finished ones are kept `jobs.keep_finished_s`)."""
    return JobListPublic(jobs=[JobPublic.of(j) for j in memory.jobs.of_namespace(access.namespace(namespace))])


@router.get("/{job_id}", response_model=JobPublic)
def get_job(job_id: str, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> JobPublic:
    """One job: queued, running (stage, done / total), done (doc_id, chunks, status), failed or cancelled."""
    return JobPublic.of(memory.jobs.get(access.namespace(namespace), job_id))


@router.delete("/{job_id}", response_model=JobPublic)
def cancel_job(job_id: str, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> JobPublic:
    """Cancel a queued or running job; nothing of its document is stored (a finished job is left as it is)."""
    return JobPublic.of(memory.jobs.cancel(access.namespace(namespace), job_id))
