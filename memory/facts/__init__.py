"""The fact tier: user constraints and preferences as versioned key/value records (FactMemory, memory.facts.memory),
read from messages by rules and a detector."""

from memory.facts.model import ExtractedFact
from memory.facts.records import FactChange, FactRecord, Outcome, OutcomeKind

__all__ = ["ExtractedFact", "FactChange", "FactRecord", "Outcome", "OutcomeKind"]
