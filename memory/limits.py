"""The size limits of [limits], checked once each, where the library takes the input: one error type, one status.

The REST layer only bounds the bytes of a request body (api.limits.BodyLimit); every text, query and batch limit
is enforced here, so the library, the CLI and the API refuse the same input with the same sentence.
"""

from __future__ import annotations

from memory.errors import TooLargeError

__all__ = ["check_count", "check_length"]


def check_length(text: object, limit: int, field: str, setting: str) -> None:
    """TooLargeError when `text` is a string of more than `limit` characters (other types are checked elsewhere)."""
    if isinstance(text, str) and len(text) > limit:
        raise TooLargeError(
            f"{field} has {len(text):,} characters, over the limit of {limit:,} ({setting}); "
            "split it or raise the limit"
        )


def check_count(count: int, limit: int, what: str, advice: str) -> None:
    """TooLargeError when a batch holds more than limits.max_batch (`limit`) `what`."""
    if count > limit:
        raise TooLargeError(f"{count} {what} in one request, over limits.max_batch ({limit}); {advice}")
