"""Ephemeral messages: used in the turn they arrive in, gone from later turns.

A turn starts at the latest user message. Before it, a message flagged `ephemeral` is dropped, and so is the
answer of any tool listed as ephemeral (a clock, a weather probe) together with its call: the call leaves its
assistant message's `tool_calls`, and an assistant message left with neither calls nor text goes too. An
ephemeral tool-calling assistant message goes with its answers. No call ever loses its answer.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from memory.context.messages import Message

__all__ = ["Dropped", "drop_ephemeral"]


@dataclass(frozen=True)
class Dropped:
    """A message left out as ephemeral (`tool` names the ephemeral tool whose call or answer it was, if any)."""

    index: int
    tool: str | None = None


def drop_ephemeral(messages: Sequence[Message],
                   tools: Collection[str] = ()) -> tuple[tuple[Message, ...], tuple[Dropped, ...]]:
    """The messages without earlier turns' ephemeral ones, and what was dropped, in message order."""
    users = [i for i, m in enumerate(messages) if m.role == "user"]
    current = users[-1] if users else len(messages)
    gone_calls: set[str] = set()  # of the assistant message just before (an id may come again later)
    out: list[Message] = []
    dropped: list[Dropped] = []
    for i, message in enumerate(messages):
        if i >= current:
            out.append(message)
            continue
        if message.tool_calls:
            gone_calls = {call.id for call in message.tool_calls if call.name in tools or message.ephemeral}
        if message.role == "tool" and message.tool_call_id in gone_calls:
            dropped.append(Dropped(message.index, message.tool))
            continue
        if message.ephemeral and message.role != "tool":
            dropped.append(Dropped(message.index))
            continue
        if message.ephemeral:  # an ephemeral answer of a call that stays: its text goes, the pairing stays
            out.append(replace(message, content="[ephemeral result left out]"))
            dropped.append(Dropped(message.index, message.tool))
            continue
        kept_calls = tuple(c for c in message.tool_calls if c.id not in gone_calls)
        if kept_calls != message.tool_calls:
            if not kept_calls and not message.content.strip():
                dropped.append(Dropped(message.index, message.tool_calls[0].name))
                continue
            message = replace(message, tool_calls=kept_calls)
        out.append(message)
    return tuple(out), tuple(dropped)
