"""Tool results that would flood the window: the most recent stay, older ones go behind a reference.

The most recent `keep` tool answers stay verbatim, unless one is over `cap_tokens`: then its head stays, cut at a
line end, and the whole text is offloaded. Older answers become a placeholder naming the tool, the answer's size
and the key under which the whole text was offloaded (task memory reads it back page by page). A placeholder
keeps its message, its role and its `tool_call_id`, so every call keeps its answer.

Older answers go in batches (as Anthropic's `clear_at_least`): the answers are cut, from the first, into runs of
about `batch_tokens` tokens, and a run is replaced only once every answer in it is older than the recent ones.
The runs depend on nothing that comes later, so between two batches a conversation's history only grows at its
end and a provider's prompt cache keeps it (bench/context_trace.py measures how often it changes).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from memory.context.messages import Message
from memory.tokens import TokenCounter

__all__ = ["DEFAULT_BATCH_TOKENS", "DEFAULT_CAP_TOKENS", "DEFAULT_KEEP", "Offload", "ToolAction", "placeholder",
           "prune_oldest", "prune_tool_results"]

DEFAULT_KEEP = 3  # as Anthropic's clear_tool_uses keeps by default
DEFAULT_CAP_TOKENS = 2000
DEFAULT_BATCH_TOKENS = 0  # 0: every answer older than the recent ones goes at once

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
                       keep: int = DEFAULT_KEEP, cap_tokens: int = DEFAULT_CAP_TOKENS,
                       batch_tokens: int = DEFAULT_BATCH_TOKENS,
                       protected: Collection[int] = ()) -> tuple[tuple[Message, ...], tuple[ToolAction, ...]]:
    """The messages with old and oversized tool answers replaced, and what was done, in message order.

    An answer whose position is in `protected` (the current turn's) is never replaced by a placeholder, only cut
    to its head when it is over the cap.
    """
    answers = [i for i, m in enumerate(messages) if m.role == "tool"]
    recent = set(answers[-keep:]) if keep > 0 else set()
    recent |= set(protected) & set(answers)
    old = _due(messages, counter, [i for i in answers if i not in recent], recent, answers, batch_tokens)
    out = list(messages)
    actions = []
    for i in answers:
        message = messages[i]
        tool = message.tool or "a tool"
        tokens = counter.count(message.content)
        if i in recent and tokens > cap_tokens:
            key = offload(message, tool)
            head = _head(message.content, counter, cap_tokens)
            text = f"{head}\n[… {tokens - counter.count(head)} more tokens of {tool}'s result: task item {key}]"
            out[i] = replace(message, content=text)
            actions.append(ToolAction("offloaded", message.index, tool, tokens, counter.count(text), key))
        elif i in old:
            action = _placeholder(message, tool, tokens, counter, offload)
            out[i] = replace(message, content=placeholder(tool, tokens, action.key))
            actions.append(action)
    return tuple(out), tuple(actions)


def prune_oldest(messages: Sequence[Message], counter: TokenCounter, offload: Offload, need: int,
                 protected: Collection[int] = ()) -> tuple[tuple[Message, ...], tuple[ToolAction, ...]]:
    """Placeholders for the oldest answers until `need` tokens are saved (for a tight budget); `protected` holds
    the positions to leave as they are (pinned ones, and those that are a placeholder already)."""
    out = list(messages)
    actions: list[ToolAction] = []
    saved = 0
    for i, message in enumerate(messages):
        if saved >= need:
            break
        if message.role != "tool" or i in protected:
            continue
        tokens = counter.count(message.content)
        action = _placeholder(message, message.tool or "a tool", tokens, counter, offload)
        if action.tokens_after >= tokens:
            continue
        out[i] = replace(message, content=placeholder(action.tool, tokens, action.key))
        actions.append(action)
        saved += tokens - action.tokens_after
    return tuple(out), tuple(actions)


def _placeholder(message: Message, tool: str, tokens: int, counter: TokenCounter, offload: Offload) -> ToolAction:
    key = offload(message, tool)
    return ToolAction("pruned", message.index, tool, tokens, counter.count(placeholder(tool, tokens, key)), key)


def _due(messages: Sequence[Message], counter: TokenCounter, older: list[int], recent: set[int],
         answers: list[int], batch_tokens: int) -> set[int]:
    """The older answers whose whole run (of about `batch_tokens` tokens, cut from the first answer) is older."""
    if batch_tokens <= 0:
        return set(older)
    due: set[int] = set()
    run: list[int] = []
    size = 0
    for i in answers:
        run.append(i)
        size += counter.count(messages[i].content)
        if size >= batch_tokens:
            if not recent & set(run):
                due.update(run)
            run, size = [], 0
    return due


def _head(text: str, counter: TokenCounter, budget: int) -> str:
    """The longest run of whole lines from the start within `budget` tokens (the first line cut if it is longer)."""
    lines = text.splitlines(keepends=True)
    taken = ""
    for line in lines:
        if counter.count(taken + line) > budget:
            break
        taken += line
    return taken.rstrip("\n") if taken else counter.head(text, budget)
