"""Which task a turn belongs to: the caller's `task_id`, or the conversation followed by its messages.

A conversation sent without `task_id` is followed through the store (TaskMemory.thread): a request continues the
known conversation whose last request is a prefix of it, so one conversation keeps its task turn after turn (and
across restarts and replicas), while two that began alike ("hi" under the same system prompt) and then differ get
tasks of their own. An edited history (a message changed, not appended) is another conversation: send `task_id`
to keep one task through edits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from memory.context.messages import Message
from memory.task import TaskMemory

__all__ = ["follow", "message_bytes", "peek"]


def message_bytes(message: Message) -> bytes:
    """One message as hashed: role, content, call id and calls, with separators no text can forge."""
    parts = [message.role, message.content, message.tool_call_id or "", message.name or ""]
    parts += [f"{c.id}\x03{c.name}\x03{c.arguments}" for c in message.tool_calls]
    return ("\x00".join(parts) + "\x01").encode("utf-8", "surrogatepass")


def follow(tasks: TaskMemory, namespace: str, given: str | None, parent: str | None, system: str | None,
           messages: Sequence[Message]) -> str:
    """The turn's task id (the task is created or its expiry slid: what the turn stores goes with it)."""
    if given is not None:
        tasks.touch(namespace, given, parent)
        return given
    task = tasks.thread(namespace, *_digests(system, messages))
    if parent is not None:
        tasks.touch(namespace, task, parent)
    return task


def peek(tasks: TaskMemory, namespace: str, given: str | None, system: str | None,
         messages: Sequence[Message]) -> str:
    """The task id `follow` would answer now, with nothing written (a read ahead of the turn's transaction)."""
    return given if given is not None else tasks.peek_thread(namespace, *_digests(system, messages))


def _digests(system: str | None, messages: Sequence[Message]) -> tuple[str, list[str]]:
    """The conversation's seed and the digest of each of its prefixes (TaskMemory.thread)."""
    running = hashlib.sha256((system or "").encode("utf-8", "surrogatepass") + b"\x02")
    prefixes = []
    for message in messages:
        running.update(message_bytes(message))
        prefixes.append(running.copy().hexdigest())
    # How the conversation starts, up to its first user message: what every later request repeats, and specific
    # enough that few conversations share it (the store compares the prefixes of those that do).
    first = next((i for i, m in enumerate(messages) if m.role == "user"), len(messages) - 1)
    return (prefixes[first] if prefixes else running.hexdigest()), prefixes
