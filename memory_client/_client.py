"""`Client`: the service's REST API as blocking method calls, one per endpoint, over httpx."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx

from memory_client import _calls as calls
from memory_client._calls import Call, FileInput
from memory_client._errors import NotFound, ValidationFailed
from memory_client._http import (
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    RETRYABLE,
    Settings,
    backoff_s,
    failure,
    namespace_of,
    read_answer,
    request_args,
)
from memory_client._models import Context, Health, Recall, Search
from memory_client._reading import PAGE_TOKENS, READ_TOOL, page_text, read_call
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

__all__ = ["Client"]

T = TypeVar("T")


class Client:
    """The memory service over HTTP, blocking.

    `base_url` and `api_key` default to $MEMORY_URL (else http://127.0.0.1:8000) and $MEMORY_API_KEY; `namespace`
    is used by every call that does not name its own. A refused or timed-out connect is tried `retries` more times
    with a short backoff; nothing else is retried. Pass `transport=` (any httpx transport) or a ready
    `http_client=` to choose how requests travel; a given http client is the caller's to close.
    """

    def __init__(self, base_url: str | None = None, *, api_key: str | None = None, namespace: str | None = None,
                 timeout: float | httpx.Timeout | None = None, retries: int = DEFAULT_RETRIES,
                 transport: httpx.BaseTransport | None = None, http_client: httpx.Client | None = None) -> None:
        if transport is not None and http_client is not None:
            raise ValueError("pass transport= or http_client=, not both: a given http client has its own transport")
        client_url = http_client.base_url if http_client is not None and str(http_client.base_url) else None
        self._settings = Settings.resolve(base_url, api_key, timeout, retries, client_url)
        self.namespace = namespace
        self._owned = http_client is None
        timeout = self._settings.timeout or DEFAULT_TIMEOUT
        self._http = http_client or httpx.Client(transport=transport, timeout=timeout)

    @property
    def base_url(self) -> str:
        """The service's address, without a trailing slash."""
        return self._settings.base_url

    def close(self) -> None:
        """Close the connection pool (not an http client that was passed in)."""
        if self._owned:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            request = self._http.build_request(**request_args(call, self._settings))
            try:
                response = self._http.send(request)
            except RETRYABLE as exc:
                if attempt < self._settings.retries:
                    time.sleep(backoff_s(attempt))
                    attempt += 1
                    continue
                raise failure(call, self._settings, exc, attempt + 1) from exc
            except httpx.TransportError as exc:
                raise failure(call, self._settings, exc, attempt + 1) from exc
            return read_answer(call, response)

    def _ns(self, namespace: str | None) -> str:
        return namespace_of(namespace, self.namespace)

    def health(self) -> Health:
        """GET /healthz: liveness, and with a key that may see them the model and record counts."""
        return self._send(calls.health())

    def metrics(self) -> str:
        """GET /metrics: the Prometheus text (with keys configured, a key for every namespace is needed)."""
        return self._send(calls.metrics())

    def recall(self, query: str, *, budget: int | None = None, task_id: str | None = None,
               filters: Mapping[str, Any] | None = None, min_score: float | None = None,
               namespace: str | None = None) -> Recall:
        """POST /v1/recall: what the agent must know this turn inside `budget` tokens, pinned facts first."""
        return self._send(calls.recall(self._ns(namespace), query, budget=budget, task_id=task_id,
                                       filters=filters, min_score=min_score))

    def context(self, messages: Sequence[Mapping[str, Any]], *, window: int, task_id: str | None = None,
                output_reserve: int | None = None, safety_margin: float | None = None,
                allocation: str | Mapping[str, float] | None = None, system: str | None = None,
                tools: Sequence[Mapping[str, Any]] | None = None, query: str | None = None,
                recall: bool | None = None, filters: Mapping[str, Any] | None = None,
                min_score: float | None = None, ephemeral_tools: Sequence[str] | None = None,
                processors: Mapping[str, str] | None = None, parent_task_id: str | None = None,
                read_tool: bool | None = None, namespace: str | None = None) -> Context:
        """POST /v1/context: an agent's whole turn (OpenAI chat messages) fitted into `window` tokens."""
        return self._send(calls.context(
            self._ns(namespace), messages, window=window, task_id=task_id, output_reserve=output_reserve,
            safety_margin=safety_margin, allocation=allocation, system=system, tools=tools, query=query,
            recall=recall, filters=filters, min_score=min_score, ephemeral_tools=ephemeral_tools,
            processors=processors, parent_task_id=parent_task_id, read_tool=read_tool))

    def search(self, query: str, *, k: int | None = None, namespace: str | None = None) -> Search:
        """POST /v1/search: an experience search laid open (terms, fusion weights, each retriever's rank)."""
        return self._send(calls.search(self._ns(namespace), query, k=k))

    def observe_facts(self, text: str, *, scope: str | None = None, source: str | None = None,
                      task_id: str | None = None, namespace: str | None = None) -> FactChange:
        """POST /v1/facts: read a user message for facts by rules and store them; every sentence's outcome."""
        return self._send(calls.observe_facts(self._ns(namespace), text, scope=scope, source=source,
                                              task_id=task_id))

    def pin(self, text: str | None = None, *, key: str | None = None, value: str | None = None,
            scope: str | None = None, source: str | None = None, namespace: str | None = None) -> FactChange:
        """POST /v1/facts/pin: pin a constraint (its text, or key= and value=) so every recall carries it."""
        return self._send(calls.pin(self._ns(namespace), text, key=key, value=value, scope=scope, source=source))

    def list_facts(self, *, pinned: bool | None = None, namespace: str | None = None) -> FactList:
        """GET /v1/facts: the current facts, pinned first (only pinned or unpinned ones with `pinned`)."""
        return self._send(calls.list_facts(self._ns(namespace), pinned=pinned))

    def fact_history(self, fact_id: str, *, namespace: str | None = None) -> FactList:
        """GET /v1/facts/{fact_id}/history: every version of the fact's key, oldest first."""
        return self._send(calls.fact_history(self._ns(namespace), fact_id))

    def pin_fact(self, fact_id: str, *, namespace: str | None = None) -> Fact:
        """POST /v1/facts/{fact_id}/pin: pin a stored fact; the answer is its new version."""
        return self._send(calls.pin_fact(self._ns(namespace), fact_id))

    def unpin_fact(self, fact_id: str, *, namespace: str | None = None) -> Fact:
        """POST /v1/facts/{fact_id}/unpin: unpin a fact (recalled only when relevant); its new version."""
        return self._send(calls.unpin_fact(self._ns(namespace), fact_id))

    def delete_fact(self, fact_id: str, *, namespace: str | None = None) -> Deleted:
        """DELETE /v1/facts/{fact_id}: hard-delete the fact and every version of its key."""
        return self._send(calls.delete_fact(self._ns(namespace), fact_id))

    def delete_facts(self, *, namespace: str | None = None) -> Deleted:
        """DELETE /v1/facts: hard-delete every fact of the namespace."""
        return self._send(calls.delete_facts(self._ns(namespace)))

    def add_memories(self, messages: Sequence[str | Mapping[str, Any]], *,
                     namespace: str | None = None) -> MemoriesStored:
        """POST /v1/memories: store conversation turns ({"text", "speaker"?, "timestamp"?, ...}, or plain text)."""
        return self._send(calls.add_memories(self._ns(namespace), messages))

    def add_document(self, text: str, *, title: str | None = None, source: str | None = None,
                     doc_id: str | None = None, updated_at: str | None = None,
                     metadata: Mapping[str, Any] | None = None, project: str | None = None,
                     tags: Sequence[str] | None = None, background: bool | None = None,
                     namespace: str | None = None) -> DocumentResult | Job:
        """POST /v1/documents (JSON): ingest a text; a Job instead when it became a background ingest job."""
        return self._send(calls.add_document(
            self._ns(namespace), text, title=title, source=source, doc_id=doc_id, updated_at=updated_at,
            metadata=metadata, project=project, tags=list(tags) if tags is not None else None,
            background=background))

    def upload_document(self, file: FileInput, *, filename: str | None = None, doc_id: str | None = None,
                        project: str | None = None, tags: Sequence[str] | None = None,
                        modified_at: str | None = None, background: bool | None = None,
                        namespace: str | None = None) -> DocumentResult | Job:
        """POST /v1/documents (multipart): upload a file by path, or bytes with `filename`; a Job when it became one."""
        return self._send(calls.upload_document(self._ns(namespace), file, filename=filename, doc_id=doc_id,
                                                project=project, tags=tags, modified_at=modified_at,
                                                background=background))

    def list_documents(self, *, kind: str | None = None, limit: int | None = None, offset: int | None = None,
                       namespace: str | None = None) -> DocumentList:
        """GET /v1/documents: the namespace's documents and memories (of one `kind`: "document" or "memory"),
        newest first; `limit` and `offset` page through them, `total` counts them all."""
        return self._send(calls.list_documents(self._ns(namespace), kind=kind, limit=limit, offset=offset))

    def get_document(self, doc_id: str, *, namespace: str | None = None) -> Document:
        """GET /v1/documents/{doc_id}: one document's record."""
        return self._send(calls.get_document(self._ns(namespace), doc_id))

    def delete_document(self, doc_id: str, *, namespace: str | None = None) -> DeletedDocument:
        """DELETE /v1/documents/{doc_id}: remove the document everywhere (text, lexical index, vectors)."""
        return self._send(calls.delete_document(self._ns(namespace), doc_id))

    def list_jobs(self, *, namespace: str | None = None) -> JobList:
        """GET /v1/jobs: the namespace's ingest jobs, newest first."""
        return self._send(calls.list_jobs(self._ns(namespace)))

    def get_job(self, job_id: str, *, namespace: str | None = None) -> Job:
        """GET /v1/jobs/{job_id}: one ingest job's state, stage and progress, then what it stored or why not."""
        return self._send(calls.get_job(self._ns(namespace), job_id))

    def cancel_job(self, job_id: str, *, namespace: str | None = None) -> Job:
        """DELETE /v1/jobs/{job_id}: cancel a queued or running ingest job (nothing of it is stored)."""
        return self._send(calls.cancel_job(self._ns(namespace), job_id))

    def add_task_item(self, task_id: str, text: str, *, kind: str, ephemeral: bool | None = None,
                      ttl_s: int | None = None, parent_task_id: str | None = None,
                      metadata: Mapping[str, Any] | None = None, namespace: str | None = None) -> TaskItemAdded:
        """POST /v1/tasks/{task_id}/items: add a scratch item (`kind`: note, plan, tool_result, result, ...)."""
        return self._send(calls.add_task_item(self._ns(namespace), task_id, text, kind=kind, ephemeral=ephemeral,
                                              ttl_s=ttl_s, parent_task_id=parent_task_id, metadata=metadata))

    def list_task_items(self, task_id: str, *, namespace: str | None = None) -> TaskItemList:
        """GET /v1/tasks/{task_id}/items: the task's live items, oldest first."""
        return self._send(calls.list_task_items(self._ns(namespace), task_id))

    def read_task_item(self, task_id: str, key: str, *, page: int | None = None, page_tokens: int | None = None,
                       namespace: str | None = None) -> TaskPage:
        """GET /v1/tasks/{task_id}/items/{key}: an item's whole text, or one page of `page_tokens` tokens."""
        return self._send(calls.read_task_item(self._ns(namespace), task_id, key, page=page,
                                               page_tokens=page_tokens))

    def answer_read(self, call: Mapping[str, Any], *, namespace: str | None = None) -> dict[str, Any]:
        """The tool message answering a model's call of the read tool (`read_tool=True` offers it): a page of
        the text the service set aside, or a sentence saying why it cannot be read."""
        read = read_call(call)
        if read.problem is not None:
            return {"role": "tool", "tool_call_id": read.call_id, "content": read.problem}
        try:
            page = self.read_task_item(read.task_id, read.key, page=read.page, page_tokens=PAGE_TOKENS,
                                         namespace=namespace)
        except (NotFound, ValidationFailed) as refused:
            return {"role": "tool", "tool_call_id": read.call_id, "content": f"{READ_TOOL}: {refused.detail}"}
        return {"role": "tool", "tool_call_id": read.call_id, "content": page_text(page)}

    def list_summaries(self, task_id: str, *, namespace: str | None = None) -> SummaryList:
        """GET /v1/tasks/{task_id}/summaries: every version of the task's compaction summary, oldest first."""
        return self._send(calls.list_summaries(self._ns(namespace), task_id))

    def read_summary(self, task_id: str, version: int, *, namespace: str | None = None) -> Summary:
        """GET /v1/tasks/{task_id}/summaries/{version}: one whole version of the task's compaction summary."""
        return self._send(calls.read_summary(self._ns(namespace), task_id, version))

    def end_task(self, task_id: str, *, namespace: str | None = None) -> Deleted:
        """DELETE /v1/tasks/{task_id}: end the task, removing it, its sub-tasks and all their items."""
        return self._send(calls.end_task(self._ns(namespace), task_id))

    def promote(self, task_id: str, keys: Sequence[str], *, project: str | None = None,
                tags: Sequence[str] | None = None, namespace: str | None = None) -> tuple[DocumentResult, ...]:
        """POST /v1/tasks/{task_id}/promote: copy the chosen items into experience memory, one document each."""
        return self._send(calls.promote(self._ns(namespace), task_id, keys, project=project, tags=tags))

    def delete_namespace(self, namespace: str | None = None) -> NamespaceDeleted:
        """DELETE /v1/namespaces/{namespace}: forget the whole namespace everywhere."""
        return self._send(calls.delete_namespace(self._ns(namespace)))
