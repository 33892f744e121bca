"""/v1/memories: conversation turns stored as experiences (user turns also scanned for facts)."""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import AccessDep, MemoryDep
from api.schemas.experience import MemoriesCreate, MemoriesPublic
from memory.experience import MemoryTurn

router = APIRouter(prefix="/v1/memories", tags=["memories"])


@router.post("", response_model=MemoriesPublic)
def add_memories(body: MemoriesCreate, memory: MemoryDep, access: AccessDep) -> MemoriesPublic:
    """Store turns, each with its own time; one embedding call for the whole batch. Turns without a timestamp are
    one conversation (or the one they name): their neighbours come from it, in order."""
    namespace = access.namespace(body.namespace)
    turns = [MemoryTurn(text=m.text, speaker=m.speaker, timestamp=m.timestamp, metadata=m.metadata,
                        project=m.project, tags=tuple(m.tags), conversation=m.conversation) for m in body.messages]
    results, facts = memory.remember(namespace, turns)
    return MemoriesPublic(stored=len(results), ids=[r.doc_id for r in results], facts=facts)
