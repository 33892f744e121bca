"""The constraints block: the user's rules, first in the prompt and restated just before the latest message.

The block holds the pinned facts in force and the facts the rules found in this conversation's user messages.
It is written in a fixed order (pinned first, then by key), with no times or ids, so it is byte-stable while the
constraints do not change: it belongs to the prompt's cacheable prefix. The restatement is one short line of the
pinned ones, placed where a long history would otherwise bury them (rules, not the model, keep them:
docs/how-it-works.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.bullet import clean
from memory.facts.records import FactRecord

__all__ = ["BLOCK_HEADER", "RESTATE_PREFIX", "block", "restatement"]

BLOCK_HEADER = "## Constraints (always apply)"
RESTATE_PREFIX = "Remember the constraints: "

def _ordered(facts: Sequence[FactRecord]) -> list[FactRecord]:
    return sorted(facts, key=lambda f: (not f.pinned, f.scope, f.key))


def block(facts: Sequence[FactRecord]) -> str:
    """The block's text, or "" when there is nothing to say."""
    if not facts:
        return ""
    # Two facts of one sentence may both show it ("no insurance, and keep it one-way"): it is said once.
    return "\n".join([BLOCK_HEADER, *dict.fromkeys(f"- {clean(f.text)}" for f in _ordered(facts))])


def restatement(facts: Sequence[FactRecord]) -> str:
    """The pinned constraints in one line, or "" when none is pinned."""
    pinned = [clean(f.text).rstrip("。.;；") for f in _ordered(facts) if f.pinned]
    return RESTATE_PREFIX + "; ".join(pinned) + "." if pinned else ""
