"""Eight tool-calling agent conversations of our own (four English, four Chinese) for benchmarks and tests.

Each is one agent's whole history in the OpenAI chat format: a system prompt, the agent's function schemas and
30-80 messages with what real traces hold: nested JSON, plain-text, CSV and log results, empty tool results, tool
messages with and without `name`, parallel calls, assistant text beside calls, `developer` messages, user messages
with image parts, long tool loops after one user message and long results. Users give identifiers in passing that
a later call uses (`given_ids`) and state constraints in passing (`constraints`, their key phrases as written).

The dialogue is hand-written (bench/agent_traces_en.py, bench/agent_traces_zh.py); long and repetitive results
(search results, logs, CSV, a query's ~2,000 rows) are generated here and there from seeded random.Random, so
every call returns the same traces. This module holds the record type and the builder they share.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass
from typing import Any

__all__ = ["AgentTrace", "Call", "Conversation", "as_json", "function", "prop", "traces"]

Message = dict[str, Any]


@dataclass(frozen=True)
class AgentTrace:
    """One agent conversation: messages[0] is {"role": "system", "content": system}."""

    name: str  # e.g. "travel-en"
    lang: str  # "en" | "zh"
    system: str
    tools: tuple[dict[str, Any], ...]
    messages: tuple[dict[str, Any], ...]
    given_ids: tuple[str, ...]  # identifiers a user gave in passing that a later call's arguments use
    constraints: tuple[str, ...]  # key phrases of the constraints the user stated, as written


@dataclass(frozen=True)
class Call:
    """One function call and the result the tool answers with (a str as is, anything else as compact JSON)."""

    name: str
    arguments: dict[str, Any]
    result: Any


def function(name: str, description: str, properties: dict[str, Any], required: tuple[str, ...] = ()) -> Message:
    """An OpenAI function schema taking an object with these properties."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": list(required)}}}


def prop(kind: str, description: str, **extra: Any) -> dict[str, Any]:
    """One parameter of a function schema: its JSON type, what it means, and any other keywords (enum, items)."""
    return {"type": kind, "description": description, **extra}


def as_json(value: Any, *, indent: int | None = None, ascii_only: bool = False) -> str:
    """A tool result as a service would serialise it (some escape non-ASCII, as json.dumps does by default)."""
    return json.dumps(value, ensure_ascii=ascii_only, indent=indent)


class Conversation:
    """Appends one conversation's messages in order; tool answers follow the call that asked for them."""

    def __init__(self, name: str, system: str, *, named_results: bool) -> None:
        self.name = name
        self.system = system
        self.named_results = named_results  # some agent frameworks send `name` on tool messages, some do not
        self.messages: list[Message] = [{"role": "system", "content": system}]
        self._ids = random.Random(f"{name}/call-ids")

    def user(self, content: str | list[dict[str, Any]]) -> None:
        """A user message: text, or content parts (text and image_url)."""
        self.messages.append({"role": "user", "content": content})

    def developer(self, content: str) -> None:
        """A developer message (the newer OpenAI role for operator instructions mid-conversation)."""
        self.messages.append({"role": "developer", "content": content})

    def say(self, content: str) -> None:
        """An assistant reply without calls."""
        self.messages.append({"role": "assistant", "content": content})

    def act(self, *calls: Call, text: str | None = None, answers_reversed: bool = False) -> None:
        """An assistant message calling these functions at once (content None without `text`), then the answers."""
        ids = ["call_" + "".join(self._ids.choices(string.ascii_letters + string.digits, k=24)) for _ in calls]
        self.messages.append({"role": "assistant", "content": text, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
            for call_id, call in zip(ids, calls, strict=True)]})
        answers = list(zip(ids, calls, strict=True))
        for call_id, call in reversed(answers) if answers_reversed else answers:
            content = call.result if isinstance(call.result, str) else as_json(call.result)
            message: Message = {"role": "tool", "tool_call_id": call_id, "content": content}
            if self.named_results:
                message["name"] = call.name
            self.messages.append(message)

    def trace(self, lang: str, tools: tuple[Message, ...], given_ids: tuple[str, ...],
              constraints: tuple[str, ...]) -> AgentTrace:
        """The finished conversation."""
        return AgentTrace(name=self.name, lang=lang, system=self.system, tools=tools,
                          messages=tuple(self.messages), given_ids=given_ids, constraints=constraints)


def traces() -> tuple[AgentTrace, ...]:
    """The eight conversations, English first, built afresh on every call (the messages are plain dicts)."""
    # Imported here because the dialogue modules build on Conversation above.
    from bench import agent_traces_en, agent_traces_zh

    return agent_traces_en.traces() + agent_traces_zh.traces()
