"""The task tier's rules: what a valid task id, kind, text, TTL, page request and compaction summary look like."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from memory.errors import ValidationError
from memory.namespaces import check_namespace
from memory.task.model import KINDS
from memory.text.unicode import storable

__all__ = [
    "MAX_TTL_S",
    "TASK_ID_PATTERN",
    "check_digest",
    "check_dropped",
    "check_kind",
    "check_namespace",
    "check_positive",
    "check_range",
    "check_references",
    "check_sections",
    "check_summariser",
    "check_task_id",
    "check_text",
    "check_ttl",
    "check_whole",
    "encode_metadata",
]

TASK_ID_PATTERN = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def check_task_id(task_id: object, field: str = "task_id") -> str:
    """Task ids are 1-128 characters of A-Z a-z 0-9 . _ : - (a '/' would make keys ambiguous)."""
    if not isinstance(task_id, str) or not TASK_ID_PATTERN.fullmatch(task_id):
        raise ValidationError(
            f"{field} must be 1-128 characters of letters, digits, '.', '_', ':' or '-', got {task_id!r}"
        )
    return task_id


def check_kind(kind: object) -> str:
    """One of the documented kinds."""
    if kind not in KINDS:
        raise ValidationError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}; pick the closest one")
    return str(kind)


def check_text(text: object) -> str:
    """Non-blank text that can be stored as UTF-8 (lone surrogates cannot)."""
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"text must be a non-empty string, got {text!r}; send the item's content")
    storable(text, "text")
    return text


# Ten years: an expiry time must stay a date the clock can hold, and an item never outlives its task anyway.
MAX_TTL_S = 10 * 365 * 86400


def check_ttl(ttl_s: object) -> int | None:
    """None (live as long as the task) or a whole number of seconds from 1 to MAX_TTL_S."""
    if ttl_s is None:
        return None
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, int) or not 0 < ttl_s <= MAX_TTL_S:
        raise ValidationError(
            f"ttl_s must be a whole number of seconds above 0 and at most {MAX_TTL_S:,} (ten years), got {ttl_s!r}; "
            "omit it to keep the item as long as its task"
        )
    return ttl_s


def check_positive(value: object, field: str) -> int:
    """A whole number of at least 1 (page numbers, page sizes)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{field} must be a whole number of at least 1, got {value!r}")
    return value


def check_whole(value: object, field: str) -> int:
    """A whole number of at least 0 (message indexes, token counts)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(f"{field} must be a whole number of at least 0, got {value!r}")
    return value


def check_range(first: object, last: object) -> tuple[int, int]:
    """The message indexes a summary covers: first <= last, both included."""
    low, high = check_whole(first, "first"), check_whole(last, "last")
    if low > high:
        raise ValidationError(
            f"first must not be above last (the summary covers messages[first] to messages[last], both included), "
            f"got first {low} and last {high}"
        )
    return low, high


def check_sections(sections: object) -> dict[str, tuple[str, ...]]:
    """A summary's sections: a mapping of section names to lists of strings, kept in the order given."""
    if not isinstance(sections, Mapping):
        raise ValidationError(f"sections must map section names to lists of strings, got {sections!r}")
    checked: dict[str, tuple[str, ...]] = {}
    for name, entries in sections.items():
        if not isinstance(name, str) or not name.strip():
            raise ValidationError(f"sections must be named by non-empty strings, got the name {name!r}")
        checked[storable(name, "a section name")] = _strings(entries, f"sections[{name!r}]")
    return checked


def check_digest(digest: object) -> str:
    """The caller's hash of the messages a summary covers: a non-empty string."""
    if not isinstance(digest, str) or not digest.strip():
        raise ValidationError(f"digest must be a non-empty string (a hash of the covered messages), got {digest!r}")
    return storable(digest, "digest")


def check_dropped(dropped: object) -> tuple[dict[str, str], ...]:
    """What a summary left out: a list of {"text": str, "reason": str}."""
    entries = _sequence(dropped, "dropped", 'a list of {"text": ..., "reason": ...} objects')
    checked = []
    for i, entry in enumerate(entries):
        if (not isinstance(entry, Mapping) or set(entry) != {"text", "reason"}
                or not all(isinstance(v, str) for v in entry.values())):
            raise ValidationError(
                f'dropped[{i}] must be an object with exactly the strings "text" and "reason", got {entry!r}'
            )
        checked.append({key: storable(entry[key], f"dropped[{i}].{key}") for key in ("text", "reason")})
    return tuple(checked)


def check_references(references: object) -> tuple[str, ...]:
    """The task item keys a summary points at (such as 't-42/r7')."""
    return _strings(references, "references", "a list of task item keys such as ['t-42/r7']")


def check_summariser(summariser: object) -> str:
    """"extractive", or "model:<name>" for a summary a model wrote."""
    if summariser == "extractive" or (
            isinstance(summariser, str) and summariser.startswith("model:") and summariser[6:].strip()):
        return storable(summariser, "summariser")
    raise ValidationError(f"summariser must be 'extractive' or 'model:<name>', got {summariser!r}")


def _sequence(value: object, field: str, expected: str) -> Sequence[Any]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise ValidationError(f"{field} must be {expected}, got {value!r}")
    return value


def _strings(value: object, field: str, expected: str = "a list of strings") -> tuple[str, ...]:
    entries = _sequence(value, field, expected)
    for i, entry in enumerate(entries):
        if not isinstance(entry, str):
            raise ValidationError(f"{field}[{i}] must be a string ({field} is {expected}), got {entry!r}")
        storable(entry, f"{field}[{i}]")
    return tuple(entries)


def encode_metadata(metadata: Mapping[str, Any] | None) -> str:
    """Metadata as a JSON object string; it must be a mapping of string keys to JSON values."""
    if metadata is None:
        return "{}"
    if not isinstance(metadata, Mapping) or not all(isinstance(k, str) for k in metadata):
        raise ValidationError(f"metadata must be an object with string keys, got {metadata!r}")
    try:
        return json.dumps(dict(metadata), ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"metadata must hold JSON values only (strings, numbers, lists...): {exc}") from None

