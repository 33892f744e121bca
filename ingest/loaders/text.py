"""Plain .txt files: the whole file is one document."""

from __future__ import annotations

from pathlib import Path

from ingest.loaders.base import LoadedDocument, file_mtime, read_text

__all__ = ["load_text"]


def load_text(path: Path, max_chars: int | None = None, name: str | None = None) -> list[LoadedDocument]:
    """One document holding the file's text."""
    name = name or str(path)
    text = read_text(path, max_chars, name)
    return [LoadedDocument(path.name, None, str(path), text, "document", file_mtime(path))]
