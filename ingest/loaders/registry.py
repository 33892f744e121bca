"""Which loader reads which file suffix, and `load_path`, the one entry point that dispatches on it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ingest.loaders.base import LoadedDocument
from ingest.loaders.conversation import load_conversation
from ingest.loaders.html import load_html
from ingest.loaders.markdown import load_markdown
from ingest.loaders.pdf import load_pdf
from ingest.loaders.text import load_text
from memory.errors import NotFoundError, ValidationError

__all__ = ["LOADERS", "SUPPORTED_SUFFIXES", "Loader", "load_path"]

# (the file, limits.max_text_chars, the name its errors call it by: its path unless given)
Loader = Callable[[Path, int | None, str | None], list[LoadedDocument]]

LOADERS: dict[str, Loader] = {
    ".txt": load_text,
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".html": load_html,
    ".htm": load_html,
    ".pdf": load_pdf,
    ".json": load_conversation,
    ".jsonl": load_conversation,
}

SUPPORTED_SUFFIXES = frozenset(LOADERS)


def load_path(path: Path, max_chars: int | None = None, name: str | None = None) -> list[LoadedDocument]:
    """The documents in one file (resolve it with `safe_path` first); `max_chars` is limits.max_text_chars, `name`
    what an error calls the file (an upload's name as sent, not where it was written)."""
    where = name or str(path)
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        raise ValidationError(
            f"{where} has the unsupported suffix {path.suffix or '(none)'!r}; "
            f"expected one of {', '.join(sorted(SUPPORTED_SUFFIXES))}"
        )
    if not path.exists():
        raise NotFoundError(f"{where} does not exist; check the path")
    if not path.is_file():
        raise ValidationError(f"{where} is not a regular file; pass a file, or a folder to iter_paths")
    return loader(path, max_chars, name)
