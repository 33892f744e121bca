"""Experience memory: documents and conversation memories, stored atomically and searched hybrid."""

from memory.experience.memory import ExperienceMemory, TextInput
from memory.experience.model import (
    ChunkInfo,
    ChunkInput,
    DocumentInfo,
    DocumentResult,
    MemoryTurn,
    RetrieverHit,
    SearchExplanation,
    SearchFilters,
    Shortlist,
)
from memory.experience.repair import RepairReport
from memory.experience.results import by_retriever

__all__ = [
    "ChunkInfo",
    "ChunkInput",
    "DocumentInfo",
    "DocumentResult",
    "ExperienceMemory",
    "MemoryTurn",
    "RepairReport",
    "RetrieverHit",
    "SearchExplanation",
    "SearchFilters",
    "Shortlist",
    "TextInput",
    "by_retriever",
]
