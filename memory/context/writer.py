"""The turn written out: its messages in a cache-stable order, the tokens of each category, and the prefix hash.

The order: system prompt, constraints block, the history's summary, history, retrieved memory, the constraints
restated, the latest user message, the tool loop after it (`retrieval_position = "before_history"` puts retrieval
right after the constraints block). A summary that covers part of that tool loop comes after the user message.
`prefix_hash` covers the system prompt, the constraints block and the tool schemas: what a provider's prompt cache
reuses from turn to turn. A message is written back as it came unless a step changed its text (content parts, null
content of a call-only assistant message and every field kept).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from memory.context.messages import REPLY_PRIMING, Message
from memory.context.plan import Ledger
from memory.context.tools import Tool, canonical

__all__ = ["dump", "prefix_hash", "write"]


def write(system: list[Message], block: list[Message], summary: list[Message], before: list[Message],
          retrieval: list[Message], restate: list[Message], user: list[Message], tail: list[Message],
          late_summary: bool, position: str, tools: Sequence[Tool], cost: Callable[[Sequence[Message]], int],
          ledger: Ledger) -> tuple[list[Message], dict[str, int]]:
    """The messages in their order and their tokens per category; the ledger already holds every step's spend,
    and the count of what is written must be what it holds."""
    head = [*summary] if not late_summary else []
    after = [*summary, *tail] if late_summary else tail
    if position == "before_history":
        out = [*system, *block, *retrieval, *head, *before, *restate, *user, *after]
    else:  # after the history: the history then belongs to what a provider's prompt cache can reuse
        out = [*system, *block, *head, *before, *retrieval, *restate, *user, *after]
    history = [*before, *tail]
    tokens = {
        "system": cost(system),
        "tools": sum(t.tokens for t in tools),
        "constraints": cost([*block, *restate]),
        "summary": cost(summary),
        "retrieval": cost(retrieval),
        "history": cost([m for m in history if m.role != "tool"]),
        "tool_results": cost([m for m in history if m.role == "tool"]),
        "current": cost(user) + REPLY_PRIMING,
    }
    tokens["total"] = sum(tokens.values())
    if tokens["total"] != ledger.total:  # each step spent through the ledger: a difference is a defect
        raise RuntimeError(f"context assembly miscounted: {tokens['total']} tokens written, {ledger.total} spent "
                           f"({dict(ledger.spent)})")
    return out, tokens


def prefix_hash(head: Sequence[Message], tools: Sequence[Tool]) -> str:
    """SHA-256 of the system prompt and constraints block as written, and the tool schemas."""
    stable = [[dump(m) for m in head], [t.schema for t in tools]]
    return hashlib.sha256(canonical(stable).encode("utf-8", "surrogatepass")).hexdigest()


def dump(message: Message, original: Message | None = None) -> dict[str, Any]:
    """A message as an OpenAI chat dict; its original content parts when its text is the one they gave."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.parts is not None and (original is None or original.content == message.content):
        out["content"] = json.loads(message.parts)
    if message.name is not None:
        out["name"] = message.name
    if message.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                             for c in message.tool_calls]
        if not message.content and message.parts is None:
            out["content"] = None
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out
