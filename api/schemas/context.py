"""Request and response bodies of /v1/context: one agent turn in, the messages and tools to send out.

The messages and tool schemas are typed loosely here (lists of JSON objects): the library checks the OpenAI chat
format itself and names the message at fault ("messages[3] answers tool call 'c1', which ..."), which no pydantic
union of message shapes would say as plainly. The allocation and processor names are documented in the schema
and checked by the library, for the same reason.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from pydantic import BaseModel, Field, WithJsonSchema

from api.schemas.base import Namespace, RequestModel, TaskId
from api.schemas.recall import RecallFilters
from memory.context import ALIASES, MAX_SAFETY_MARGIN, PRESETS, PROCESSORS, SHARED, ActionKind, ContextResult
from memory.context import ContextRequest as Turn

__all__ = [
    "ActionPublic", "BudgetPublic", "ContextPublic", "ContextReportPublic", "ContextRequest", "TokensPublic",
]

MAX_MESSAGES = 10_000
MAX_TOOLS = 1_000

# "none" keeps a tool's results as they are (memory.context.history); the aliases are former names.
_PROCESSOR_NAMES = [*(p.name for p in PROCESSORS), *ALIASES, "none"]
_SHARE = {"type": "number", "minimum": 0, "maximum": 1}
Allocation = Annotated[str | dict[str, Any], WithJsonSchema({
    "anyOf": [{"type": "string", "enum": list(PRESETS)},
              {"type": "object", "properties": dict.fromkeys(SHARED, _SHARE), "additionalProperties": False}],
    "description": "a preset (agent, chat, rag) or shares of the categories cut to fit (the others get 0)",
})]
ProcessorName = Annotated[str, Field(json_schema_extra={"enum": _PROCESSOR_NAMES})]


class ContextRequest(RequestModel):
    """One agent turn to fit into `window` tokens; fields left out take the [context] settings."""

    unstored = frozenset({"query"})
    free_text = frozenset({"system"})
    namespace: Namespace
    messages: list[dict[str, Any]] = Field(
        max_length=MAX_MESSAGES,
        description="OpenAI chat messages (system, developer, user, assistant with tool_calls, tool), oldest first; "
                    "`pinned: true` keeps one whatever the budget, `ephemeral: true` drops it after its turn")
    window: int = Field(ge=1, strict=True, description="the model's context window, in tokens")
    task_id: TaskId | None = Field(default=None, description="where offloaded tool results are kept; without it "
                                                             "one derived from the conversation's first messages")
    output_reserve: int | None = Field(default=None, ge=0, strict=True,
                                       description="tokens kept for the reply (default a quarter of the window, "
                                                   "at most context.output_reserve)")
    safety_margin: float | None = Field(default=None, ge=0.0, le=MAX_SAFETY_MARGIN, strict=True,
                                        description="share of the rest kept back for a miscount")
    allocation: Allocation | None = None
    system: str | None = Field(default=None, description="the system prompt (sent before any system messages)")
    tools: list[dict[str, Any]] | None = Field(
        default=None, max_length=MAX_TOOLS,
        description='OpenAI tool schemas ({"type": "function", "function": {"name", "description", "parameters"}})')
    query: str | None = Field(default=None, description="what to recall for; default the latest user message")
    recall: bool = Field(default=True, strict=True, description="fill the retrieval share from memory")
    filters: RecallFilters | None = None
    min_score: float | None = Field(default=None, ge=0.0, le=1.0)
    ephemeral_tools: list[str] | None = Field(
        default=None, max_length=MAX_TOOLS,
        description="tools whose results count only in the turn they arrive (default context.ephemeral_tools)")
    processors: dict[str, ProcessorName] | None = Field(
        default=None, max_length=MAX_TOOLS,
        description='tool name -> processor for its results ("none" keeps them as they are); others are chosen '
                    "by their content")
    parent_task_id: TaskId | None = Field(
        default=None, description="makes task_id a sub-task of this task: the parent's context then sees only its "
                                  "`result` items, never its history or summaries")
    read_tool: bool | None = Field(
        default=None, strict=True,
        description="add the memory_read tool to the answer's tools, so the agent can read back what was set "
                    "aside (default context.read_tool)")

    def turn(self, namespace: str) -> Turn:
        """The library's request for this body in `namespace` (the one the caller's key may use, as checked):
        every field memory.context.ContextRequest declares, by name."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(Turn)}
        fields["namespace"] = namespace
        fields["filters"] = self.filters.model_dump(exclude_none=True) if self.filters else None
        return Turn(**fields)


class BudgetPublic(BaseModel):
    """The window and what it leaves for the input: available = floor((window - output_reserve) * (1 - margin))."""

    window: int
    output_reserve: int
    margin: float
    available: int


class TokensPublic(BaseModel):
    """Tokens of what is sent, by category (cl100k, OpenAI's chat formula); the eight add up to `total`."""

    system: int
    tools: int
    constraints: int
    summary: int = Field(description="the summary of the compacted history (0 when there is none)")
    retrieval: int
    history: int
    tool_results: int
    current: int
    total: int


class ActionPublic(BaseModel):
    """One change made to the turn. Every action carries every field: one that does not apply is null."""

    kind: ActionKind
    index: int | None = Field(description="the message's place in the request; null for the tool set")
    tokens_before: int
    tokens_after: int
    key: str | None = Field(description="the task item holding the whole original "
                                        "(GET /v1/tasks/{task_id}/items/{key})")
    tool: str | None = Field(description="the tool whose result or schema it is")
    detail: str | None = Field(description="the processor used, or the tools left out")


class SummaryInUsePublic(BaseModel):
    """The history summary sent with this turn: GET /v1/tasks/{task_id}/summaries/{version} shows it whole."""

    version: int
    first: int = Field(description="the first message it covers (its index in the request)")
    last: int = Field(description="the last message it covers")
    tokens: int
    covered_tokens: int = Field(description="tokens of the messages it stands for")
    created: bool = Field(description="whether this turn wrote it (a compaction) or reused the stored one")
    summariser: str = Field(description='"extractive", or "model:<name>" when the optional model wrote it')


class ContextReportPublic(BaseModel):
    """Where every token went: the budget, tokens by category, the shared categories' grants, every action, the
    hash of the cache-stable prefix (system prompt, tools, constraints) and warnings."""

    budget: BudgetPublic
    tokens: TokensPublic
    grants: dict[str, int] = Field(description="tokens granted to tools, retrieval, history and tool_results")
    actions: list[ActionPublic]
    prefix_hash: str
    task_id: str = Field(description="the request's task, or the one derived for it")
    retrieved: int = Field(description="memory items in the retrieval block")
    warnings: list[str]
    tools_left_out: list[str]
    summary: SummaryInUsePublic | None = Field(description="the history summary in use, or null")
    as_given: bool = Field(description="true when the whole turn fitted under the watermark and went as the agent "
                                       "gave it: nothing processed, pruned, compacted or left out")


class ContextPublic(BaseModel):
    """The messages and tools to send, in order, and the report.

    The messages are OpenAI chat messages as the library wrote them, null fields kept: an assistant message that
    only calls tools has `"content": null`, which the providers accept.
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    report: ContextReportPublic

    @classmethod
    def of(cls, result: ContextResult) -> ContextPublic:
        """From a library result."""
        r = result.report
        b = r.budget
        report = ContextReportPublic(
            budget=BudgetPublic(window=b.window, output_reserve=b.output_reserve, margin=b.margin,
                                available=b.available),
            tokens=TokensPublic(**r.tokens), grants=dict(r.grants),
            actions=[ActionPublic(kind=a.kind, index=a.index, tokens_before=a.tokens_before,
                                  tokens_after=a.tokens_after, key=a.key, tool=a.tool, detail=a.detail)
                     for a in r.actions],
            prefix_hash=r.prefix_hash, task_id=r.task_id, retrieved=r.retrieved, warnings=list(r.warnings),
            tools_left_out=list(r.tools_left_out),
            summary=SummaryInUsePublic(**dataclasses.asdict(r.summary)) if r.summary is not None else None,
            as_given=r.as_given)
        return cls(messages=list(result.messages), tools=list(result.tools), report=report)
