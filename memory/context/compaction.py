"""Compaction's pure parts: when to compact, where the compacted span ends, what the user said as a rule in
passing, the span's full text in parts for its references, and the digest that ties a stored summary to its messages.

The trigger (docs/how-it-works.md): the history (the summary in force plus the verbatim messages) passes
its room under the watermark (memory.context.plan). A compaction summarises the oldest units, only as many as it
takes to leave the verbatim part within `compact_target` less `summary_share` of that room (the most recent
`keep_turns` user turns stay while they fit the room), so the history must grow by a good part of its room again
before the next compaction (no compaction storm) and keeps every recent message it has room for. The summary in
force is stored as a version in task memory (TaskMemory.add_summary) with the digest of the messages it covers: a
later turn that sends the same messages reuses it as it is, byte for byte; one that sends other messages (an edited
history) gets a new one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from memory.bullet import clean
from memory.context.memo import Memo
from memory.context.messages import Message, Unit
from memory.text.sentences import split_sentences

__all__ = ["boundary", "digest", "instructions", "link", "linked", "span_texts", "triggered"]

# What a user says as a rule without the fact rules recognising it ("don't use that library", "只分析A列和B列"):
# kept verbatim among the summary's constraints.
_INSTRUCTION = re.compile(
    r"\b(don't|do not|never|always|only|must|mustn't|make sure|avoid|no more|stop using|keep (?:it|them|the)|"
    r"please (?:use|keep|write|answer|reply|stick|format)|stick to)\b"
    r"|不要|别用|别再|不许|不能|不准|禁止|请勿|只用|只分析|只看|只要|仅|必须|务必|一定要|千万",
    re.IGNORECASE)
_MAX_INSTRUCTION_CHARS = 240  # a longer sentence is explanation or pasted text, not a rule
_NOTHING: Mapping[int, str] = MappingProxyType({})
# A task item's key is its task id (at most 128 characters), "/r" and its number: a link line naming it fits.
_KEY_CHARS = 160
_MIN_PART_CHARS = 200  # a part holds a message's head and some of its text


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


def boundary(units: Sequence[Unit], cost: Callable[[Unit], int], keep_turns: int, most: int,
             room: int | None = None) -> int:
    """How many leading units to compact: the oldest, until the rest is within `most` tokens (at least the last unit
    stays); the last `keep_turns` user turns stay even beyond `most` while they fit `room`. 0 means nothing to
    compact."""
    rest = sum(cost(u) for u in units)
    at = 0
    while at < len(units) - 1 and rest > most:
        rest -= cost(units[at])
        at += 1
    starts = [i for i, u in enumerate(units) if u.messages[0].role == "user"]
    if keep_turns and starts:
        limit = starts[-keep_turns] if len(starts) >= keep_turns else 0
        if at > limit and sum(cost(u) for u in units[limit:]) <= (most if room is None else room):
            at = limit
    return at


def instructions(messages: Sequence[Message], known: Sequence[str] = (), memo: Memo | None = None) -> list[str]:
    """The user's sentences worded as rules, in order, once each, leaving out those a known fact already states
    (`memo` keeps each message's: every compaction reads every covered user message)."""
    memo = memo or Memo()
    said = [k for k in (clean(k) for k in known) if k]
    out: list[str] = []
    for message in messages:
        if message.role != "user":
            continue
        for text in memo.of("rules", message.content, _worded_as_rules):
            if not any(text in k or k in text for k in said) and text not in out:
                out.append(text)
    return out


def _worded_as_rules(text: str) -> tuple[str, ...]:
    found = (clean(s) for s in split_sentences(text))
    return tuple(t for t in found if len(t) <= _MAX_INSTRUCTION_CHARS and _INSTRUCTION.search(t))


def link(key: str) -> str:
    """The line that ends a part of a span's text: the task item holding the messages before its own."""
    return f"[the messages before these: task item {key}]"


def linked(part: str, key: str) -> str:
    """A part of a span's text as stored, naming the task item `key` of the part (or span) before it."""
    return f"{part}\n{link(key)}"


def span_texts(messages: Sequence[Message], earlier: str | None = None, *,
               offloaded: Mapping[int, str] = _NOTHING, limit: int) -> list[str]:
    """The whole text of a compacted span, one block per message, in parts to store as task items in order.

    The first part ends by naming `earlier` (the item of the span before, when there is one); store each later
    part as `linked(part, key)`, `key` being the item the part before it was stored as, and name the last part's
    item under the summary's References: every compacted message stays reachable from the newest reference.
    Every part, linked so to a key of up to `_KEY_CHARS` characters, is at most `limit` characters.

    Parts are cut between messages; a message longer than a part alone is cut at line ends where it can be, its
    later pieces headed "messages[i] (continued)". A message listed in `offloaded` (its index -> the item its whole
    text is already stored as) is written as a line naming that item instead of its text.
    """
    room = limit - max(len(linked("", "k" * _KEY_CHARS)), len(linked("", earlier)) if earlier is not None else 0)
    if room < _MIN_PART_CHARS:
        raise ValueError(f"limit must leave at least {_MIN_PART_CHARS} characters of a part for the messages once "
                         f"its link line is written, got limit={limit}; pass limits.max_text_chars")
    parts: list[str] = []
    current: list[str] = []  # the blocks of the part being filled, joined once it is full
    size = 0
    for message in messages:
        block = _block(message, offloaded.get(message.index))
        if current and size + 2 + len(block) <= room:
            current.append(block)
            size += 2 + len(block)
            continue
        if current:
            parts.append("\n\n".join(current))
        *whole, last = _pieces(block, message.index, room) if len(block) > room else [block]
        parts += whole
        current, size = [last], len(last)
    if current:
        parts.append("\n\n".join(current))
    if parts and earlier is not None:
        parts[0] = linked(parts[0], earlier)
    return parts


def _block(message: Message, key: str | None) -> str:
    head = f"messages[{message.index}] {message.role}" + (f" ({message.tool_call_id})" if message.tool_call_id
                                                            else "")
    body = message.content if key is None else f"[the whole text is task item {key}]"
    calls = "".join(f"\n-> {c.name}({c.arguments})" for c in message.tool_calls)
    return f"{head}:\n{body}{calls}"


def _pieces(block: str, index: int, room: int) -> list[str]:
    """A message's block cut into pieces of at most `room` characters, at a line end in the last half of a piece
    when there is one."""
    continued = f"messages[{index}] (continued):\n"
    pieces: list[str] = []
    rest = block
    while rest:
        head = continued if pieces else ""
        size = room - len(head)
        if len(rest) <= size:
            cut = len(rest)
        else:
            cut = rest.rfind("\n", size // 2, size) + 1 or size
        pieces.append(head + rest[:cut])
        rest = rest[cut:]
    return pieces

