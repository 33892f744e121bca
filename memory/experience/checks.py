"""What experience memory accepts: storable text, plain-JSON metadata, chunks, kinds and tags, or a clear error."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memory.config import LimitsConfig
from memory.errors import ValidationError
from memory.experience.model import ChunkInput, DocumentKind
from memory.limits import check_metadata
from memory.text.unicode import storable

__all__ = ["check_chunks", "check_kind", "check_record", "check_tags", "require_text"]

_KINDS = ("document", "memory")


def require_text(value: object, name: str) -> str:
    """`value` without NUL characters when that leaves a non-blank string SQLite can store, else ValidationError.

    NUL is dropped, not refused: it is free text, and a NUL means nothing in it (ids and names refuse it instead).
    """
    if isinstance(value, str):
        value = value.replace("\x00", "")
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(f"{name} must be a non-empty string, got {value!r}")
    return storable(value, name)


def check_record(name: str, metadata: Mapping[str, Any], texts: Mapping[str, object],
                 limits: LimitsConfig | None = None) -> None:
    """Every named text field storable and free of NUL, and the metadata plain JSON that SQLite and the API can
    read back (no NaN), within limits.max_metadata_* when `limits` is given (see limits.check_metadata)."""
    for field_name, value in texts.items():
        if isinstance(value, str):
            storable(value, f"{name}.{field_name}")
            if "\x00" in value:
                raise ValidationError(
                    f"{name}.{field_name} holds a NUL character at {value.index(chr(0))}, which ids, names, "
                    "speakers, tags and chunks may not hold; remove it"
                )
    if not isinstance(metadata, Mapping):
        raise ValidationError(f"{name}.metadata must be an object of JSON values, got {type(metadata).__name__}")
    check_metadata(metadata, f"{name}.metadata", limits)
    try:
        encoded = json.dumps(dict(metadata), ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise ValidationError(
            f"{name}.metadata must hold JSON values only (strings, finite numbers, lists, objects): {exc}"
        ) from None
    storable(encoded, f"{name}.metadata")


def check_chunks(doc_id: str, chunks: Sequence[ChunkInput]) -> tuple[ChunkInput, ...]:
    """The chunks of a document: at least one, each a ChunkInput with text, ordinals distinct."""
    if not chunks:
        raise ValidationError(f"document {doc_id!r} needs at least one chunk, got none; skip empty documents")
    ordinals = [c.ordinal for c in chunks]
    if len(set(ordinals)) != len(ordinals):
        raise ValidationError(f"document {doc_id!r}: chunk ordinals must be distinct, got {sorted(ordinals)}")
    for chunk in chunks:
        if not isinstance(chunk, ChunkInput) or not chunk.text.strip():
            raise ValidationError(
                f"document {doc_id!r}: every chunk must be a ChunkInput with text, got {chunk!r}"
            )
    return tuple(chunks)


def check_kind(kind: str) -> DocumentKind:
    """`document` or `memory`."""
    if kind not in _KINDS:
        raise ValidationError(f"kind must be one of {', '.join(_KINDS)}, got {kind!r}")
    return kind  # type: ignore[return-value]


def check_tags(tags: Sequence[str]) -> tuple[str, ...]:
    """Tags as a tuple of non-empty strings (a bare string is refused: it is not a list of tags)."""
    if isinstance(tags, str) or not all(isinstance(t, str) and t for t in tags):
        raise ValidationError(f"tags must be a list of non-empty strings, got {tags!r}")
    return tuple(tags)
