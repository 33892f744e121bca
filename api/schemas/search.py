"""Request and response bodies of /v1/search: an experience search with each retriever's part laid open."""

from __future__ import annotations

from pydantic import BaseModel, Field

from api.schemas.base import Namespace, RequestModel
from memory.experience import RetrieverHit, SearchExplanation

__all__ = ["RankPublic", "SearchHitPublic", "SearchPublic", "SearchRequest"]


class SearchRequest(RequestModel):
    """A query against one namespace's documents and memories."""

    unstored = frozenset({"query"})
    namespace: Namespace
    query: str
    k: int = Field(default=10, ge=1, le=100, strict=True, description="results to return")


class RankPublic(BaseModel):
    """Where one retriever placed a result: 1-based rank and its own score (cosine, or BM25)."""

    rank: int
    score: float


class SearchHitPublic(BaseModel):
    """One result: the chunk, its fused score and each retriever's rank (null where it did not find it)."""

    id: str
    doc_id: str | None
    text: str
    score: float
    dense: RankPublic | None
    lexical: RankPublic | None


class SearchPublic(BaseModel):
    """The analysed query, the fusion weights it got, and the results best first."""

    query: str
    terms: list[str]
    cjk_share: float
    temporal: bool
    dense_weight: float
    lexical_weight: float
    results: list[SearchHitPublic]

    @classmethod
    def of(cls, found: SearchExplanation) -> SearchPublic:
        """From the library's explanation."""
        dense = {h.chunk_id: h for h in found.dense}
        lexical = {h.chunk_id: h for h in found.lexical}

        def rank(hits: dict[str, RetrieverHit], chunk_id: str) -> RankPublic | None:
            hit = hits.get(chunk_id)
            return RankPublic(rank=hit.rank, score=round(hit.score, 6)) if hit is not None else None

        return cls(
            query=_sound(found.query), terms=[_sound(t) for t in found.terms], cjk_share=round(found.cjk_share, 4),
            temporal=found.temporal, dense_weight=round(found.dense_weight, 4),
            lexical_weight=round(found.lexical_weight, 4),
            results=[SearchHitPublic(id=s.id, doc_id=s.doc_id, text=s.text, score=round(s.score, 6),
                                     dense=rank(dense, s.id), lexical=rank(lexical, s.id))
                     for s in found.results],
        )


def _sound(text: str) -> str:
    """`text` as it can be answered in JSON: a lone surrogate of the query (read, never stored) becomes U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
