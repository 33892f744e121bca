"""Size checks the routes apply before calling the library."""

from __future__ import annotations

from memory.errors import TooLargeError

__all__ = ["check_length"]


def check_length(text: str | None, limit: int, field: str, setting: str) -> None:
    """TooLargeError when `text` has more than `limit` characters."""
    if text is not None and len(text) > limit:
        raise TooLargeError(
            f"{field} has {len(text):,} characters, over the limit of {limit:,} ({setting}); split it or raise the limit"
        )
