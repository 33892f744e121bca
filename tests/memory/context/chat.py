"""Chat messages as an agent sends them, for the context tests: a tool call, and a parsed Message written back."""

from __future__ import annotations

from typing import Any

from memory.context import Message

__all__ = ["call", "dump"]


def call(call_id: str, name: str = "search", arguments: str = "{}") -> dict[str, Any]:
    """One entry of an assistant message's `tool_calls`."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def dump(message: Message) -> dict[str, Any]:
    """A parsed message as the raw dict parse_messages reads (to check that an output is still a valid sequence)."""
    raw: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        raw["tool_calls"] = [call(c.id, c.name, c.arguments) for c in message.tool_calls]
    if message.tool_call_id:
        raw["tool_call_id"] = message.tool_call_id
    return raw
