"""The body of a bullet line in the context block, and what it costs: one definition that writers and recall share.

Experience memory stores each chunk's `body_cost` beside it, so recall need not encode the text again; recall
renders bullets with the same `clean`. Both import this module, which sits below them. The store records
BULLET_FORMAT and recounts every stored cost when it opens with another one, so a change to `clean` or to how a
body joins its head cannot leave stale costs behind: bump BULLET_FORMAT with any such change.
"""

from __future__ import annotations

from memory.tokens import TokenCounter

__all__ = ["BULLET_FORMAT", "body_cost", "clean"]

BULLET_FORMAT = 1


def clean(text: str) -> str:
    """Collapse every whitespace run to one space."""
    # One bullet per line keeps the block compact and its token count additive (see memory.recall.render).
    return " ".join(text.split())


def body_cost(text: str, counter: TokenCounter) -> int:
    """What the whole of `text` adds to its bullet: the count of " " + clean(text) + "\\n".

    A bullet is `head + " " + body + "\\n"`, the head ending in "-", ")" or "]". cl100k's pre-tokenizer never
    joins a piece across a space that follows a non-space and precedes a non-space (no pattern reads on past
    a non-space into a space), so the bullet costs count(head) + body_cost(text): a tier that stores this number
    spares recall from encoding the text again.
    """
    return counter.count(" " + clean(text) + "\n")
