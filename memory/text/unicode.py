"""Text every store can hold: JSON escapes such as "\\ud800" decode to lone surrogates, which UTF-8 cannot encode."""

from __future__ import annotations

from memory.errors import ValidationError

__all__ = ["storable"]


def storable(value: str, name: str) -> str:
    """`value` unchanged if it encodes as UTF-8; else a ValidationError naming `name` and the character."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(
            f"{name} holds a lone surrogate at character {exc.start}, which is not valid Unicode; send UTF-8 text"
        ) from None
    return value
