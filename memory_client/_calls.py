"""Every endpoint once: its method and path template (the route table), the request it takes and how to read it.

`Client` and `AsyncClient` only send what these functions build, so the two cannot drift apart, and the route
table is what a test compares with the service's OpenAPI schema. Each function is named after the client method
that sends it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from memory_client._decode import decode, decode_list
from memory_client._errors import InvalidAnswer
from memory_client._models import Context, Health, Recall, Search
from memory_client._records import (
    Deleted,
    DeletedDocument,
    Document,
    DocumentList,
    DocumentResult,
    Fact,
    FactChange,
    FactList,
    Job,
    JobList,
    MemoriesStored,
    NamespaceDeleted,
    Summary,
    SummaryList,
    TaskItemAdded,
    TaskItemList,
    TaskPage,
)

__all__ = ["ROUTES", "Call", "Route", "encode_segment"]

T = TypeVar("T")
FileInput = str | os.PathLike[str] | bytes


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request ready to send (`path` already encoded) and the function that reads its answer."""

    method: str
    path: str
    read: Callable[[httpx.Response], T]
    params: Mapping[str, Any] | None = None
    json: Any = None
    data: Mapping[str, Any] | None = None
    files: Mapping[str, tuple[str, bytes]] | None = None


@dataclass(frozen=True)
class Route:
    """A method and an OpenAPI path template such as `/v1/documents/{doc_id}`."""

    method: str
    template: str

    def call(self, read: Callable[[httpx.Response], T], *, segments: Mapping[str, str] | None = None,
             **request: Any) -> Call[T]:
        """The request on this route with its path segments encoded."""
        path = self.template.format(**{k: encode_segment(k, v) for k, v in (segments or {}).items()})
        return Call(self.method, path, read, **request)


ROUTES: dict[str, Route] = {}
"""Client method name -> the route it sends to."""


def _route(name: str, method: str, template: str) -> Route:
    ROUTES[name] = Route(method, template)
    return ROUTES[name]


def encode_segment(name: str, value: str) -> str:
    """A path segment as docs/api.md "Ids in paths" asks: every `/`, space, `%` and non-ASCII character
    percent-encoded, and a `.` or `..` segment as `%2E` / `%2E%2E` (HTTP clients drop those segments)."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")
    encoded = quote(value, safe="")
    return encoded.replace(".", "%2E") if set(encoded) == {"."} else encoded


def _body(**fields: Any) -> dict[str, Any]:
    """A JSON body without the fields left unset, so the service's own defaults apply to them."""
    return {k: v for k, v in fields.items() if v is not None}


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        kind = response.headers.get("content-type", "no content type")
        raise InvalidAnswer(f"{response.request.method} {response.request.url.path} answered "
                            f"{response.status_code} with a body that is not JSON ({kind}): "
                            f"{response.text[:200]!r}; is the URL the memory service's?") from None


def _reads(cls: type[T]) -> Callable[[httpx.Response], T]:
    return lambda response: decode(cls, _json(response))


def _text(response: httpx.Response) -> str:
    return response.text


def _ingested(response: httpx.Response) -> DocumentResult | Job:
    """200 with what was stored, or 202 with the ingest job a large document became."""
    data = _json(response)
    return decode(Job, data) if response.status_code == 202 else decode(DocumentResult, data)


def _promoted(response: httpx.Response) -> tuple[DocumentResult, ...]:
    return decode_list(DocumentResult, _json(response))


def _ns(namespace: str) -> dict[str, str]:
    return {"namespace": namespace}


_HEALTH = _route("health", "GET", "/healthz")
_METRICS = _route("metrics", "GET", "/metrics")
_RECALL = _route("recall", "POST", "/v1/recall")
_CONTEXT = _route("context", "POST", "/v1/context")
_SEARCH = _route("search", "POST", "/v1/search")
_OBSERVE_FACTS = _route("observe_facts", "POST", "/v1/facts")
_LIST_FACTS = _route("list_facts", "GET", "/v1/facts")
_DELETE_FACTS = _route("delete_facts", "DELETE", "/v1/facts")
_PIN = _route("pin", "POST", "/v1/facts/pin")
_FACT_HISTORY = _route("fact_history", "GET", "/v1/facts/{fact_id}/history")
_UNPIN_FACT = _route("unpin_fact", "POST", "/v1/facts/{fact_id}/unpin")
_PIN_FACT = _route("pin_fact", "POST", "/v1/facts/{fact_id}/pin")
_DELETE_FACT = _route("delete_fact", "DELETE", "/v1/facts/{fact_id}")
_ADD_MEMORIES = _route("add_memories", "POST", "/v1/memories")
_ADD_DOCUMENT = _route("add_document", "POST", "/v1/documents")
_UPLOAD_DOCUMENT = _route("upload_document", "POST", "/v1/documents")
_LIST_DOCUMENTS = _route("list_documents", "GET", "/v1/documents")
_GET_DOCUMENT = _route("get_document", "GET", "/v1/documents/{doc_id}")
_DELETE_DOCUMENT = _route("delete_document", "DELETE", "/v1/documents/{doc_id}")
_LIST_JOBS = _route("list_jobs", "GET", "/v1/jobs")
_GET_JOB = _route("get_job", "GET", "/v1/jobs/{job_id}")
_CANCEL_JOB = _route("cancel_job", "DELETE", "/v1/jobs/{job_id}")
_ADD_TASK_ITEM = _route("add_task_item", "POST", "/v1/tasks/{task_id}/items")
_LIST_TASK_ITEMS = _route("list_task_items", "GET", "/v1/tasks/{task_id}/items")
_READ_TASK_ITEM = _route("read_task_item", "GET", "/v1/tasks/{task_id}/items/{key}")
_LIST_SUMMARIES = _route("list_summaries", "GET", "/v1/tasks/{task_id}/summaries")
_READ_SUMMARY = _route("read_summary", "GET", "/v1/tasks/{task_id}/summaries/{version}")
_END_TASK = _route("end_task", "DELETE", "/v1/tasks/{task_id}")
_PROMOTE = _route("promote", "POST", "/v1/tasks/{task_id}/promote")
_DELETE_NAMESPACE = _route("delete_namespace", "DELETE", "/v1/namespaces/{namespace}")


def health() -> Call[Health]:
    return _HEALTH.call(_reads(Health))


def metrics() -> Call[str]:
    return _METRICS.call(_text)


def recall(namespace: str, query: str, *, budget: int | None, task_id: str | None,
           filters: Mapping[str, Any] | None, min_score: float | None) -> Call[Recall]:
    body = _body(namespace=namespace, query=query, budget=budget, task_id=task_id, filters=filters,
                 min_score=min_score)
    return _RECALL.call(_reads(Recall), json=body)


def context(namespace: str, messages: Sequence[Mapping[str, Any]], **options: Any) -> Call[Context]:
    return _CONTEXT.call(_reads(Context), json=_body(namespace=namespace, messages=list(messages), **options))


def search(namespace: str, query: str, *, k: int | None) -> Call[Search]:
    return _SEARCH.call(_reads(Search), json=_body(namespace=namespace, query=query, k=k))


def observe_facts(namespace: str, text: str, *, scope: str | None, source: str | None,
                  task_id: str | None) -> Call[FactChange]:
    body = _body(namespace=namespace, text=text, scope=scope, source=source, task_id=task_id)
    return _OBSERVE_FACTS.call(_reads(FactChange), json=body)


def list_facts(namespace: str, *, pinned: bool | None) -> Call[FactList]:
    params = _ns(namespace) if pinned is None else {**_ns(namespace), "pinned": str(pinned).lower()}
    return _LIST_FACTS.call(_reads(FactList), params=params)


def delete_facts(namespace: str) -> Call[Deleted]:
    return _DELETE_FACTS.call(_reads(Deleted), params=_ns(namespace))


def pin(namespace: str, text: str | None, *, key: str | None, value: str | None, scope: str | None,
        source: str | None) -> Call[FactChange]:
    if text is None and (key is None or value is None):
        raise ValueError("pin needs the constraint's text, or both key= and value=")
    body = _body(namespace=namespace, text=text, key=key, value=value, scope=scope, source=source)
    return _PIN.call(_reads(FactChange), json=body)


def fact_history(namespace: str, fact_id: str) -> Call[FactList]:
    return _FACT_HISTORY.call(_reads(FactList), segments={"fact_id": fact_id}, params=_ns(namespace))


def unpin_fact(namespace: str, fact_id: str) -> Call[Fact]:
    return _UNPIN_FACT.call(_reads(Fact), segments={"fact_id": fact_id}, params=_ns(namespace))


def pin_fact(namespace: str, fact_id: str) -> Call[Fact]:
    return _PIN_FACT.call(_reads(Fact), segments={"fact_id": fact_id}, params=_ns(namespace))


def delete_fact(namespace: str, fact_id: str) -> Call[Deleted]:
    return _DELETE_FACT.call(_reads(Deleted), segments={"fact_id": fact_id}, params=_ns(namespace))


def add_memories(namespace: str, messages: Sequence[str | Mapping[str, Any]]) -> Call[MemoriesStored]:
    turns = [{"text": m} if isinstance(m, str) else dict(m) for m in messages]
    return _ADD_MEMORIES.call(_reads(MemoriesStored), json={"namespace": namespace, "messages": turns})


def _background(background: bool | None) -> dict[str, str] | None:
    return None if background is None else {"background": str(background).lower()}


def add_document(namespace: str, text: str, *, background: bool | None, **fields: Any) -> Call[DocumentResult | Job]:
    body = _body(namespace=namespace, text=text, **fields)
    return _ADD_DOCUMENT.call(_ingested, json=body, params=_background(background))


def upload_document(namespace: str, file: FileInput, *, filename: str | None, doc_id: str | None,
                    project: str | None, tags: Sequence[str] | None, modified_at: str | None,
                    background: bool | None) -> Call[DocumentResult | Job]:
    if isinstance(file, bytes):
        if not filename:
            raise ValueError("upload_document needs filename= with bytes: the service picks the loader by its "
                             "suffix and derives the document id from it")
        content = file
    else:
        path = Path(file)
        content = path.read_bytes()
        filename = filename or path.name
        if modified_at is None:  # as `memory ingest` would date it: by the file's own time, not the upload's
            modified_at = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat()
    data = _body(namespace=namespace, doc_id=doc_id, project=project, tags=list(tags) if tags else None,
                 modified_at=modified_at)
    return _UPLOAD_DOCUMENT.call(_ingested, data=data, files={"file": (filename, content)},
                                 params=_background(background))


def list_documents(namespace: str, *, kind: str | None = None, limit: int | None = None,
                   offset: int | None = None) -> Call[DocumentList]:
    params = _body(namespace=namespace, kind=kind, limit=limit, offset=offset)
    return _LIST_DOCUMENTS.call(_reads(DocumentList), params=params)


def get_document(namespace: str, doc_id: str) -> Call[Document]:
    return _GET_DOCUMENT.call(_reads(Document), segments={"doc_id": doc_id}, params=_ns(namespace))


def delete_document(namespace: str, doc_id: str) -> Call[DeletedDocument]:
    return _DELETE_DOCUMENT.call(_reads(DeletedDocument), segments={"doc_id": doc_id}, params=_ns(namespace))


def list_jobs(namespace: str) -> Call[JobList]:
    return _LIST_JOBS.call(_reads(JobList), params=_ns(namespace))


def get_job(namespace: str, job_id: str) -> Call[Job]:
    return _GET_JOB.call(_reads(Job), segments={"job_id": job_id}, params=_ns(namespace))


def cancel_job(namespace: str, job_id: str) -> Call[Job]:
    return _CANCEL_JOB.call(_reads(Job), segments={"job_id": job_id}, params=_ns(namespace))


def add_task_item(namespace: str, task_id: str, text: str, **fields: Any) -> Call[TaskItemAdded]:
    return _ADD_TASK_ITEM.call(_reads(TaskItemAdded), segments={"task_id": task_id},
                               json=_body(namespace=namespace, text=text, **fields))


def list_task_items(namespace: str, task_id: str) -> Call[TaskItemList]:
    return _LIST_TASK_ITEMS.call(_reads(TaskItemList), segments={"task_id": task_id}, params=_ns(namespace))


def read_task_item(namespace: str, task_id: str, key: str, *, page: int | None,
                   page_tokens: int | None) -> Call[TaskPage]:
    params = _body(namespace=namespace, page=page, page_tokens=page_tokens)
    return _READ_TASK_ITEM.call(_reads(TaskPage), segments={"task_id": task_id, "key": key}, params=params)


def list_summaries(namespace: str, task_id: str) -> Call[SummaryList]:
    return _LIST_SUMMARIES.call(_reads(SummaryList), segments={"task_id": task_id}, params=_ns(namespace))


def read_summary(namespace: str, task_id: str, version: int) -> Call[Summary]:
    return _READ_SUMMARY.call(_reads(Summary), segments={"task_id": task_id, "version": str(version)},
                              params=_ns(namespace))


def end_task(namespace: str, task_id: str) -> Call[Deleted]:
    return _END_TASK.call(_reads(Deleted), segments={"task_id": task_id}, params=_ns(namespace))


def promote(namespace: str, task_id: str, keys: Sequence[str], *, project: str | None,
            tags: Sequence[str] | None) -> Call[tuple[DocumentResult, ...]]:
    body = _body(namespace=namespace, keys=list(keys), project=project, tags=list(tags) if tags else None)
    return _PROMOTE.call(_promoted, segments={"task_id": task_id}, json=body)


def delete_namespace(namespace: str) -> Call[NamespaceDeleted]:
    return _DELETE_NAMESPACE.call(_reads(NamespaceDeleted), segments={"namespace": namespace})
