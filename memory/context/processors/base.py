"""What every processor is, and how one is chosen for a tool result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from memory.errors import ValidationError

__all__ = ["Processed", "Processor", "process"]


@dataclass(frozen=True)
class Processed:
    """A reduced tool result and the processor that made it (`name`)."""

    name: str
    text: str


class Processor(Protocol):
    """Reduces one kind of tool output; `reduce` answers None when the text is not its kind or would not shrink."""

    name: str

    def reduce(self, text: str) -> str | None: ...


def process(tool: str, text: str, processors: Sequence[Processor],
            by_tool: Mapping[str, str] | None = None) -> Processed | None:
    """The result reduced by the processor configured for `tool`, else by the first that accepts it; None when
    none makes it shorter (the result then goes on as it came)."""
    chosen = (by_tool or {}).get(tool)
    candidates = [p for p in processors if p.name == chosen] if chosen else list(processors)
    if chosen and not candidates:
        known = ", ".join(p.name for p in processors)
        raise ValidationError(f"tool {tool!r} is set to processor {chosen!r}, which does not exist; the processors "
                              f"are {known}")
    for processor in candidates:
        reduced = processor.reduce(text)
        if reduced is not None and len(reduced) < len(text):
            return Processed(processor.name, reduced)
    return None
