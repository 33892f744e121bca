"""A request read into the turn every step works on: checked first, so a refused turn has written nothing.

The system prompt is `system` and the leading system and developer messages; the current turn starts at the latest
user message (it and the tool loop after it); the history is everything between. Retrieval searches for the
latest user message and, when that finds nothing relevant and the conversation began with another, for both: the
first says what the task is about ("write the full plan" alone finds nothing to the point).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memory.config import Config
from memory.context import allocation
from memory.context.budget import Budget, reserve_for
from memory.context.budget import budget as make_budget
from memory.context.messages import INSTRUCTION_ROLES, Message, parse_messages
from memory.context.model import Action, ContextRequest, SummaryInUse
from memory.context.processors import ALIASES, PROCESSORS
from memory.context.tools import Tool, parse_tools
from memory.errors import ValidationError
from memory.limits import check_length
from memory.namespaces import check_namespace
from memory.task.policy import check_task_id
from memory.tokens import TokenCounter

__all__ = ["NO_PROCESSOR", "Turn", "read_turn"]

NO_PROCESSOR = "none"


@dataclass
class Turn:
    """The request split into its parts, and what the steps decided for it (filled in as they run)."""

    request: ContextRequest
    budget: Budget
    weights: Mapping[str, float]
    messages: tuple[Message, ...]
    system: list[Message]
    history: list[Message]
    user: list[Message]
    tail: list[Message]
    tools: tuple[Tool, ...]
    ephemeral_tools: tuple[str, ...]
    processors: Mapping[str, str]
    query: str
    read_tool: bool
    fallback: str = ""  # retrieval's second query: the latest user message with the first (none: "")
    task_id: str = ""
    constraints: list[Message] = field(default_factory=list)
    restate: list[Message] = field(default_factory=list)
    retrieval: list[Message] = field(default_factory=list)
    retrieved: int = 0
    kept_tools: tuple[Tool, ...] = ()
    left_out: tuple[str, ...] = ()
    summary: list[Message] = field(default_factory=list)
    summary_in_use: SummaryInUse | None = None
    actions: list[Action] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def at(self) -> int:
        """The latest user message's index (the request's length when there is none)."""
        return self.user[0].index if self.user else len(self.messages)

    @property
    def called(self) -> tuple[str, ...]:
        """The tools the conversation has called, the most recently called first."""
        names = [c.name for m in reversed(self.messages) for c in reversed(m.tool_calls)]
        return tuple(dict.fromkeys(names))


def read_turn(request: ContextRequest, config: Config, counter: TokenCounter) -> Turn:
    """Check the whole request and split it; every refusal is a ValidationError naming what is wrong."""
    cfg = config.context
    check_namespace(request.namespace)
    reserve = request.output_reserve if request.output_reserve is not None else reserve_for(request.window,
                                                                                          cfg.output_reserve)
    window = make_budget(request.window, reserve,
                         cfg.safety_margin if request.safety_margin is None else request.safety_margin)
    weights = allocation.shares(cfg.allocation if request.allocation is None else request.allocation)
    messages = parse_messages(request.messages, counter)
    if not messages:
        raise ValidationError("messages must hold at least one message (the user's latest, at least)")
    tools = parse_tools(request.tools, counter)
    ephemeral = _names(request.ephemeral_tools, "ephemeral_tools", cfg.ephemeral_tools)
    chosen = _processors(request.processors)
    if request.system is not None and (not isinstance(request.system, str) or not request.system.strip()):
        raise ValidationError("system must be the system prompt as a non-empty string, or left out")
    if request.task_id is not None:
        check_task_id(request.task_id)
    if request.parent_task_id is not None:
        check_task_id(request.parent_task_id, "parent_task_id")
    read_tool = cfg.read_tool if request.read_tool is None else request.read_tool
    if not isinstance(read_tool, bool):
        raise ValidationError(f"read_tool must be true or false, got {str(read_tool)[:40]!r}")
    lead = 0
    while lead < len(messages) and messages[lead].role in INSTRUCTION_ROLES:
        lead += 1
    prompt = [Message(-1, "system", request.system)] if request.system is not None else []
    rest = list(messages[lead:])
    users = [i for i, m in enumerate(rest) if m.role == "user"]
    at = users[-1] if users else len(rest)
    query, fallback = _queries(request.query, rest, config)
    return Turn(request, window, weights, messages, [*prompt, *messages[:lead]], rest[:at], rest[at:at + 1],
                rest[at + 1:], tools, ephemeral, chosen, query, read_tool, fallback=fallback)


def _queries(query: object, rest: Sequence[Message], config: Config) -> tuple[str, str]:
    """The caller's query, else the latest user message; and the fallback (both user messages) when there is one."""
    if query is not None:
        if not isinstance(query, str):
            raise ValidationError(f"query must be a string, got {type(query).__name__}")
        check_length(query, config.limits.max_query_chars, "query", "limits.max_query_chars")
        return query, ""
    users = [m.content.replace("\x00", "").strip() for m in rest if m.role == "user" and not m.ephemeral]
    users = [u for u in users if u]
    if not users:
        return "", ""
    most = config.limits.max_query_chars
    both = f"{users[-1]}\n{users[0]}"[:most] if users[0] != users[-1] else ""
    return users[-1][:most], both


def _names(raw: object, field_name: str, default: Sequence[str]) -> tuple[str, ...]:
    if raw is None:
        return tuple(default)
    if isinstance(raw, str) or not isinstance(raw, Sequence) or not all(isinstance(n, str) for n in raw):
        raise ValidationError(f"{field_name} must be a list of tool names")
    return tuple(raw)


def _processors(raw: object) -> Mapping[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise ValidationError("processors must map tool names to a processor name (or \"none\")")
    names = {p.name for p in PROCESSORS} | set(ALIASES) | {NO_PROCESSOR}
    for tool, name in raw.items():
        if name not in names:
            raise ValidationError(f"processors.{tool} is {name!r}, which is not a processor; use one of "
                                  f"{', '.join(sorted(names))}")
    return dict(raw)
