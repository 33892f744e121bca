"""What goes into and comes out of experience memory: frozen dataclasses and the text a chunk is indexed as."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from memory.snippet import Snippet

__all__ = [
    "ChunkInfo",
    "ChunkInput",
    "DocumentInfo",
    "DocumentKind",
    "DocumentResult",
    "MemoryTurn",
    "RetrieverHit",
    "SearchExplanation",
    "SearchFilters",
    "Shortlist",
    "content_hash",
    "indexed_text",
]

DocumentKind = Literal["document", "memory"]
DocumentStatus = Literal["created", "updated", "unchanged"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class ChunkInput:
    """One already-chunked piece of a document, in reading order."""

    text: str
    heading: str = ""
    ordinal: int = 0


@dataclass(frozen=True)
class DocumentResult:
    """What add_document did: how many chunks the document has now, and whether anything changed."""

    doc_id: str
    chunks: int
    status: DocumentStatus


@dataclass(frozen=True)
class DocumentInfo:
    """A stored document or memory, as listed (without its chunk texts)."""

    namespace: str
    doc_id: str
    kind: DocumentKind
    title: str | None
    source: str | None
    content_hash: str
    version: int
    chunks: int
    tokens: int
    project: str | None
    tags: tuple[str, ...]
    speaker: str | None
    metadata: Mapping[str, Any]
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class ChunkInfo:
    """One stored chunk of a document, as shown (in reading order): its text, heading and cl100k token count."""

    id: str
    doc_id: str
    ordinal: int
    heading: str
    text: str
    tokens: int
    updated_at: str


@dataclass(frozen=True)
class MemoryTurn:
    """One conversation turn (or other short experience) to store as its own one-chunk memory.

    `conversation` groups turns that have no `timestamp`: their neighbours are the turns next to them in it, in
    the order stored (without it, one add_memories call is one conversation). A turn with a timestamp has the
    closest turns in time as neighbours, whatever its conversation.
    """

    text: str
    speaker: str | None = None
    timestamp: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    doc_id: str | None = None
    project: str | None = None
    tags: tuple[str, ...] = ()
    source: str | None = None
    conversation: str | None = None


@dataclass(frozen=True)
class SearchFilters:
    """Optional restrictions on a search; every field left None (or empty) lets everything through."""

    project: str | None = None
    tags: tuple[str, ...] = ()
    source: str | None = None
    kind: DocumentKind | None = None
    updated_from: str | None = None
    updated_to: str | None = None

    @property
    def empty(self) -> bool:
        """True when nothing is restricted."""
        return self == SearchFilters()


class RetrieverHit(NamedTuple):
    """One retriever's candidate: chunk id, 1-based rank and the retriever's own score.

    A NamedTuple, as are the other per-candidate records of a search (fused, ranked): a search makes one of
    each per candidate, and a frozen dataclass costs several times as much to build (bench/recall_speed.py).
    """

    chunk_id: str
    rank: int
    score: float


@dataclass(frozen=True)
class SearchExplanation:
    """A search laid open for `memory search --explain`: each retriever's list, the weights, the result."""

    query: str
    terms: tuple[str, ...]
    cjk_share: float
    temporal: bool
    dense_weight: float
    lexical_weight: float
    dense: tuple[RetrieverHit, ...]
    lexical: tuple[RetrieverHit, ...]
    results: tuple[Snippet, ...]


@dataclass(frozen=True)
class Shortlist:
    """A search cut where its results' tokens reach what the caller can use: whole snippets, then only scores.

    `snippets` are the best results, best first (score, then id), while their tokens (each counted up to the
    reach) add up to at most the reach (always at least one); `beyond` holds the scores of the other results.
    """

    snippets: tuple[Snippet, ...]
    beyond: tuple[float, ...]


def indexed_text(text: str, heading: str = "", speaker: str | None = None) -> str:
    """The text a chunk is embedded and indexed as: its heading line, then `speaker: text`."""
    body = f"{speaker}: {text}" if speaker else text
    return f"{heading}\n{body}" if heading else body


def content_hash(text: str, **fields: Any) -> str:
    """A hash of the text and everything stored beside it, so a change to either counts as a change."""
    blob = json.dumps({"text": text, **fields}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
