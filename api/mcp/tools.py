"""The MCP tools: each one's argument model (the REST body it mirrors), its description, and the library call.

An argument model is the REST request model itself, with `namespace` made optional (the session's namespace when
left out: an agent should not spend tokens repeating it) and, for the task tools, the path's ids as fields; so a
tool refuses what the REST route refuses, in the same sentence. Descriptions are short on purpose: every agent
pays for them in its prompt on every turn (bench/mcp_tools.py counts them).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, create_model

from api.deps import Access
from api.schemas.base import Namespace, RequestModel, TaskId
from api.schemas.context import ContextPublic, ContextRequest
from api.schemas.experience import DocumentCreate, DocumentResultPublic, MemoriesCreate, MemoriesPublic
from api.schemas.facts import FactChangePublic, FactListPublic, FactObserve, FactPin, FactPublic
from api.schemas.jobs import JobPublic
from api.schemas.recall import RecallPublic, RecallRequest
from api.schemas.tasks import TaskItemAdded, TaskItemCreate, TaskPage
from memory.context import READ_TOOL, task_of
from memory.experience import MemoryTurn
from memory.service import Memory

__all__ = ["TOOLS", "Answer", "Call", "ToolSpec"]


@dataclass(frozen=True)
class Call:
    """One tool call: the store, what the caller's key may use, and the validated arguments."""

    memory: Memory
    access: Access
    default_namespace: str
    args: Any

    @property
    def namespace(self) -> str:
        """The namespace the call names, else the session's; checked against the caller's key."""
        named = self.args.namespace
        return self.access.namespace(self.default_namespace if named is None else named)


@dataclass(frozen=True)
class Answer:
    """What a tool returns: the text the model reads, and the same answer as REST gives, as structured content."""

    text: str
    structured: dict[str, Any]

    @classmethod
    def of(cls, public: BaseModel) -> Answer:
        """The REST answer `public`, as JSON text and as structured content."""
        data = public.model_dump(mode="json")
        return cls(json.dumps(data, ensure_ascii=False, separators=(",", ":")), data)


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its name, description, argument model, whether it only reads, and the library call behind it."""

    name: str
    description: str
    model: type[RequestModel]
    run: Callable[[Call], Answer]
    read_only: bool = False
    destructive: bool = False


_SESSION_NAMESPACE = Field(default=None, description="default: this session's namespace")


def _arguments(name: str, base: type[RequestModel], **fields: Any) -> type[RequestModel]:
    """`base` with an optional namespace and `fields` added: the tool's argument model."""
    model: type[RequestModel] = create_model(
        name, __base__=base, __doc__=base.__doc__, namespace=(Namespace | None, _SESSION_NAMESPACE), **fields)
    return model


class _FactsQuery(RequestModel):
    """Which facts to list."""

    pinned: bool | None = Field(default=None, description="true: pinned only; false: unpinned only")


class _FactId(RequestModel):
    """The fact to delete, with every version of its key."""

    fact_id: str = Field(min_length=1, max_length=200)


_READ_PAGE_TOKENS = 2000  # what one page of a set-aside text costs the model, at most


class _SetAsideRead(RequestModel):
    """A text the context set aside (a tool result, compacted messages), named by its key, one page at a time."""

    key: str = Field(min_length=1, max_length=300, description="the task item named in the context, e.g. t-42/r7")
    page: int | None = Field(default=None, ge=1, strict=True, description="which page (default 1)")


class _TaskRead(RequestModel):
    """An item to read back, whole or by page."""

    task_id: TaskId
    key: str = Field(min_length=1)
    page: int | None = Field(default=None, ge=1, strict=True)
    page_tokens: int | None = Field(default=None, ge=1, le=1_000_000, strict=True)


def _recall(call: Call) -> Answer:
    a = call.args
    filters = a.filters.model_dump(exclude_none=True) if a.filters else None
    result = call.memory.recall(call.namespace, a.query, a.budget, task_id=a.task_id, filters=filters,
                                min_score=a.min_score)
    public = RecallPublic.of(result)
    data = public.model_dump(mode="json")
    # The model reads the prompt-ready block; the items stay in the structured content for the agent's code.
    return Answer(result.rendered or "Nothing stored is relevant enough to this query.", data)


def _context(call: Call) -> Answer:
    return Answer.of(ContextPublic.of(call.memory.context(call.args.turn(call.namespace))))


def _remember(call: Call) -> Answer:
    a = call.args
    change = call.memory.facts.observe(call.namespace, a.text, scope=a.scope, source=a.source, task_id=a.task_id)
    return Answer.of(FactChangePublic.of(change))


def _pin(call: Call) -> Answer:
    a = call.args
    change = call.memory.facts.pin(call.namespace, text=a.text, key=a.key, value=a.value, scope=a.scope,
                                   source=a.source)
    return Answer.of(FactChangePublic.of(change))


def _facts(call: Call) -> Answer:
    records = call.memory.facts.list_facts(call.namespace, pinned=call.args.pinned)
    return Answer.of(FactListPublic(facts=[FactPublic.of(r) for r in records]))


def _forget_fact(call: Call) -> Answer:
    deleted = call.memory.facts.delete(call.namespace, call.args.fact_id)
    return Answer(json.dumps({"deleted": deleted}), {"deleted": deleted})


def _add_memories(call: Call) -> Answer:
    turns = [MemoryTurn(text=m.text, speaker=m.speaker, timestamp=m.timestamp, metadata=m.metadata,
                        project=m.project, tags=tuple(m.tags), conversation=m.conversation)
             for m in call.args.messages]
    results, facts = call.memory.remember(call.namespace, turns)
    return Answer.of(MemoriesPublic(stored=len(results), ids=[r.doc_id for r in results], facts=facts))


def _ingest_document(call: Call) -> Answer:
    document = call.args.document()
    # As POST /v1/documents does without `background`: a document over jobs.background_chars becomes a job.
    if len(document.text) > call.memory.config.jobs.background_chars:
        return Answer.of(JobPublic.of(call.memory.submit_document(call.namespace, document)))
    result = call.memory.add_document(call.namespace, document)
    return Answer.of(DocumentResultPublic(doc_id=result.doc_id, chunks=result.chunks, status=result.status))


def _task_put(call: Call) -> Answer:
    a = call.args
    added = call.memory.tasks.add(call.namespace, a.task_id, a.kind, a.text, ephemeral=a.ephemeral, ttl_s=a.ttl_s,
                                  parent_task_id=a.parent_task_id, metadata=a.metadata)
    return Answer.of(TaskItemAdded.of(added))


def _task_get(call: Call) -> Answer:
    a = call.args
    page = TaskPage.of(call.memory.tasks.read(call.namespace, a.task_id, a.key, page=a.page,
                                              page_tokens=a.page_tokens))
    text = page.text
    if page.page < page.pages:  # the model must know there is more, and how to ask for it
        text += f"\n\n[page {page.page} of {page.pages}: call task_get with page={page.page + 1} for the next]"
    return Answer(text, page.model_dump(mode="json"))


def _memory_read(call: Call) -> Answer:
    a = call.args
    page = TaskPage.of(call.memory.tasks.read(call.namespace, task_of(a.key), a.key, page=a.page or 1,
                                              page_tokens=_READ_PAGE_TOKENS))
    text = page.text
    if page.page < page.pages:
        text += (f"\n\n[page {page.page} of {page.pages}: call {READ_TOOL} with key {a.key!r} and page "
                 f"{page.page + 1} for the next]")
    return Answer(text, page.model_dump(mode="json"))


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec("recall", "What memory holds for this query (pinned constraints, task items, relevant passages), "
             "as a prompt-ready block within `budget` tokens.",
             _arguments("RecallArguments", RecallRequest), _recall, read_only=True),
    ToolSpec("context", "Fit a whole turn (OpenAI-format messages, tools) into `window` tokens: prune, offload, "
             "compact, restate pinned constraints, add recalled memory.",
             _arguments("ContextArguments", ContextRequest), _context),
    ToolSpec("remember", "Store the constraints and preferences a user message states (e.g. 'never use "
             "Python 2'); returns what was stored, superseded or ignored.",
             _arguments("RememberArguments", FactObserve), _remember),
    ToolSpec("pin", "Pin a constraint (`text`, or `key` and `value`) so every recall and context includes it.",
             _arguments("PinArguments", FactPin), _pin),
    ToolSpec("facts", "List the stored facts, pinned first.", _arguments("FactsArguments", _FactsQuery), _facts,
             read_only=True),
    ToolSpec("forget_fact", "Delete a fact by id, with every version of its key.",
             _arguments("ForgetFactArguments", _FactId), _forget_fact, destructive=True),
    ToolSpec("add_memories", "Store conversation turns (or other short experiences) for later recall.",
             _arguments("AddMemoriesArguments", MemoriesCreate), _add_memories),
    ToolSpec("ingest_document", "Store a document's text, chunked for recall; the same `doc_id` replaces it.",
             _arguments("IngestDocumentArguments", DocumentCreate), _ingest_document),
    ToolSpec("task_put", "Keep a tool result, plan or note for a task; a long one is offloaded behind its `key`.",
             _arguments("TaskPutArguments", TaskItemCreate, task_id=(TaskId, ...)), _task_put),
    ToolSpec("task_get", "Read a task item back by `key`, whole or one page of `page_tokens` at a time.",
             _arguments("TaskGetArguments", _TaskRead), _task_get, read_only=True),
    # The read tool /v1/context offers with read_tool: the same name, so a model answered by MCP can call it.
    ToolSpec(READ_TOOL, "Read back, one page at a time, text the context set aside to fit the window (a tool result "
             "or earlier messages named by a reference such as 'task item t-42/r7').",
             _arguments("MemoryReadArguments", _SetAsideRead), _memory_read, read_only=True),
)
