"""Conversations in .json or .jsonl: messages with text/content and speaker/role, one document per conversation."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ingest.loaders.base import LoadedDocument, Turn, check_text, file_mtime, read_text
from memory.clock import parse_iso, to_iso
from memory.errors import ValidationError

__all__ = ["load_conversation"]

_EXPECTED = (
    'expected a list of messages like {"role": "user", "content": "..."} (optionally with "timestamp"), '
    'an object {"messages": [...]}, a list of such objects, or JSON Lines with one message per line'
)
_TEXT_KEYS = ("text", "content")
_SPEAKER_KEYS = ("speaker", "role")
_ID_KEYS = ("id", "conversation_id", "session_id")


def load_conversation(path: Path, max_chars: int | None = None, name: str | None = None) -> list[LoadedDocument]:
    """One document per conversation in the file; messages without text (tool calls, null content) are dropped."""
    name = name or str(path)
    raw = read_text(path, max_chars, name)
    data = _parse_lines(name, raw) if path.suffix.lower() == ".jsonl" else _parse(name, raw)
    if isinstance(data, Mapping) and "messages" in data:
        conversations: list[Mapping[str, Any]] = [data]
    elif isinstance(data, list) and data and all(isinstance(item, Mapping) and "messages" in item for item in data):
        conversations = data
    elif isinstance(data, list) and data:
        conversations = [{"messages": data}]
    else:
        raise ValidationError(f"{name} holds {_describe(data)}; {_EXPECTED}")
    documents = []
    for index, conversation in enumerate(conversations):
        hint = path.name if len(conversations) == 1 else f"{path.name}#{_conversation_id(conversation, index)}"
        documents.append(_document(path, name, hint, conversation, max_chars))
    return documents


def _parse(name: str, raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{name} is not valid JSON (line {exc.lineno}: {exc.msg}); {_EXPECTED}") from None
    except ValueError as exc:  # an integer literal over Python's int-conversion limit
        raise ValidationError(f"{name} {_unreadable_number(exc)}") from None
    except RecursionError:
        raise ValidationError(f"{name} nests JSON too deeply to read; {_EXPECTED}") from None


def _parse_lines(name: str, raw: str) -> list[Any]:
    items = []
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValidationError(f"{name} line {number} is not valid JSON ({exc.msg}); {_EXPECTED}") from None
        except ValueError as exc:
            raise ValidationError(f"{name} line {number} {_unreadable_number(exc)}") from None
        except RecursionError:
            raise ValidationError(f"{name} line {number} nests JSON too deeply to read; {_EXPECTED}") from None
    return items


def _unreadable_number(exc: ValueError) -> str:
    if "digits" not in str(exc):
        return f"could not be read as JSON ({exc}); {_EXPECTED}"
    return (f"holds an integer of more than {sys.get_int_max_str_digits():,} digits, which cannot be read; write "
            "it as a string")


def _document(path: Path, name: str, hint: str, conversation: Mapping[str, Any],
              max_chars: int | None) -> LoadedDocument:
    messages = conversation["messages"]
    if not isinstance(messages, list):
        raise ValidationError(f'{name}: "messages" holds {_describe(messages)}; {_EXPECTED}')
    turns = tuple(turn for index, message in enumerate(messages) if (turn := _turn(name, index, message)))
    if not turns:
        raise ValidationError(f"{name} ({hint}) has no message with text; {_EXPECTED}")
    text = "\n".join(f"{turn.speaker}: {turn.text}" for turn in turns)
    check_text(name, text, max_chars)
    title = conversation.get("title")
    updated_at = _latest(turns) or file_mtime(path)
    return LoadedDocument(
        hint,
        title if isinstance(title, str) and title.strip() else None,
        str(path),
        text,
        "conversation",
        updated_at,
        turns,
    )


def _turn(name: str, index: int, message: Any) -> Turn | None:
    where = f"{name} message {index + 1}"
    if not isinstance(message, Mapping):
        raise ValidationError(f"{where} is {_describe(message)}; {_EXPECTED}")
    text_key = next((key for key in _TEXT_KEYS if key in message), None)
    speaker_key = next((key for key in _SPEAKER_KEYS if key in message), None)
    if text_key is None or speaker_key is None:
        raise ValidationError(
            f'{where} has keys {sorted(message)} but needs "text" or "content" and "speaker" or "role"; {_EXPECTED}'
        )
    text = _message_text(where, message[text_key])
    speaker = message[speaker_key]
    if not isinstance(speaker, str) or not speaker.strip():
        raise ValidationError(f"{where}: {speaker_key} must be a non-empty string, got {speaker!r}")
    if not text.strip():
        return None
    used = {text_key, speaker_key, "timestamp"}
    metadata = MappingProxyType({key: value for key, value in message.items() if key not in used})
    return Turn(text, speaker.strip(), _timestamp(where, message.get("timestamp")), metadata)


def _message_text(where: str, content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    # The multi-part format: [{"type": "text", "text": "..."}, {"type": "image_url", ...}]
    if isinstance(content, list) and all(isinstance(part, Mapping) for part in content):
        return "\n".join(part["text"] for part in content if isinstance(part.get("text"), str))
    raise ValidationError(f"{where}: text must be a string or a list of text parts, got {_describe(content)}")


def _timestamp(where: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValidationError(f"{where}: timestamp must be an ISO 8601 string or epoch seconds, got {value!r}")
    if isinstance(value, str):
        return value
    seconds = value / 1000 if value > 1e11 else value  # epoch milliseconds are common in chat exports
    try:
        return to_iso(datetime.fromtimestamp(seconds, UTC))
    except (OverflowError, OSError, ValueError):  # NaN, or beyond the years datetime holds
        raise ValidationError(f"{where}: timestamp {value!r} is not a time in the years 1 to 9999") from None


def _latest(turns: tuple[Turn, ...]) -> datetime | None:
    moments = []
    for turn in turns:
        if turn.timestamp:
            try:
                moments.append(parse_iso(turn.timestamp))
            except ValidationError:
                continue  # free-form times ("1:56 pm on 8 May") stay on the turn but cannot date the file
    return max(moments, default=None)


def _conversation_id(conversation: Mapping[str, Any], index: int) -> str:
    for key in _ID_KEYS:
        value = conversation.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    return str(index + 1)


def _describe(value: Any) -> str:
    if isinstance(value, Mapping):
        return f"an object with keys {sorted(value)[:8]}"
    if isinstance(value, list):
        return "an empty list" if not value else f"a list of {len(value)} items"
    return f"a {type(value).__name__} ({str(value)[:40]!r})"
