"""Tool results that would flood the window: the most recent stay, older ones go behind a reference.

The most recent `keep` tool answers stay verbatim, unless one is over `cap_tokens`: then its head stays, cut at a
line end, and the whole text is offloaded. Older answers become a placeholder naming the tool, the answer's size
and the key under which the whole text was offloaded (task memory reads it back page by page). A placeholder
keeps its message, its role and its `tool_call_id`, so every call keeps its answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from memory.context.messages import Message
from memory.tokens import TokenCounter

__all__ = ["DEFAULT_CAP_TOKENS", "DEFAULT_KEEP", "Offload", "ToolAction", "placeholder", "prune_tool_results"]

DEFAULT_KEEP = 3  # as Anthropic's clear_tool_uses keeps by default
DEFAULT_CAP_TOKENS = 2000

# (the tool answer, the name of the tool that gave it) -> the key its whole text can be read back under
Offload = Callable[[Message, str], str]


@dataclass(frozen=True)
class ToolAction:
    """What was done to one tool answer: `pruned` (placeholder only) or `offloaded` (head kept)."""

    kind: Literal["pruned", "offloaded"]
    index: int
    tool: str
    tokens_before: int
    tokens_after: int
    key: str


def placeholder(tool: str, tokens: int, key: str) -> str:
    """The text that stands in for a pruned tool answer."""
    return f"[result of {tool} left out: {tokens} tokens; the whole text is task item {key}]"


def prune_tool_results(messages: Sequence[Message], counter: TokenCounter, offload: Offload, *,
                       keep: int = DEFAULT_KEEP,
                       cap_tokens: int = DEFAULT_CAP_TOKENS) -> tuple[tuple[Message, ...], tuple[ToolAction, ...]]:
    """The messages with old and oversized tool answers replaced, and what was done, in message order."""
    names = {call.id: call.name for m in messages for call in m.tool_calls}
    answers = [i for i, m in enumerate(messages) if m.role == "tool"]
    recent = set(answers[-keep:]) if keep > 0 else set()
    out = list(messages)
    actions = []
    for i in answers:
        message = messages[i]
        tool = names.get(message.tool_call_id or "", "a tool")
        tokens = counter.count(message.content)
        if i in recent and tokens <= cap_tokens:
            continue
        key = offload(message, tool)
        if i in recent:
            head = _head(message.content, counter, cap_tokens)
            text = f"{head}\n[… {tokens - counter.count(head)} more tokens of {tool}'s result: task item {key}]"
            kind: Literal["pruned", "offloaded"] = "offloaded"
        else:
            text = placeholder(tool, tokens, key)
            kind = "pruned"
        out[i] = replace(message, content=text)
        actions.append(ToolAction(kind, message.index, tool, tokens, counter.count(text), key))
    return tuple(out), tuple(actions)


def _head(text: str, counter: TokenCounter, budget: int) -> str:
    """The longest run of whole lines from the start within `budget` tokens (the first line cut if it is longer)."""
    lines = text.splitlines(keepends=True)
    taken = ""
    for line in lines:
        if counter.count(taken + line) > budget:
            break
        taken += line
    return taken.rstrip("\n") if taken else counter.head(text, budget)
