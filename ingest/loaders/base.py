"""What every loader returns, and the checks every text file goes through before it is read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from memory.errors import TooLargeError, ValidationError
from memory.limits import check_length

__all__ = ["DocumentKind", "LoadedDocument", "Turn", "check_text", "file_mtime", "read_text"]

DocumentKind = Literal["document", "conversation"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Turn:
    """One message of a conversation; `metadata` holds the message's other keys."""

    text: str
    speaker: str
    timestamp: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True)
class LoadedDocument:
    """A document or conversation read from a file, before chunking.

    `doc_id_hint` names it within its file (the file name, or file#id for one of several conversations);
    `updated_at` is the file's modification time unless the content carries a date.
    """

    doc_id_hint: str
    title: str | None
    source: str
    text: str
    kind: DocumentKind
    updated_at: datetime
    turns: tuple[Turn, ...] = ()


def read_text(path: Path, max_chars: int | None = None, name: str | None = None) -> str:
    """The file's text as UTF-8 (BOM dropped, newlines normalised), rejecting binary, empty and oversized files."""
    name = name or str(path)
    # A file too big to hold max_chars characters is refused before it is read (UTF-8: at most 4 bytes a character).
    if max_chars is not None and path.stat().st_size > 4 * max_chars:
        raise TooLargeError(
            f"{name} is {path.stat().st_size} bytes, more than max_text_chars={max_chars} characters can take; "
            "split the file or raise limits.max_text_chars"
        )
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValidationError(
            f"{name} is not UTF-8 text (invalid byte at offset {exc.start}); convert it to UTF-8 or remove it"
        ) from None
    if "\x00" in text:
        raise ValidationError(f"{name} is not UTF-8 text (it holds NUL bytes, so it looks binary); remove it")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    check_text(name, text, max_chars)
    return text


def check_text(name: str | Path, text: str, max_chars: int | None) -> None:
    """Reject text that is blank or longer than `max_chars` (limits.max_text_chars, checked as the library does)."""
    if not text.strip():
        raise ValidationError(f"{name} is empty; expected some text to ingest")
    if max_chars is not None:
        check_length(text, max_chars, str(name), "limits.max_text_chars")


def file_mtime(path: Path) -> datetime:
    """The file's modification time, in UTC."""
    return datetime.fromtimestamp(path.stat().st_mtime, UTC)
