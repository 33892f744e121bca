"""A file sent to the service (a multipart POST /v1/documents): written to a scratch folder under its own name,
then stored as `memory ingest` would store it, or queued as an ingest job when it is one large document. Errors
call the file by the name it was sent with, never by where it was written."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ingest.identity import upload_id
from ingest.loaders import SUPPORTED_SUFFIXES
from ingest.pipeline import ingest_file, load_for_job
from memory.clock import parse_iso
from memory.errors import ValidationError
from memory.experience import DocumentResult
from memory.jobs import Job
from memory.service import Memory

__all__ = ["Uploaded", "in_background", "ingest_upload"]

_MAX_NAME_BYTES = 255  # the upload is written under its own name, and file systems refuse longer names
_MAX_PATH_BYTES = 1024  # the name as sent, folders included: it becomes the document's id


@dataclass(frozen=True)
class Uploaded:
    """What became of an upload: the job it was queued as, or the documents (or turns) it was stored as."""

    job: Job | None = None
    results: tuple[DocumentResult, ...] = ()


def in_background(memory: Memory, chars: int, asked: bool | None) -> bool:
    """As the caller asked, else by size: a document over jobs.background_chars becomes an ingest job."""
    return chars > memory.config.jobs.background_chars if asked is None else asked


def ingest_upload(memory: Memory, namespace: str, filename: str | None, content: bytes, *,
                  doc_id: str | None = None, project: str | None = None, tags: Sequence[str] = (),
                  modified_at: str | None = None, background: bool | None = None) -> Uploaded:
    """Store the file `filename` holding `content` in `namespace` (its id derived from the name as sent, folders
    kept, unless `doc_id` names it); `modified_at` is when the file last changed where it came from."""
    name, derived = _names(filename)
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise ValidationError(f"file type {suffix or '(none)'} is not supported; send one of "
                              f"{', '.join(sorted(SUPPORTED_SUFFIXES))}")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(content)
        if modified_at is not None:  # as the file was where it came from, not when it was uploaded
            moment = parse_iso(modified_at, "modified_at").timestamp()
            os.utime(path, (moment, moment))
        if in_background(memory, len(content), background):
            # A document file becomes a job; a conversation's turns are bounded by limits.max_batch.
            loaded = load_for_job(memory, path, source=derived, doc_id=doc_id, derived_id=derived, project=project,
                                  tags=tags, name=derived)
            if loaded is not None:
                return Uploaded(job=memory.submit_document(namespace, loaded))
        return Uploaded(results=ingest_file(memory, namespace, path, source=derived, doc_id=doc_id,
                                            derived_id=derived, project=project, tags=tuple(tags), name=derived))


def _names(filename: str | None) -> tuple[str, str]:
    """The upload's own name (written to a scratch folder) and the id its name as sent derives (folders kept);
    refused when no file system could hold them."""
    sent = filename or "upload.txt"
    name = Path(sent).name
    size = len(name.encode("utf-8", "surrogatepass"))
    whole = len(sent.encode("utf-8", "surrogatepass"))
    if (size > _MAX_NAME_BYTES or whole > _MAX_PATH_BYTES or "\x00" in sent
            or any("\ud800" <= ch <= "\udfff" for ch in sent)):
        raise ValidationError(f"the file name must be at most {_MAX_NAME_BYTES} bytes of UTF-8 text without NUL "
                              f"characters (with its folders at most {_MAX_PATH_BYTES}), got {sent[:80]!r} "
                              f"({size} bytes); rename the file")
    return name, upload_id(sent) or name
