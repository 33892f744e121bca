"""/v1/documents: ingest (JSON text or a multipart file upload), list, show, delete."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ValidationError as PydanticValidationError
from starlette.concurrency import run_in_threadpool

from api.deps import AccessDep, MemoryDep
from api.schemas.base import NAMESPACE_RULE, NamespaceQuery
from api.schemas.experience import (
    DocumentCreate,
    DocumentListPublic,
    DocumentPublic,
    DocumentResultPublic,
)
from ingest.loaders import SUPPORTED_SUFFIXES
from ingest.pipeline import ingest_file
from memory.errors import MemoryError_, ValidationError

router = APIRouter(prefix="/v1/documents", tags=["documents"])

_MAX_NAME_BYTES = 255  # the upload is written under its own name, and file systems refuse longer names

_UPLOAD_DOC = {
    "requestBody": {
        "content": {
            "application/json": {"schema": DocumentCreate.model_json_schema()},
            "multipart/form-data": {"schema": {
                "type": "object", "required": ["namespace", "file"],
                "properties": {"namespace": {"type": "string", **NAMESPACE_RULE},
                               "file": {"type": "string", "format": "binary"},
                               "doc_id": {"type": "string"}, "project": {"type": "string"}},
            }},
        },
        "required": True,
    }
}


@router.post("", response_model=DocumentResultPublic, openapi_extra=_UPLOAD_DOC)
async def add_document(request: Request, memory: MemoryDep, access: AccessDep) -> DocumentResultPublic:
    """Ingest a document: created, updated (its chunks replaced as a unit) or unchanged."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "multipart/form-data":
        return await _upload(request, memory, access)
    try:
        body = DocumentCreate.model_validate(json.loads(await request.body()))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ValidationError("the body must be JSON (or a multipart/form-data file upload)") from None
    except RecursionError:
        raise ValidationError("the JSON body nests too deeply to read; flatten the metadata") from None
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise ValidationError("invalid request: " + (f"{where}: {message}" if where else message)) from None
    namespace = access.namespace(body.namespace)
    result = await run_in_threadpool(
        memory.add_document, namespace, body.text, title=body.title, source=body.source, doc_id=body.doc_id,
        updated_at=body.updated_at, metadata=body.metadata, project=body.project, tags=tuple(body.tags))
    return DocumentResultPublic(doc_id=result.doc_id, chunks=result.chunks, status=result.status)


async def _upload(request: Request, memory: Any, access: Any) -> DocumentResultPublic:
    form = await request.form()
    namespace = access.namespace(form.get("namespace"))
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        raise ValidationError("a multipart upload needs a 'file' part holding the document")
    name = _file_name(upload.filename)
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise ValidationError(f"file type {suffix or '(none)'} is not supported; send one of "
                              f"{', '.join(sorted(SUPPORTED_SUFFIXES))}")
    doc_id = form.get("doc_id")
    project = form.get("project")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(await upload.read())
        try:
            results = await run_in_threadpool(
                ingest_file, memory, namespace, path, source=name,
                doc_id=doc_id if isinstance(doc_id, str) and doc_id else None,
                project=project if isinstance(project, str) and project else None)
        except MemoryError_ as exc:
            # The loaders name the file by path; the caller knows it by the name it uploaded.
            raise type(exc)(str(exc).replace(str(path), name)) from None
    first = results[0]
    return DocumentResultPublic(doc_id=first.doc_id, chunks=sum(r.chunks for r in results), status=first.status)


def _file_name(filename: str | None) -> str:
    """The upload's own name, without any folder part; refused when no file system could hold it."""
    name = Path(filename or "upload.txt").name
    size = len(name.encode("utf-8", "surrogatepass"))
    if size > _MAX_NAME_BYTES or "\x00" in name or any("\ud800" <= ch <= "\udfff" for ch in name):
        raise ValidationError(f"the file name must be at most {_MAX_NAME_BYTES} bytes of UTF-8 text without NUL "
                              f"characters, got {name[:80]!r} ({size} bytes); rename the file")
    return name


@router.get("", response_model=DocumentListPublic)
def list_documents(memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> DocumentListPublic:
    """Documents and memories of a namespace, newest first."""
    docs = memory.experience.list_documents(access.namespace(namespace))
    return DocumentListPublic(documents=[DocumentPublic.of(d) for d in docs])


@router.get("/{doc_id}", response_model=DocumentPublic)
def get_document(doc_id: str, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> DocumentPublic:
    """One document's record."""
    return DocumentPublic.of(memory.experience.get_document(access.namespace(namespace), doc_id))


@router.delete("/{doc_id}")
def delete_document(doc_id: str, memory: MemoryDep, access: AccessDep, namespace: NamespaceQuery) -> dict[str, str]:
    """Remove a document everywhere: SQLite, the lexical index and the vectors."""
    memory.experience.delete_document(access.namespace(namespace), doc_id)
    return {"deleted": doc_id}
