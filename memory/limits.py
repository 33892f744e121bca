"""The limits of [limits], checked once each where the library takes the input, and the guard on what is read back.

The REST layer only bounds the bytes of a request body (api.limits.BodyLimit); every text, query, batch and
metadata limit is enforced here, so the library, the CLI and the API refuse the same input with the same sentence.
Metadata stored before its limits existed is read through readable_json / parse_metadata, so one such row cannot
break the listings and recalls of its namespace.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from memory.config import METADATA_DEPTH_CEILING, LimitsConfig
from memory.errors import TooLargeError, ValidationError

__all__ = [
    "UNREADABLE", "check_count", "check_length", "check_metadata", "check_score", "parse_metadata", "readable_json",
]

# The one key of the placeholder shown instead of stored metadata that readers cannot take back.
UNREADABLE = "_unreadable"

_log = logging.getLogger(__name__)
_reported: set[str] = set()


def check_length(text: object, limit: int, field: str, setting: str) -> None:
    """TooLargeError when `text` is a string of more than `limit` characters (other types are checked elsewhere)."""
    if isinstance(text, str) and len(text) > limit:
        raise TooLargeError(
            f"{field} has {len(text):,} characters, over the limit of {limit:,} ({setting}); "
            "split it or raise the limit"
        )


def check_score(value: object, field: str) -> None:
    """ValidationError unless `value` is None or a number from 0 to 1 (a threshold on scores, as min_score)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if value is not None and not (number and 0.0 <= value <= 1.0):  # type: ignore[operator]
        raise ValidationError(f"{field} must be a number between 0 and 1 (or omitted); got {value!r}")


def check_count(count: int, limit: int, what: str, advice: str) -> None:
    """TooLargeError when a batch holds more than limits.max_batch (`limit`) `what`."""
    if count > limit:
        raise TooLargeError(f"{count} {what} in one request, over limits.max_batch ({limit}); {advice}")


def check_metadata(metadata: Mapping[str, Any], name: str, limits: LimitsConfig | None = None) -> None:
    """Metadata every reader can take back: nested at most limits.max_metadata_depth levels, no integer longer
    than Python's int-conversion limit, at most limits.max_metadata_bytes of stored JSON.

    Without `limits` only what no reader could take back is refused (deeper than METADATA_DEPTH_CEILING, such
    integers). The object itself is level 1, every list or object inside it one more. Values that are not JSON
    at all (NaN, objects) are left to the caller's own check, which names them.
    """
    max_depth = METADATA_DEPTH_CEILING if limits is None else limits.max_metadata_depth
    setting = "the most any reader can take back" if limits is None else "over limits.max_metadata_depth"
    pending: list[tuple[Any, int, str]] = [(metadata, 1, name)]
    while pending:
        value, depth, where = pending.pop()
        if isinstance(value, Mapping | list | tuple):
            if depth > max_depth:
                raise TooLargeError(
                    f"{name} nests deeper than {max_depth} levels (under {where}), {setting}; flatten it"
                    + ("" if limits is None else " or raise the limit")
                )
            items = value.items() if isinstance(value, Mapping) else enumerate(value)
            # The path names the first two levels only: the rest of a deep one says nothing more.
            pending.extend((item, depth + 1, _step(where, key) if depth < 3 else where) for key, item in items)
        elif isinstance(value, int) and not isinstance(value, bool) and _too_many_digits(value):
            raise ValidationError(
                f"{where} is an integer of more than {sys.get_int_max_str_digits():,} digits, which JSON readers "
                "cannot take back; send it as a string"
            )
    if limits is None:
        return
    try:
        size = len(json.dumps(dict(metadata), ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogatepass"))
    except (TypeError, ValueError):
        return
    if size > limits.max_metadata_bytes:
        raise TooLargeError(
            f"{name} is {size:,} bytes as JSON, over the limit of {limits.max_metadata_bytes:,} "
            "(limits.max_metadata_bytes); store less beside the text or raise the limit"
        )


def parse_metadata(stored: str) -> Mapping[str, Any]:
    """Stored metadata JSON parsed, or readable_json's placeholder for anything that cannot be (never raises)."""
    try:
        parsed = json.loads(readable_json(stored))
    except (ValueError, RecursionError):  # short text that is not JSON: no version wrote it, a hand did
        parsed = _placeholder(stored, "is not JSON this version can read")
    return MappingProxyType(parsed if isinstance(parsed, dict) else _placeholder(stored, "is not a JSON object"))


def _step(where: str, key: object) -> str:
    return f"{where}[{key if isinstance(key, int) else str(key)[:40]!r}]"


def readable_json(stored: str) -> str:
    """Stored metadata JSON unchanged when every reader can take it back, else a placeholder object saying why.

    Rows written before the metadata limits may nest deeper than METADATA_DEPTH_CEILING (pydantic cannot write
    that back out) or hold what json cannot parse (a very long integer, text written by hand).
    """
    # The usual row is a short object with few brackets: it cannot nest that deep nor hold such an integer, and
    # json.dumps wrote it, so it parses (a cut-off row does not end in "}", so it is parsed to find out).
    if (len(stored) < 4000 and stored[:1] == "{" and stored[-1:] == "}"
            and stored.count("{") + stored.count("[") <= METADATA_DEPTH_CEILING):
        return stored
    try:
        parsed = json.loads(stored)
    except (ValueError, RecursionError):
        return json.dumps(_placeholder(stored, "is not JSON this version can read"))
    if not isinstance(parsed, dict):
        return json.dumps(_placeholder(stored, "is not a JSON object"))
    if _nests_deeper(parsed, METADATA_DEPTH_CEILING):
        return json.dumps(_placeholder(stored, f"nests deeper than {METADATA_DEPTH_CEILING} levels"))
    return stored


def _nests_deeper(value: Any, limit: int) -> bool:
    pending = [(value, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, Mapping | list | tuple):
            if depth > limit:
                return True
            pending.extend((item, depth + 1) for item in (value.values() if isinstance(value, Mapping) else value))
    return False


def _placeholder(stored: str, why: str) -> dict[str, str]:
    # Warned once per kind of problem, not on every read; nothing of the row is kept, so nothing outlives its deletion.
    level = logging.DEBUG if why in _reported else logging.WARNING
    _reported.add(why)
    _log.log(level, "stored metadata (%d characters) %s; it is read as a placeholder", len(stored), why)
    return {UNREADABLE: f"the stored metadata {why}, so it is not shown; the record itself is intact"}


def _too_many_digits(value: int) -> bool:
    digits = sys.get_int_max_str_digits()  # 0: no limit
    if digits == 0:
        return False
    size = abs(value)
    # Below 2**floor(digits·log2 10) a number has fewer digits for sure; only longer ones pay for 10**digits.
    return size.bit_length() > int(digits * 3.3219) and size >= 10**digits
