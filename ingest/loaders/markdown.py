"""Markdown files: front matter gives the title and date, else the first level-one heading is the title."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from ingest.loaders.base import LoadedDocument, check_text, file_mtime, read_text
from memory.clock import parse_iso
from memory.errors import ValidationError

__all__ = ["load_markdown"]

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_FIELD = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_TITLE = re.compile(r"^ {0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)
# Front-matter keys that date the content, most specific first.
_DATE_KEYS = ("updated", "updated_at", "last_modified", "lastmod", "modified", "date")


def load_markdown(path: Path, max_chars: int | None = None, name: str | None = None) -> list[LoadedDocument]:
    """One document; the front matter block, when present, is read and removed from the text."""
    name = name or str(path)
    text = read_text(path, max_chars, name)
    fields: dict[str, str] = {}
    front = _FRONT_MATTER.match(text)
    if front:
        fields = {key.lower(): value.strip("\"'") for key, value in _FIELD.findall(front.group(1))}
        text = text[front.end() :]
        check_text(name, text, max_chars)
    heading = _TITLE.search(text)
    title = fields.get("title") or (heading.group(1).strip() if heading else None)
    updated_at = _content_date(fields) or file_mtime(path)
    return [LoadedDocument(path.name, title, str(path), text, "document", updated_at)]


def _content_date(fields: dict[str, str]) -> datetime | None:
    for key in _DATE_KEYS:
        if fields.get(key):
            try:
                return parse_iso(fields[key], key)
            except ValidationError:
                continue  # a free-form date ("last spring") is no reason to refuse the file
    return None
