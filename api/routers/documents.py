"""/v1/documents: ingest (JSON text or a multipart file upload), list, show, delete."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError as PydanticValidationError
from starlette.concurrency import run_in_threadpool

from api.deps import AccessDep, MemoryDep, NamespaceQuery
from api.errors import ErrorPublic, json_problem, parse_problem
from api.schemas.base import NAMESPACE_RULE
from api.schemas.experience import (
    DocumentCreate,
    DocumentForm,
    DocumentListPublic,
    DocumentPublic,
    DocumentResultPublic,
)
from api.schemas.jobs import JobPublic
from ingest.upload import in_background, ingest_upload
from memory.errors import ValidationError
from memory.jobs import Job
from memory.service import Memory

router = APIRouter(prefix="/v1/documents", tags=["documents"])

_UPLOAD_DOC = {
    "requestBody": {
        "content": {
            "application/json": {"schema": DocumentCreate.model_json_schema()},
            "multipart/form-data": {"schema": {
                "type": "object", "required": ["namespace", "file"],
                "properties": {"namespace": {"type": "string", **NAMESPACE_RULE},
                               "file": {"type": "string", "format": "binary"},
                               "doc_id": {"type": "string"}, "project": {"type": "string"},
                               "tags": {"type": "array", "items": {"type": "string"}},
                               "modified_at": {"type": "string", "format": "date-time"}},
            }},
        },
        "required": True,
    }
}


_CONFLICT: dict[int | str, dict[str, Any]] = {
    202: {"model": JobPublic, "description": "a document over jobs.background_chars (or background=true) became "
                                             "an ingest job: read it at GET /v1/jobs/{job_id}"},
    409: {"model": ErrorPublic, "description": "without doc_id: another document already has that name"},
}

BackgroundQuery = Annotated[bool | None, Query(
    description="true: ingest as a background job (202); false: in this request; unset: a job when the text is "
                "over jobs.background_chars")]


@router.post("", response_model=DocumentResultPublic, openapi_extra=_UPLOAD_DOC, responses=_CONFLICT)
async def add_document(request: Request, memory: MemoryDep, access: AccessDep,
                       background: BackgroundQuery = None) -> DocumentResultPublic | JSONResponse:
    """Ingest a document: created, updated (its chunks replaced as a unit) or unchanged.

    With doc_id the document of that id is created or updated. Without one its id is derived (from the file
    name as sent, from source, or from the text) and nothing is overwritten: content already stored answers
    unchanged with its id, other content under the derived id answers 409.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data":
        return await _upload(request, memory, access, background)
    try:
        body = DocumentCreate.model_validate(json.loads(await request.body()))
    except json.JSONDecodeError as exc:
        raise ValidationError("the body must be JSON (or a multipart/form-data file upload), and it is not: "
                              + json_problem(exc.msg, exc.doc, exc.pos)) from None
    except UnicodeDecodeError as exc:
        raise ValidationError(f"the body must be JSON (or a multipart/form-data file upload) in UTF-8, and byte "
                              f"{exc.start} is not UTF-8") from None
    except PydanticValidationError as exc:  # a ValueError too: caught before the parser's own
        raise _invalid(exc) from None
    except (ValueError, RecursionError) as exc:  # an integer literal over Python's int-conversion limit; nesting
        raise ValidationError("the JSON body could not be read" + parse_problem(exc)) from None
    namespace = access.namespace(body.namespace)
    if in_background(memory, len(body.text), background):
        return _accepted(await run_in_threadpool(memory.submit_document, namespace, body.document()))
    result = await run_in_threadpool(memory.add_document, namespace, body.document())
    return DocumentResultPublic(doc_id=result.doc_id, chunks=result.chunks, status=result.status)


def _accepted(job: Job) -> JSONResponse:
    """202 with the job, and where to read it (GET /v1/jobs/{job_id})."""
    where = f"/v1/jobs/{job.id}?namespace={job.namespace}"
    return JSONResponse(JobPublic.of(job).model_dump(), status_code=202, headers={"location": where})


async def _upload(request: Request, memory: Memory, access: Any,
                  background: bool | None) -> DocumentResultPublic | JSONResponse:
    form = await request.form()
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        raise ValidationError("a multipart upload needs a 'file' part holding the document")
    try:  # the fields beside the file follow the JSON body's rules
        sent: dict[str, Any] = {key: value for key, value in form.multi_items() if key not in ("file", "tags")}
        fields = DocumentForm.model_validate({**sent, "tags": form.getlist("tags")})
    except PydanticValidationError as exc:
        raise _invalid(exc) from None
    namespace = access.namespace(fields.namespace)
    uploaded = await run_in_threadpool(
        ingest_upload, memory, namespace, upload.filename, await upload.read(), doc_id=fields.doc_id,
        project=fields.project or None, tags=tuple(fields.tags), modified_at=fields.modified_at,
        background=background)
    if uploaded.job is not None:
        return _accepted(uploaded.job)
    first = uploaded.results[0]
    return DocumentResultPublic(doc_id=first.doc_id, chunks=sum(r.chunks for r in uploaded.results),
                                status=first.status)


def _invalid(exc: PydanticValidationError) -> ValidationError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    message = first["msg"].removeprefix("Value error, ")
    return ValidationError("invalid request: " + (f"{where}: {message}" if where else message))


@router.get("", response_model=DocumentListPublic)
def list_documents(
    memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery,
    kind: Annotated[Literal["document", "memory"] | None, Query(
        description="only documents, or only conversation turns (memories)")] = None,
    limit: Annotated[int | None, Query(ge=1, le=10_000, description="at most this many (all without it)")] = None,
    offset: Annotated[int, Query(ge=0, le=10_000_000, description="skip this many first")] = 0,
) -> DocumentListPublic:
    """Documents and memories of a namespace (of one kind with `kind`), newest first; `limit` and `offset` page
    through them, and `total` says how many there are in all."""
    checked = access.namespace(namespace)
    docs = memory.experience.list_documents(checked, kind=kind, limit=limit, offset=offset)
    counts = memory.experience.count_documents(checked)
    total = counts[kind] if kind else sum(counts.values())
    return DocumentListPublic(documents=[DocumentPublic.of(d) for d in docs], total=total)


@router.get("/{doc_id:path}", response_model=DocumentPublic)
def get_document(doc_id: str, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> DocumentPublic:
    """One document's record."""
    return DocumentPublic.of(memory.experience.get_document(access.namespace(namespace), doc_id))


@router.delete("/{doc_id:path}")
def delete_document(doc_id: str, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> dict[str, str]:
    """Remove a document everywhere: SQLite, the lexical index and the vectors."""
    memory.experience.delete_document(access.namespace(namespace), doc_id)
    return {"deleted": doc_id}
