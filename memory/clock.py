"""Time in one place: an injectable clock and ISO 8601 helpers (UTC, second precision, trailing Z)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from memory.errors import ValidationError

__all__ = ["Clock", "parse_iso", "to_iso", "utc_now"]

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The wall clock, in UTC; pass another Clock where tests need to move time."""
    return datetime.now(UTC)


def to_iso(moment: datetime) -> str:
    """`2026-11-30T08:00:00Z` (naive datetimes are taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(text: str, field: str = "timestamp") -> datetime:
    """Parse an ISO 8601 date or date-time (offset optional, UTC assumed) or raise ValidationError."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except (ValueError, AttributeError):
        raise ValidationError(
            f"{field} must be an ISO 8601 date or time such as 2026-05-01T10:00:00Z, got {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+05:00 and 9999-12-31T23:00-05:00 fall outside what datetime holds
        raise ValidationError(f"{field} must be a time between the years 1 and 9999 in UTC, got {text!r}") from None
