"""Loaders, one per source kind, behind `load_path`; `iter_paths` walks folders and `safe_path` guards roots."""

from __future__ import annotations

from ingest.loaders.base import DocumentKind, LoadedDocument, Turn, file_mtime
from ingest.loaders.paths import FoundPath, check_paths, iter_paths, safe_path
from ingest.loaders.registry import LOADERS, SUPPORTED_SUFFIXES, load_path

__all__ = [
    "LOADERS",
    "SUPPORTED_SUFFIXES",
    "DocumentKind",
    "FoundPath",
    "LoadedDocument",
    "Turn",
    "check_paths",
    "file_mtime",
    "iter_paths",
    "load_path",
    "safe_path",
]
