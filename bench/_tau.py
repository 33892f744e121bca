"""τ-bench airline conversations (../shared/benchdata/tau_airline, never copied here): loading, the fixed split, and
the values each tool call needs from the conversation before it.

The folder holds the odd task ids only (the even ones are kept out of the repository). The split is by task id,
so the four trials of a task stay together: dev = task_id % 4 == 1, held-out = task_id % 4 == 3. It is fixed
here and nothing is tuned on the held-out part.

A value a call *needs* is a scalar leaf of its JSON arguments (a string or a number; booleans and null are left
out) whose text, at least MIN_CHARS characters, appears in the conversation before the call (every content and
tool-call argument after the system prompt) and neither in the system prompt nor in the tool schemas (those are
always sent, so what they hold cannot be lost). A float such as 100.0 also counts when written "100". The value
is *kept* when its text appears in what a context manager sends (whitespace kept as it is: ids are not folded).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.corpora import DATA
from memory.context.tools import canonical

__all__ = ["MIN_CHARS", "SPLITS", "TAU", "Trajectory", "called_tools", "fixed_text", "kept_share", "kept_values",
           "load_tools", "load_trajectories", "message_text", "missing", "needed_values", "split_of",
           "tool_steps"]

Chat = dict[str, Any]
TAU = DATA / "tau_airline"
TRAJECTORIES = TAU / "trajectories_dev.json.gz"
TOOLS = TAU / "tools.json"
MIN_CHARS = 3  # shorter texts ("2", "no") turn up anywhere by chance
SPLITS: Mapping[str, int] = {"dev": 1, "held-out": 3}  # split -> task_id % 4


@dataclass(frozen=True)
class Trajectory:
    """One recorded conversation: its task, trial, reward and chat messages (the system prompt first)."""

    task_id: int
    trial: int
    reward: float
    messages: tuple[Chat, ...]

    @property
    def key(self) -> str:
        """A name unique in the data set (and valid in a namespace or task id)."""
        return f"t{self.task_id}-r{self.trial}"


def missing() -> str | None:
    """A one-line reason when the data files are not there, else None."""
    absent = [p for p in (TRAJECTORIES, TOOLS) if not p.is_file()]
    if absent:
        return (f"the τ-bench airline data is missing ({', '.join(str(p) for p in absent)}); "
                "it is read from ../shared/benchdata beside the repository (see its README.md)")
    return None


def split_of(task_id: int) -> str:
    """The split a task belongs to ("dev" or "held-out"); the even task ids are in none (not in the data)."""
    for name, rest in SPLITS.items():
        if task_id % 4 == rest:
            return name
    raise ValueError(f"task {task_id} is in no split: the splits take task_id % 4 in "
                     f"{sorted(SPLITS.values())}, and the data holds the odd task ids only")


def load_trajectories() -> list[Trajectory]:
    """Every conversation, in the file's order."""
    with gzip.open(TRAJECTORIES, "rt", encoding="utf-8") as fh:
        records = json.load(fh)
    return [Trajectory(int(r["task_id"]), int(r["trial"]), float(r["reward"]), tuple(r["traj"])) for r in records]


def load_tools() -> list[Chat]:
    """The 14 OpenAI function schemas the agent had."""
    tools: list[Chat] = json.loads(TOOLS.read_text(encoding="utf-8"))
    return tools


def tool_steps(messages: Sequence[Chat]) -> list[int]:
    """The indexes of the assistant messages that call tools: the steps replayed."""
    return [j for j, m in enumerate(messages) if m.get("role") == "assistant" and m.get("tool_calls")]


def called_tools(message: Mapping[str, Any]) -> tuple[str, ...]:
    """The function names an assistant message calls."""
    return tuple(c["function"]["name"] for c in message.get("tool_calls") or ())


def message_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """Every content (a string, or the text of its parts) and every tool call's arguments, whitespace as sent."""
    parts: list[str] = []
    for message in messages:
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "\n".join(p["text"] if isinstance(p, Mapping) and isinstance(p.get("text"), str)
                                else canonical(p) for p in content)
        parts.append(content if isinstance(content, str) else canonical(content))
        for call in message.get("tool_calls") or ():
            arguments = call.get("function", {}).get("arguments", "")
            parts.append(arguments if isinstance(arguments, str) else canonical(arguments))
    return "\n".join(parts)


def fixed_text(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """What every request carries whatever the manager does: the leading system prompt and the tool schemas."""
    head = [messages[0]] if messages and messages[0].get("role") == "system" else []
    return "\n".join([message_text(head), *(canonical(t) for t in tools)])


def _leaves(value: Any) -> Iterator[tuple[str, ...]]:
    """Each scalar leaf's texts (a whole float also as an integer); booleans and null give none."""
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, float):
        yield (str(value), str(int(value))) if value.is_integer() else (str(value),)
    elif isinstance(value, int | str):
        yield (str(value),)


def needed_values(traj: Sequence[Mapping[str, Any]], j: int, system_and_tools_text: str) -> list[str]:
    """The texts of the values traj[j]'s tool calls take from the conversation before it (the module docstring
    says which), each once, in the order of the calls."""
    before = message_text(traj[1:j])
    needed: dict[str, None] = {}
    for call in traj[j].get("tool_calls") or ():
        try:
            arguments = json.loads(call["function"].get("arguments") or "null")
        except (json.JSONDecodeError, TypeError):
            continue
        for texts in _leaves(arguments):
            texts = tuple(t for t in texts if len(t) >= MIN_CHARS)
            if any(t in system_and_tools_text for t in texts):
                continue
            found = next((t for t in texts if t in before), None)
            if found is not None:
                needed[found] = None
    return list(needed)


def kept_values(needed: Sequence[str], messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The needed values whose text is in the messages a manager sends."""
    text = message_text(messages)
    return [value for value in needed if value in text]


def kept_share(needed: Sequence[str], messages: Sequence[Mapping[str, Any]]) -> float:
    """The share of the needed values the messages keep (1.0 when none is needed)."""
    return len(kept_values(needed, messages)) / len(needed) if needed else 1.0
