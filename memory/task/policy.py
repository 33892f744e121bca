"""The task tier's rules: what a valid task id, kind, text, TTL and page request look like."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from memory.errors import ValidationError
from memory.namespaces import check_namespace
from memory.task.model import KINDS
from memory.text.unicode import storable

__all__ = [
    "MAX_TTL_S",
    "TASK_ID_PATTERN",
    "check_kind",
    "check_namespace",
    "check_positive",
    "check_task_id",
    "check_text",
    "check_ttl",
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

