"""Request and response bodies of /v1/memories and /v1/documents."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from pydantic import BaseModel, Field, field_validator

from api.schemas.base import Namespace, RequestModel
from memory.experience import DocumentInfo, TextInput

__all__ = [
    "DocId",
    "DocumentCreate",
    "DocumentForm",
    "DocumentListPublic",
    "DocumentPublic",
    "DocumentResultPublic",
    "MemoriesCreate",
    "MemoriesPublic",
    "MessageIn",
]


class MessageIn(RequestModel):
    """One conversation turn or other short experience."""

    text: str = Field(min_length=1)
    speaker: str | None = Field(default=None, max_length=200)
    timestamp: str | None = Field(default=None, description="ISO 8601; the time the turn happened")
    metadata: dict[str, Any] = {}
    project: str | None = None
    tags: list[str] = []
    conversation: str | None = Field(
        default=None, min_length=1, max_length=200,
        description="groups turns without a timestamp: their neighbours are the turns next to them in it "
                    "(without it, one request is one conversation)",
    )


class MemoriesCreate(RequestModel):
    """Turns to store as experiences."""

    namespace: Namespace
    messages: list[MessageIn] = Field(min_length=1)


class MemoriesPublic(BaseModel):
    """How many turns were stored, their ids, and how many facts the user's turns yielded."""

    stored: int
    ids: list[str]
    facts: int = 0


# A caller's own document id: any text (a '/' included), as the routes take it whole (`{doc_id:path}`).
DocId = Annotated[str, Field(min_length=1, max_length=200)]


class DocumentCreate(RequestModel):
    """A document given as text."""

    namespace: Namespace
    text: str = Field(min_length=1)
    title: str | None = Field(default=None, max_length=500)
    source: str | None = Field(default=None, max_length=2000)
    doc_id: DocId | None = None
    updated_at: str | None = None
    metadata: dict[str, Any] = {}
    project: str | None = None
    tags: list[str] = []

    @field_validator("text")
    @classmethod
    def _not_binary(cls, text: str) -> str:
        if "\x00" in text:
            raise ValueError(f"holds a NUL character at {text.index(chr(0))}, so it looks binary; send the "
                             "document's text, or upload the file as multipart/form-data")
        return text

    def document(self) -> TextInput:
        """The library's document for this body: every field memory.TextInput declares that the body has, by name."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(TextInput)
                  if f.name in type(self).model_fields}
        return TextInput(**{**fields, "tags": tuple(self.tags)})


class DocumentForm(RequestModel):
    """The form fields of a multipart upload beside its `file`, held to the JSON body's rules."""

    namespace: Namespace
    doc_id: DocId | None = None
    project: str | None = None
    tags: list[str] = Field(default=[], description="repeat the field for several tags")
    modified_at: str | None = Field(default=None, description="ISO 8601: the file's modification time where it "
                                    "came from (what a loader reads when the content carries no date)")


class DocumentResultPublic(BaseModel):
    """What an ingest did."""

    doc_id: str
    chunks: int
    status: str


class DocumentPublic(BaseModel):
    """A stored document or memory."""

    doc_id: str
    kind: str
    title: str | None
    source: str | None
    version: int
    chunks: int
    tokens: int
    project: str | None
    tags: list[str]
    metadata: dict[str, Any]
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, info: DocumentInfo) -> DocumentPublic:
        """From a library record."""
        return cls(doc_id=info.doc_id, kind=info.kind, title=info.title, source=info.source, version=info.version,
                   chunks=info.chunks, tokens=info.tokens, project=info.project, tags=list(info.tags),
                   metadata=dict(info.metadata), created_at=info.created_at, updated_at=info.updated_at)


class DocumentListPublic(BaseModel):
    """Documents of a namespace (one page of them with `limit`), and how many there are in all."""

    documents: list[DocumentPublic]
    total: int = Field(description="documents (of the kind asked for) in the namespace, whatever the page")
