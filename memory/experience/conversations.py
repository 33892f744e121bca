"""Which conversation a turn stored without a timestamp belongs to, so that its neighbours come from it.

Every turn without a time of its own is stamped with the moment it was stored, so by time alone the turns of
unrelated requests stored in the same minute would be each other's neighbours. Such a turn is recorded here with
its conversation instead: the one its turn names, else one per add_memories call. Its neighbours (in its mixed
vector, memory.experience.turn_vectors, and in recall, catalog.neighbour_turns) are then the turns before and after it
in that conversation, in the order stored, however far apart in time. A turn with its own timestamp has no row:
it lives on the namespace's timeline, its neighbours the closest turns in time that have theirs.

The rows are written before the turns they describe (the turn's write mixes its vector by them) and removed with
the document (a trigger), so a row whose document was never written is harmless: it describes the next write of
that doc id, which records its own row first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

from memory.database import Connection

__all__ = ["assign", "forget_unwritten", "of", "request_conversation"]


def request_conversation(now: str, turns: Iterable[tuple[str | None, str]]) -> str:
    """The conversation of the unnamed turns of one call: the same call repeated at the same moment gets the same."""
    digest = hashlib.sha256(now.encode())
    for speaker, text in turns:
        digest.update(f"\0{speaker or ''}\0{text}".encode())
    return "request:" + digest.hexdigest()[:24]


def assign(tx: Connection, namespace: str, conversations: Mapping[str, str | None]) -> None:
    """Record the conversation of each doc id (None: a turn on the timeline), inside the caller's transaction."""
    timeline = [(namespace, doc_id) for doc_id, conversation in conversations.items() if conversation is None]
    tx.executemany("DELETE FROM turn_conversations WHERE namespace = ? AND doc_id = ?", timeline)
    tx.executemany(
        "INSERT INTO turn_conversations (namespace, doc_id, conversation) VALUES (?, ?, ?) "
        "ON CONFLICT (namespace, doc_id) DO UPDATE SET conversation = excluded.conversation",
        [(namespace, doc_id, c) for doc_id, c in conversations.items() if c is not None],
    )


def forget_unwritten(tx: Connection, namespace: str, doc_ids: Sequence[str]) -> None:
    """Remove the rows of those doc ids that have no document (a write that failed after `assign`)."""
    tx.executemany(
        "DELETE FROM turn_conversations WHERE namespace = ? AND doc_id = ? AND NOT EXISTS "
        "(SELECT 1 FROM documents d WHERE d.namespace = turn_conversations.namespace AND d.doc_id = ?)",
        [(namespace, doc_id, doc_id) for doc_id in doc_ids],
    )


def of(db: Connection, namespace: str, doc_ids: Sequence[str]) -> dict[str, str]:
    """The conversation of each of those doc ids that has one (turns stored without a timestamp)."""
    found: dict[str, str] = {}
    for start in range(0, len(doc_ids), 500):
        part = list(doc_ids[start:start + 500])
        found.update(db.execute(
            f"SELECT doc_id, conversation FROM turn_conversations WHERE namespace = ? AND doc_id IN "
            f"({','.join('?' * len(part))})", [namespace, *part],
        ).fetchall())
    return found
