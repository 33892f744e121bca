"""What a file's document is called when no doc_id is given: one rule for `memory ingest`, folders and uploads.

A file is named by its path relative to the parent of the argument it was found under, `/`-separated: a file
argument by its own name (`memory ingest ~/notes.md` → `notes.md`), a file in a folder argument by that folder's
name and the path below it (`memory ingest docs/` → `docs/a/notes.md`). An upload is named by its file name as
sent, folders included, so a client that sends `derived_id` as the file name gets the id the CLI would store.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["derived_id", "upload_id"]


def derived_id(path: Path, root: Path) -> str:
    """The id of file `path` found under `root`, the file or folder the user named (never an absolute path)."""
    top = _absolute(root)
    found = _absolute(path)
    if found == top or not found.is_relative_to(top):  # a file argument, or not under it after all: its own name
        return found.name
    return found.relative_to(top.parent).as_posix()


def upload_id(filename: str) -> str:
    """The id an upload's file name as sent derives: its folders kept, `/`-separated (a `\\` read as `/`), and
    empty, `.` and `..` parts dropped, since they name no folder of the sender's; '' when nothing is left."""
    return "/".join(part for part in filename.replace("\\", "/").split("/") if part not in ("", ".", ".."))


def _absolute(path: Path) -> Path:
    # normpath, not resolve: a link is named where it was found, not after what it points to.
    return Path(os.path.normpath(path.expanduser().absolute()))
