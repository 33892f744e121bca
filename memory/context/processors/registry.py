"""The processors in the order they are tried, and how one is chosen for a tool result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memory.context.processors.base import Processed, Processor
from memory.context.processors.html import HtmlText
from memory.context.processors.json_value import JsonValue
from memory.context.processors.logs import LogLines
from memory.context.processors.rows import RowSet
from memory.errors import ValidationError
from memory.tokens import TokenCounter

__all__ = ["ALIASES", "PROCESSORS", "process"]

# Tried in this order when no processor is configured for the tool: the first that shrinks the text reduces it.
PROCESSORS: tuple[Processor, ...] = (JsonValue(), RowSet(), HtmlText(), LogLines())

# Names configured before a processor was renamed, so that existing configurations keep working.
ALIASES: Mapping[str, str] = {"json_list": "json"}


def process(tool: str, text: str, room: int, counter: TokenCounter, processors: Sequence[Processor] = PROCESSORS,
            by_tool: Mapping[str, str] | None = None) -> Processed | None:
    """`text` reduced to `room` tokens by the processor configured for `tool`, else by the first that accepts it;
    None when none makes it shorter in tokens (the result then goes on as it came)."""
    configured = (by_tool or {}).get(tool)
    chosen = ALIASES.get(configured, configured) if configured else None
    candidates = [p for p in processors if p.name == chosen] if chosen else list(processors)
    if chosen and not candidates:
        known = ", ".join(p.name for p in processors)
        aliases = "".join(f"; {old} is another name for {new}" for old, new in ALIASES.items())
        raise ValidationError(f"tool {tool!r} is set to processor {configured!r}, which does not exist; the "
                              f"processors are {known}{aliases}")
    for processor in candidates:
        reduced = processor.reduce(text, room, counter)
        if reduced is not None and _fewer_tokens(reduced.text, text, counter):
            return reduced
    return None


def _fewer_tokens(reduced: str, text: str, counter: TokenCounter) -> bool:
    """Whether `reduced` counts fewer tokens than `text`, without counting all of a long `text`.

    A prefix of a text counts at most the text's tokens give or take its last piece (the tokenizer splits text into
    pieces before it encodes them), so a prefix counting clearly more than `reduced` settles it; the prefix grows
    until it does or is the whole text.
    """
    tokens = counter.count(reduced)
    end = 2 * len(reduced) + 64
    while end < len(text):
        if counter.count(text[:end]) > tokens + 2:
            return True
        end *= 2
    return tokens < counter.count(text)
