"""Which document a text is: the one rule every entry point shares (docs/api.md, "Document identity").

An explicit id names the document. A derived one (a file's name, else a hash of the source or the text) never
overwrites anything: content already stored answers `unchanged`, other content under the name is a conflict.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from memory.database import Connection
from memory.errors import ConflictError
from memory.experience import catalog
from memory.experience.model import ChunkInput, DocumentResult

__all__ = ["derived_id", "kept"]


def derived_id(name: str | None, source: str | None, text: str) -> str:
    """The id of a document sent without one: its file's name, else `d-` and a hash of its source or text."""
    return name or "d-" + hashlib.sha256((source or text).encode("utf-8")).hexdigest()[:20]


def kept(db: Connection, namespace: str, doc_id: str, exists: bool,
         chunks: Sequence[ChunkInput]) -> DocumentResult | None:
    """What a document under a derived id answers instead of being written, or None when it is new.

    The check and the write are not one transaction: two first writes of one name at the same moment may both
    pass it, and the later one updates the earlier.
    """
    if exists:
        if catalog.same_chunks(db, namespace, doc_id, chunks):
            return DocumentResult(doc_id=doc_id, chunks=len(chunks), status="unchanged")
        raise ConflictError(
            f"document {doc_id!r} already exists in namespace {namespace!r} with other content, and nothing was "
            f"overwritten; send doc_id={doc_id!r} to replace it, or another doc_id to keep both"
        )
    twin = catalog.document_with_chunks(db, namespace, chunks)
    return None if twin is None else DocumentResult(doc_id=twin, chunks=len(chunks), status="unchanged")
