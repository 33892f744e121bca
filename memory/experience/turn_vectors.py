"""Conversation context in turn vectors: a memory turn is searched by its own embedding plus a share of its
neighbours' (the turns just before and after it, as memory.experience.catalog.neighbour_turns finds them).

A turn alone often says little ("Yes, last Tuesday!", "What did you learn there?"): the question or the answer
around it carries the topic. So the vector Chroma searches for turn t is
    normalise(own(t) + turn_context × (own(turn before) + own(turn after)))
where a neighbour counts only within neighbour_window_s. A turn stored without a timestamp has as neighbours the
turns before and after it in its own conversation, however far apart (memory.experience.conversations); a turn
with one, the closest turns in time that have theirs. The embedder is not asked again: each turn's own
embedding is kept in SQLite (`turn_vectors`, per vector generation) and the mix is recomputed whenever a
neighbour arrives, changes or leaves. The mix raises LoCoMo evidence recall at every budget, and the default
turn_context was chosen on it: measured by `bench.recall_quality --library` (0 turns the mix off).

Each row records in `mix` what its Chroma vector was made of (weight and neighbour ids; NULL = the own
embedding). `sync` re-mixes the turns whose recorded mix is not the one their current neighbours give, so a
write, a delete, a changed turn_context, or a kill between a commit and the re-mix all end the same way: the
next sync (after every write, and for every namespace on a background thread when Memory opens) puts it right.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta

import numpy as np

from memory.clock import parse_iso, to_iso
from memory.config import RetrievalConfig
from memory.database import Connection
from memory.store import Store

__all__ = [
    "OFF", "Put", "Remix", "TurnContext", "apply", "own_vectors", "record", "stale", "store_own", "sync", "sync_all",
]

# Gives the given chunk ids these vectors in the namespace's collection, replacing what they had.
Put = Callable[[list[str], np.ndarray], None]


@dataclass(frozen=True)
class TurnContext:
    """How much of its neighbours a turn's vector carries, and how far away (in seconds) a neighbour may be."""

    weight: float
    window_s: int

    @classmethod
    def of(cls, retrieval: RetrievalConfig) -> TurnContext:
        """The configured one: `turn_context` of the turns within `neighbour_window_s`."""
        return cls(retrieval.turn_context, retrieval.neighbour_window_s)


# Turn vectors are their own embeddings (the own embeddings are still kept, so turning it on needs no encoding).
OFF = TurnContext(0.0, 3600)


def store_own(tx: Connection, generation: int, rows: Iterable[tuple[str, np.ndarray]]) -> None:
    """Keep these turns' own embeddings (inside the caller's transaction); their Chroma vectors are unmixed."""
    tx.executemany(
        "INSERT INTO turn_vectors (id, generation, vector, mix) VALUES (?, ?, ?, NULL) "
        "ON CONFLICT (id, generation) DO UPDATE SET vector = excluded.vector, mix = NULL",
        [(chunk_id, generation, np.asarray(vector, dtype=np.float32).tobytes()) for chunk_id, vector in rows],
    )


def own_vectors(db: Connection, generation: int, ids: Sequence[str]) -> dict[str, np.ndarray]:
    """The kept own embeddings of those ids that have one."""
    found: dict[str, np.ndarray] = {}
    for start in range(0, len(ids), 500):
        part = list(ids[start:start + 500])
        marks = ",".join("?" * len(part))
        for chunk_id, blob in db.execute(
            f"SELECT id, vector FROM turn_vectors WHERE generation = ? AND id IN ({marks})", [generation, *part]
        ).fetchall():
            found[chunk_id] = np.frombuffer(blob, dtype=np.float32)
    return found


# Every memory turn of a namespace (or those _PICKED) with its neighbours in the order of catalog.neighbour_turns
# (time, then storage order; within its own conversation for a turn stored without a timestamp, NULL being the
# timeline of the turns with one), its conversation, and the mix its vector was made with (generation :gen).
_TURNS = """
WITH {picked} turns AS (
    SELECT c.id, c.updated_at, c.rowid AS stored, t.mix, t.vector IS NOT NULL AS kept, v.conversation
    FROM {chunks}
    JOIN documents d ON d.namespace = c.namespace AND d.doc_id = c.doc_id
    LEFT JOIN turn_vectors t ON t.id = c.id AND t.generation = :gen
    LEFT JOIN turn_conversations v ON v.namespace = c.namespace AND v.doc_id = c.doc_id
    WHERE c.namespace = :ns AND d.kind = 'memory'
)
SELECT id, updated_at, mix, kept, conversation,
       lag(id) OVER w, lag(updated_at) OVER w, lag(kept) OVER w,
       lead(id) OVER w, lead(updated_at) OVER w, lead(kept) OVER w
FROM turns WINDOW w AS (PARTITION BY conversation ORDER BY updated_at, stored)
"""
# The chunks within :low..:high, and every turn of a conversation that has a turn there: a conversation's
# neighbours are not bounded in time. (A UNION, not an OR, and CROSS JOIN, which SQLite never reorders, keep every
# step on an index: a conversation's few rows, never a scan of the namespace.)
_PICKED = """
touched AS (
    SELECT DISTINCT v.conversation FROM chunks c
    JOIN turn_conversations v ON v.namespace = c.namespace AND v.doc_id = c.doc_id
    WHERE c.namespace = :ns AND c.updated_at BETWEEN :low AND :high
), picked AS (
    SELECT c.rowid AS rid FROM chunks c WHERE c.namespace = :ns AND c.updated_at BETWEEN :low AND :high
    UNION
    SELECT c.rowid FROM touched
    CROSS JOIN turn_conversations v ON v.namespace = :ns AND v.conversation = touched.conversation
    CROSS JOIN chunks c ON c.namespace = v.namespace AND c.doc_id = v.doc_id
),"""


@dataclass(frozen=True)
class Remix:
    """A turn's vector as its current neighbours make it, and the mix to record for it."""

    chunk_id: str
    vector: np.ndarray
    mix: str | None


def stale(
    db: Connection, namespace: str, generation: int, context: TurnContext,
    around: Sequence[str] | None = None,
) -> list[Remix]:
    """The turns whose vector does not match their current neighbours, with the vector they should have.

    `around`: the times (ISO) of turns just written or removed; only turns that can have them as neighbours are
    looked at (those near them in time, and every turn of a conversation with a turn near them). None looks at
    the whole namespace. Reads through `db`, so inside an open transaction it sees
    that transaction's rows.
    """
    found = _stale(db, namespace, generation, context, around)
    if not found:
        return []
    own = own_vectors(db, generation, sorted({i for c, (_, b, a, _) in found.items() for i in (c, b, a) if i}))
    return [Remix(c, _vector(own, c, before, after, context.weight), mix)
            for c, (_, before, after, mix) in found.items() if c in own]


def _stale(
    db: Connection, namespace: str, generation: int, context: TurnContext, around: Sequence[str] | None,
) -> dict[str, tuple[str, str | None, str | None, str | None]]:
    """id -> (time, neighbour before, neighbour after, mix) of each turn whose recorded mix is not the wanted one."""
    window = timedelta(seconds=context.window_s)
    params: dict[str, object] = {"ns": namespace, "gen": generation}
    look = None
    sql = _TURNS.format(picked="", chunks="chunks c")
    if around is not None:
        if not around:
            return {}
        moments = sorted(parse_iso(t, "updated_at") for t in around)
        # A turn whose neighbour changed lies within one window of a change; its own neighbours within two.
        look = (to_iso(moments[0] - window), to_iso(moments[-1] + window))
        params.update(low=to_iso(moments[0] - 2 * window), high=to_iso(moments[-1] + 2 * window))
        sql = _TURNS.format(picked=_PICKED, chunks="picked p CROSS JOIN chunks c ON c.rowid = p.rid")
    found = {}
    for (chunk_id, at, mix, kept, conversation, before, before_at, before_kept, after, after_at,
         after_kept) in db.execute(sql, params).fetchall():
        # A turn without its own embedding is embedded by repair first; every turn of a touched conversation is
        # looked at, since its neighbours may be far away in time.
        if not kept or (conversation is None and look is not None and not look[0] <= at <= look[1]):
            continue
        if conversation is None:
            moment = parse_iso(at, "updated_at")
            before = before if before_kept and moment - parse_iso(before_at, "updated_at") <= window else None
            after = after if after_kept and parse_iso(after_at, "updated_at") - moment <= window else None
        else:
            before, after = (before if before_kept else None), (after if after_kept else None)
        wanted = _mix(context.weight, before, after)
        if wanted != mix:
            found[chunk_id] = (at, before, after, wanted)
    return found


def record(tx: Connection, generation: int, remixes: Sequence[Remix]) -> None:
    """Note what these turns' vectors are now made of (inside the caller's transaction)."""
    tx.executemany(
        "UPDATE turn_vectors SET mix = ? WHERE id = ? AND generation = ?",
        [(r.mix, r.chunk_id, generation) for r in remixes],
    )


def sync(
    store: Store, namespace: str, generation: int, context: TurnContext, put: Put,
    around: Sequence[str] | None = None,
) -> int:
    """Re-mix the stale turns (see `stale`): new vectors through `put`, then their mix recorded; how many.

    Run it under the store's write lock, after the write's commit.
    """
    return apply(store, generation, put, stale(store.db, namespace, generation, context, around))


def apply(store: Store, generation: int, put: Put, remixes: Sequence[Remix]) -> int:
    """Write these remixes through `put`, then record their mix; how many. Under the write lock, with nothing
    written since they were found (else find them again: see sync)."""
    if remixes:
        put([r.chunk_id for r in remixes], np.stack([r.vector for r in remixes]))
        with store.transaction() as tx:
            record(tx, generation, remixes)
    return len(remixes)


def sync_all(
    store: Store, namespace: str, generation: int, context: TurnContext, put: Put,
    stop: threading.Event | None = None, batch: int = 256,
) -> int:
    """Re-mix every stale turn of the namespace, `batch` turns (by time) under the write lock at a time, so that
    writes go on in between; stops early when `stop` is set (what is left stays stale, for the next run)."""
    times = sorted(at for at, *_ in _stale(store.db, namespace, generation, context, None).values())
    done = 0
    for start in range(0, len(times), batch):
        if stop is not None and stop.is_set():
            break
        with store.write_lock:  # the batch's stale turns are found again under the lock: writes may have come
            done += sync(store, namespace, generation, context, put, around=times[start:start + batch])
    return done


def _mix(weight: float, before: str | None, after: str | None) -> str | None:
    """What a turn's vector is made of, as recorded: None for its own embedding alone."""
    if weight <= 0 or (before is None and after is None):
        return None
    return f"{weight:g}|{before or ''}|{after or ''}"


def _vector(own: dict[str, np.ndarray], chunk_id: str, before: str | None, after: str | None,
            weight: float) -> np.ndarray:
    vector = own[chunk_id].astype(np.float32, copy=True)
    if weight > 0:
        for neighbour in (before, after):
            if neighbour is not None and neighbour in own:
                vector += weight * own[neighbour]
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector
