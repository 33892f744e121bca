"""An agent's chat messages (the OpenAI chat format), checked, counted and grouped into units that move whole.

A unit is one message, or an assistant message with `tool_calls` together with the `tool` messages that answer
it: pruning, offloading or dropping works on whole units, so no sequence this package returns ever holds a tool
answer without its call or a call without its answers (the providers answer 400 to either).

Token counts follow OpenAI's documented formula for chat messages with cl100k: 3 tokens per message, the
tokens of every field's text, 1 more for a `name`, and 3 that prime the reply. A tool call counts the tokens of
its id, function name and arguments (OpenAI documents no formula for them; this one is stated, not measured).
Content given as a list of parts counts its text parts' texts joined by newlines; a non-text part is passed on as
it came and counts `IMAGE_TOKENS` (an `image_url` part; `IMAGE_LOW_TOKENS` at `"detail": "low"`: OpenAI's cost of
a 1024 x 1024 image) or, for any other type, the tokens of its canonical JSON (an upper bound for inline data).

What real traces send is accepted: tool answers with empty content, `name` on any message, several calls in one
assistant message with or without text beside them, content parts of any type, and the `developer` role (OpenAI's
name for system instructions to newer models; leading ones belong to the system prompt like system messages).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from memory.errors import ValidationError
from memory.tokens import TokenCounter

__all__ = ["IMAGE_LOW_TOKENS", "IMAGE_TOKENS", "INSTRUCTION_ROLES", "PER_MESSAGE", "PER_NAME", "REPLY_PRIMING",
           "Message", "Role", "ToolCall", "Unit", "count_tokens", "group", "message_tokens", "parse_messages"]

Role = Literal["system", "developer", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "developer", "user", "assistant", "tool")
INSTRUCTION_ROLES: tuple[Role, ...] = ("system", "developer")

PER_MESSAGE = 3
PER_NAME = 1
REPLY_PRIMING = 3
IMAGE_TOKENS = 765
IMAGE_LOW_TOKENS = 85


@dataclass(frozen=True)
class ToolCall:
    """One function call an assistant message asks for."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Message:
    """One chat message as the agent sent it (`index` is its place in the request).

    `content` is its text (a list of parts: the text parts joined); `parts` the canonical JSON of the parts as they
    came, written back while the text is unchanged; `media` what its non-text parts cost (the module docstring).
    """

    index: int
    role: Role
    content: str
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    pinned: bool = False
    ephemeral: bool = False
    parts: str | None = None
    media: int = 0
    tool: str | None = None  # a tool answer's function: of the call it answers (ids may repeat in a conversation)


@dataclass(frozen=True)
class Unit:
    """Messages that stay together: one message, or a tool-calling assistant message and its answers."""

    messages: tuple[Message, ...]

    @property
    def first(self) -> int:
        """The index of its first message."""
        return self.messages[0].index


def parse_messages(raw: Sequence[Any], counter: TokenCounter | None = None) -> tuple[Message, ...]:
    """Check and read messages; a ValidationError names the message index and what was expected. `counter` prices
    non-text parts of unknown types (without one they cost nothing: only counting needs it)."""
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise ValidationError("messages must be a list of chat messages ({\"role\": ..., \"content\": ...})")
    return _paired(tuple(_message(i, m, counter) for i, m in enumerate(raw)))


def group(messages: Sequence[Message]) -> tuple[Unit, ...]:
    """The messages as units, in order (they must have passed parse_messages)."""
    units: list[Unit] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        end = i + 1
        if message.role == "assistant" and message.tool_calls:
            while end < len(messages) and messages[end].role == "tool":
                end += 1
        units.append(Unit(tuple(messages[i:end])))
        i = end
    return tuple(units)


def message_tokens(counter: TokenCounter, message: Message) -> int:
    """The tokens one message costs in a chat request (the module docstring gives the formula)."""
    tokens = PER_MESSAGE + counter.count(message.role) + counter.count(message.content) + message.media
    if message.name is not None:
        tokens += PER_NAME + counter.count(message.name)
    if message.tool_call_id is not None:
        tokens += counter.count(message.tool_call_id)
    for call in message.tool_calls:
        tokens += counter.count(call.id) + counter.count(call.name) + counter.count(call.arguments)
    return tokens


def count_tokens(counter: TokenCounter, messages: Sequence[Message]) -> int:
    """The tokens a request with these messages costs, the reply's priming included."""
    return sum(message_tokens(counter, m) for m in messages) + REPLY_PRIMING


def _message(index: int, raw: object, counter: TokenCounter | None) -> Message:
    where = f"messages[{index}]"
    if not isinstance(raw, Mapping):
        raise ValidationError(f"{where} must be an object with a role and content, got {type(raw).__name__}")
    role = raw.get("role")
    if role not in ROLES:
        raise ValidationError(f"{where}.role must be one of {', '.join(ROLES)}, got {str(role)[:40]!r}")
    content = raw.get("content")
    parts: str | None = None
    media = 0
    if content is None:
        content = ""
    elif not isinstance(content, str):
        content, parts, media = _parts(where, content, counter)
    name = _optional_text(raw, "name", where)
    calls = _tool_calls(where, raw.get("tool_calls")) if role == "assistant" else ()
    if role != "assistant" and raw.get("tool_calls"):
        raise ValidationError(f"{where} has tool_calls, but only an assistant message may call tools")
    call_id = _optional_text(raw, "tool_call_id", where)
    if role == "tool" and call_id is None:
        raise ValidationError(f"{where} is a tool answer without tool_call_id; send the id of the call it answers")
    if role != "tool" and call_id is not None:
        raise ValidationError(f"{where} has tool_call_id, but only a tool message answers a call")
    # A user message is what the model answers: one with nothing to read (blank, or NUL characters only) is a
    # mistake worth a sentence. A tool may answer nothing, and an assistant may have said nothing but its calls.
    if role == "user" and not content.replace("\x00", "").strip() and not media:
        raise ValidationError(f"{where} (user) has no content: it is empty, blank or NUL characters only; send "
                              "the user's text (or leave the message out)")
    flags = {flag: raw.get(flag, False) for flag in ("pinned", "ephemeral")}
    for flag, value in flags.items():
        if not isinstance(value, bool):
            raise ValidationError(f"{where}.{flag} must be true or false, got {str(value)[:40]!r}")
    return Message(index, role, content, name, calls, call_id, flags["pinned"], flags["ephemeral"], parts, media)


def _parts(where: str, content: object, counter: TokenCounter | None) -> tuple[str, str, int]:
    """OpenAI's list-of-parts content: the text parts joined, the parts as canonical JSON, and the other parts'
    cost (the module docstring gives the rule)."""
    if not isinstance(content, list):
        raise ValidationError(f"{where}.content must be a string or a list of content parts, got "
                              f"{type(content).__name__}")
    texts = []
    media = 0
    for j, part in enumerate(content):
        kind = part.get("type") if isinstance(part, Mapping) else None
        if not isinstance(kind, str) or not kind:
            raise ValidationError(f"{where}.content[{j}] must be a content part with a type, such as "
                                  "{\"type\": \"text\", \"text\": ...} or {\"type\": \"image_url\", ...}")
        assert isinstance(part, Mapping)  # for the type checker: a type was read from it
        if kind == "text":
            if not isinstance(part.get("text"), str):
                raise ValidationError(f"{where}.content[{j}] is a text part without a text string")
            texts.append(part["text"])
        elif kind == "image_url":
            image = part.get("image_url")
            low = isinstance(image, Mapping) and image.get("detail") == "low"
            media += IMAGE_LOW_TOKENS if low else IMAGE_TOKENS
        elif counter is not None:
            media += counter.count(_canonical(part))
    return "\n".join(texts), _canonical(content), media


def _canonical(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _optional_text(raw: Mapping[str, Any], key: str, where: str) -> str | None:
    value = raw.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise ValidationError(f"{where}.{key} must be a non-empty string, got {str(value)[:40]!r}")
    return value


def _tool_calls(where: str, raw: object) -> tuple[ToolCall, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ValidationError(f"{where}.tool_calls must be a list of calls")
    calls = []
    for j, call in enumerate(raw):
        at = f"{where}.tool_calls[{j}]"
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(call, Mapping) or not isinstance(call.get("id"), str) or not call["id"] \
                or not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise ValidationError(f"{at} must be {{\"id\": ..., \"type\": \"function\", \"function\": "
                                  "{\"name\": ..., \"arguments\": \"<JSON text>\"}}")
        if not function["name"].strip():
            raise ValidationError(f"{at}.function.name is empty; name the tool the call is for")
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        calls.append(ToolCall(call["id"], function["name"], arguments))
    return tuple(calls)


def _paired(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """The messages, each tool answer given the function of the call it answers; a ValidationError unless every
    tool answer follows the assistant message that made its call and every call is answered. A call id names the
    call of the assistant message just before (real agents use an id again in later turns)."""
    open_calls: dict[str, int] = {}  # call id -> index of the assistant message that made it
    functions: dict[str, str] = {}  # call id -> function, of the last assistant message that called tools
    out = list(messages)
    for position, message in enumerate(messages):
        if message.role == "tool":
            if message.tool_call_id not in open_calls:
                raise ValidationError(
                    f"messages[{message.index}] answers tool call {message.tool_call_id!r}, which no assistant "
                    "message just before it made; a tool answer must follow the call it answers")
            del open_calls[message.tool_call_id]
            out[position] = replace(message, tool=functions[message.tool_call_id])
            continue
        if open_calls:
            call, at = next(iter(open_calls.items()))
            raise ValidationError(f"messages[{at}] calls tool {call!r}, but no tool message answers it before "
                                  f"messages[{message.index}]; send each call's answer right after the call")
        ids = [c.id for c in message.tool_calls]
        if len(set(ids)) != len(ids):
            raise ValidationError(f"messages[{message.index}] has two tool calls with one id; ids must differ")
        open_calls = dict.fromkeys(ids, message.index)
        functions = {c.id: c.name for c in message.tool_calls}
    if open_calls:
        call, at = next(iter(open_calls.items()))
        raise ValidationError(f"messages[{at}] calls tool {call!r}, but no tool message answers it; send the "
                              "answer, or leave the call out")
    return tuple(out)
