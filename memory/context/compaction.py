"""Compaction's pure parts: when to compact, where the compacted span ends, what the user said as a rule in
passing, the span's full text for its reference, and the digest that ties a stored summary to its messages.

The trigger (seed 001 §5.1, seed 003 §3.3): the history (the summary in force plus the verbatim messages) passes
`compact_watermark` of its room. A compaction summarises everything before the most recent `keep_turns` user
turns, and more when those are still large: the verbatim part is left at most half of the gap between the
watermark and the summary's share, so the history must grow by that much again before the next compaction (no
compaction storm, and the prefix changes once per run). The summary in force is stored as a version in task
memory (TaskMemory.add_summary) with the digest of the messages it covers: a later turn that sends the same
messages reuses it as it is, byte for byte; one that sends other messages (an edited history) gets a new one.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Sequence

from memory.bullet import clean
from memory.context.messages import Message, Unit
from memory.text import remembered
from memory.text.sentences import split_sentences

__all__ = ["boundary", "digest", "forget", "instructions", "span_text", "triggered"]

# What a user says as a rule without the fact rules recognising it ("don't use that library", "只分析A列和B列"):
# kept verbatim among the summary's constraints.
_INSTRUCTION = re.compile(
    r"\b(don't|do not|never|always|only|must|mustn't|make sure|avoid|no more|stop using|keep (?:it|them|the)|"
    r"please (?:use|keep|write|answer|reply|stick|format)|stick to)\b"
    r"|不要|别用|别再|不许|不能|不准|禁止|请勿|只用|只分析|只看|只要|仅|必须|务必|一定要|千万",
    re.IGNORECASE)
_MAX_INSTRUCTION_CHARS = 240  # a longer sentence is explanation or pasted text, not a rule


def digest(messages: Sequence[Message], last: int) -> str:
    """A hash of the request's messages up to index `last`, as they were sent (checked every turn: one join and
    one hash, not one per message)."""
    parts = []
    for message in messages[:last + 1]:
        parts += [message.role, message.content, message.tool_call_id or ""]
        parts += [f"{c.id}\x03{c.name}\x03{c.arguments}" for c in message.tool_calls]
        parts.append("\x01")
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def triggered(size: int, room: int, watermark: float) -> bool:
    """Whether a history of `size` tokens has passed the watermark of its `room`."""
    return size > watermark * room


def boundary(units: Sequence[Unit], cost: Callable[[Unit], int], keep_turns: int, most: int) -> int:
    """How many leading units to compact: all before the last `keep_turns` user turns, then more while the
    rest is over `most` tokens (at least the last unit stays). 0 means nothing to compact."""
    starts = [i for i, u in enumerate(units) if u.messages[0].role == "user"]
    at = len(units) if keep_turns == 0 else (starts[-keep_turns] if len(starts) >= keep_turns else 0)
    at = min(at, max(len(units) - 1, 0))
    rest = sum(cost(u) for u in units[at:])
    while at < len(units) - 1 and rest > most:
        rest -= cost(units[at])
        at += 1
    return at


def instructions(messages: Sequence[Message], known: Sequence[str] = ()) -> list[str]:
    """The user's sentences worded as rules, in order, once each, leaving out those a known fact already states."""
    said = [k for k in (clean(k) for k in known) if k]
    out: list[str] = []
    for message in messages:
        if message.role != "user":
            continue
        for text in _worded_as_rules(message.content):
            if not any(text in k or k in text for k in said) and text not in out:
                out.append(text)
    return out


@functools.lru_cache(maxsize=16384)
def _worded_as_rules(text: str) -> tuple[str, ...]:
    """A message's sentences worded as rules, remembered: every compaction reads every covered user message."""
    found = (clean(s) for s in split_sentences(text))
    return tuple(t for t in found if len(t) <= _MAX_INSTRUCTION_CHARS and _INSTRUCTION.search(t))


def forget() -> None:
    """Clear the sentences remembered from user messages (memory.text.remembered)."""
    _worded_as_rules.cache_clear()


def span_text(messages: Sequence[Message], earlier: str | None = None) -> str:
    """The whole text of a compacted span, one block per message, for the task item its reference names; it ends
    by naming the item of the span before it (`earlier`), so every compacted message stays reachable from the
    newest reference however many compactions a summary has room to list."""
    blocks = []
    for m in messages:
        head = f"messages[{m.index}] {m.role}" + (f" ({m.tool_call_id})" if m.tool_call_id else "")
        calls = "".join(f"\n-> {c.name}({c.arguments})" for c in m.tool_calls)
        blocks.append(f"{head}:\n{m.content}{calls}")
    if earlier is not None:
        blocks.append(f"[the messages before these: task item {earlier}]")
    return "\n\n".join(blocks)


remembered.register(forget)
