"""Turn the paths a user names into the files to load: folder walks, skipped files, and the traversal guard."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ingest.identity import derived_id
from ingest.loaders.registry import SUPPORTED_SUFFIXES
from memory.errors import NotFoundError, ValidationError

__all__ = ["FoundPath", "check_paths", "iter_paths", "safe_path"]


@dataclass(frozen=True)
class FoundPath:
    """A file to load, or one passed over with the reason (`skip_reason` is None for files to load).

    `name` is what the file's document is called without a doc_id (ingest.identity.derived_id), for files to load.
    """

    path: Path
    skip_reason: str | None = None
    name: str | None = None


def safe_path(path: str | Path, root: Path | None = None) -> Path:
    """`path` resolved (relative paths against `root`); with a root, anything resolving outside it is refused."""
    text = str(path)
    if "\x00" in text:
        raise ValidationError(f"path {text!r} contains a NUL byte; pass a plain file or folder path")
    candidate = Path(path).expanduser()
    if root is None:
        return candidate.resolve()
    base = root.expanduser().resolve()
    resolved = (base / candidate).resolve()  # an absolute `candidate` replaces `base` here
    if not resolved.is_relative_to(base):
        raise ValidationError(
            f"path {text!r} resolves to {resolved}, outside the allowed folder {base}; pass a path inside that folder"
        )
    return resolved


def check_paths(paths: Iterable[str | Path], root: Path | None = None) -> None:
    """NotFoundError naming the first of `paths` that does not exist."""
    for given in paths:
        _existing(given, root)


def _existing(given: str | Path, root: Path | None) -> Path:
    path = safe_path(given, root)
    if not path.exists():
        raise NotFoundError(f"{given} does not exist; check the path")
    return path


def iter_paths(paths: Iterable[str | Path], root: Path | None = None) -> Iterator[FoundPath]:
    """Every file under `paths` in sorted order; hidden, unsupported and out-of-root entries come back skipped."""
    for given in paths:
        path = _existing(given, root)
        if path.is_dir():
            yield from _walk(path, root.expanduser().resolve() if root else None)
        else:
            given_path = Path(given).expanduser()
            yield _judge(path, None, derived_id(given_path, given_path))  # a link is named as given


def _walk(folder: Path, root: Path | None) -> Iterator[FoundPath]:
    for current, dirs, files in os.walk(folder):
        here = Path(current)
        entries = sorted([(name, True) for name in dirs] + [(name, False) for name in files])
        dirs.clear()  # the walk descends only into the folders re-added below, in sorted order
        for name, is_dir in entries:
            path = here / name
            if name.startswith("."):
                yield FoundPath(path, "hidden")
            elif is_dir and path.is_symlink():
                yield FoundPath(path, "symbolic link to a folder (not followed)")
            elif is_dir:
                dirs.append(name)
            else:
                yield _judge(path, root, derived_id(path, folder))


def _judge(path: Path, root: Path | None, name: str) -> FoundPath:
    resolved = path.resolve()
    if root is not None and not resolved.is_relative_to(root):
        return FoundPath(path, f"links outside the allowed folder {root}")
    if not resolved.is_file():
        return FoundPath(path, "not a regular file")
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        return FoundPath(path, f"unsupported suffix {path.suffix or '(none)'!r}")
    return FoundPath(resolved, name=name)
