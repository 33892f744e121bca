"""What every processor is: the reduced result it answers and the one method it has."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from memory.tokens import TokenCounter

__all__ = ["Processed", "Processor"]


@dataclass(frozen=True)
class Processed:
    """A tool result reduced by the processor `name`.

    `text` fits the room it was given whenever the processor's smallest form does (else it is that smallest form);
    `left_out` is one sentence saying what `text` leaves out, "" when nothing.
    """

    name: str
    text: str
    left_out: str


class Processor(Protocol):
    """Reduces one kind of tool output to `room` tokens; None when the text is not its kind or cannot shrink."""

    name: str

    def reduce(self, text: str, room: int, counter: TokenCounter) -> Processed | None: ...
