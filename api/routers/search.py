"""/v1/search: experience search laid open (what `memory search` shows), for debugging what recall finds."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import AccessDep, MemoryDep
from api.schemas.search import SearchPublic, SearchRequest

router = APIRouter(prefix="/v1", tags=["search"])


@router.post("/search", response_model=SearchPublic)
def search(body: SearchRequest, memory: MemoryDep, access: AccessDep) -> SearchPublic:
    """The namespace's best chunks for `query`, each with its fused score and each retriever's rank and score."""
    return SearchPublic.of(memory.experience.explain(access.namespace(body.namespace), body.query, body.k))
