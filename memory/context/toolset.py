"""Which tool schemas a turn sends: all of them while they fit their grant; under pressure the pinned ones, the
ones the conversation has called (the agent may call them again) and the most relevant to the query.

A task's selection is state (TaskMemory.tool_selection): it is sent again while it still fits, holds the called
tools and the most relevant one, so the tool block, part of the cached prefix, changes only when it must, and a
restart or another replica sends the same.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace

from memory.context.tools import ScopedSimilarity, Tool, select_tools
from memory.task import TaskMemory

__all__ = ["Remembered", "choose_tools"]


class Remembered:
    """A similarity that remembers what it answered: a turn's pass before the writer lock computes the vectors, its
    pass under the lock asks again for the same texts and gets the same scores without embedding anything."""

    def __init__(self, similarity: ScopedSimilarity) -> None:
        self._similarity = similarity
        self._known: dict[tuple[str, str, str], float] = {}

    def __call__(self, namespace: str, query: str, texts: Sequence[str]) -> list[float]:
        missing = list(dict.fromkeys(t for t in texts if (namespace, query, t) not in self._known))
        if missing:
            scores = self._similarity(namespace, query, missing)
            self._known.update(((namespace, query, t), float(s)) for t, s in zip(missing, scores, strict=True))
        return [self._known[(namespace, query, t)] for t in texts]


def choose_tools(tools: tuple[Tool, ...], called: Sequence[str], grant: int, most: int, query: str,
                 similarity: ScopedSimilarity | None, tasks: TaskMemory, namespace: str,
                 task_id: str, *, keep: bool = True) -> tuple[tuple[Tool, ...], tuple[str, ...]]:
    """The tools kept (sorted by name) and the names left out: within `grant` tokens, except that the called ones
    (`called`: the most recently called first) stay beyond it while they fit in `most`. The pinned always stay.
    With `keep` False the selection is not stored as the task's (a pass that writes nothing)."""
    if sum(t.tokens for t in tools) <= grant:
        return tools, ()
    room = most - sum(t.tokens for t in tools if t.pinned)
    by_name = {t.name: t for t in tools if not t.pinned}
    again = []
    for name in called:
        tool = by_name.get(name)
        if tool is not None and tool.tokens <= room:
            again.append(tool)
            room -= tool.tokens
    # Called tools count as pinned for the choice; the schemas sent are the agent's own.
    marked = tuple(replace(t, pinned=True) if t in again else t for t in tools)
    previous = tasks.tool_selection(namespace, task_id)
    floor = sum(t.tokens for t in marked if t.pinned)
    scoped = None if similarity is None else functools.partial(similarity, namespace)
    kept, left_out = select_tools(marked, max(grant, floor), query, scoped, previous)
    names = {t.name for t in kept}
    chosen = tuple(t for t in tools if t.name in names)
    if keep and tuple(t.name for t in chosen if not t.pinned) != previous:
        tasks.set_tool_selection(namespace, task_id, tuple(t.name for t in chosen if not t.pinned))
    return chosen, left_out
