"""Texts put aside while a turn is fitted: stored as task items of the turn's task, once per text, so the same text
gets the same key on every turn and the history that names it stays byte-stable."""

from __future__ import annotations

import hashlib

from memory.context.messages import Message
from memory.task import TaskMemory

__all__ = ["Offloads"]


class Offloads:
    """Puts a tool result's whole text in task memory, once per text (TaskMemory.add's `ref`)."""

    def __init__(self, tasks: TaskMemory, namespace: str, task_id: str, parent_task_id: str | None,
                 limit: int) -> None:
        self._tasks = tasks
        self._limit = limit
        self._parent = parent_task_id
        self._namespace = namespace
        self._task_id = task_id
        self._known: dict[str, str] | None = None  # read once per turn, when the first text is put aside
        self.keys: dict[int, str] = {}  # message index -> key of its whole original text

    def __call__(self, message: Message, tool: str) -> str:
        """The key of `message`'s whole text (stored now unless an earlier turn stored it)."""
        if message.index in self.keys:
            return self.keys[message.index]
        if self._known is None:
            self._known = self._tasks.refs(self._namespace, self._task_id)
        ref = hashlib.sha256(f"{message.tool_call_id}\0{message.content}".encode("utf-8", "surrogatepass"))
        digest = ref.hexdigest()[:32]
        if digest not in self._known:
            # An empty result has nothing to read back, yet its placeholder still names a readable item.
            text = message.content if message.content.strip() else "(the tool answered nothing)"
            self._known[digest] = self.store("tool_result", text, {"tool": tool, "message": message.index}, digest)
        self.keys[message.index] = self._known[digest]
        return self.keys[message.index]

    def store(self, kind: str, text: str, metadata: dict[str, object], ref: str) -> str:
        """Store `text` once (by `ref`) and answer the key to read it from. A text over the item limit is stored
        in parts, each naming the next, written last part first so that every link names a stored item."""
        limit = max(self._limit - 200, 1)  # room for the link line
        parts = [text[i:i + limit] for i in range(0, len(text), limit)] or [text]
        following: str | None = None
        for number, part in reversed(list(enumerate(parts))):
            body = part if following is None else f"{part}\n[continued in task item {following}]"
            following = self._tasks.add(self._namespace, self._task_id, kind, body,
                                        metadata={**metadata, "part": number + 1, "parts": len(parts)}
                                        if len(parts) > 1 else metadata,
                                        ref=ref if number == 0 else f"{ref}:{number}",
                                        parent_task_id=self._parent).key
        assert following is not None  # at least one part was written
        return following
