"""A task's conversation read for facts: each user message once (the store remembers which, in `facts_observed`),
its facts kept for the task, and never a fact the user deleted nor a statement a later version replaced.

A context call sends the whole history on every turn, so what it re-reads must not change memory: a message read
before answers what it stated then; one read for the first time may not bring back a deleted fact (tombstones)
nor roll a key back to an older version (its text is the text of a superseded version).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memory.clock import Clock, to_iso
from memory.config import LimitsConfig
from memory.database import Connection
from memory.errors import ValidationError
from memory.facts import tombstones
from memory.facts.model import Clause, ExtractedFact
from memory.facts.records import FactChange, FactRecord, FactRecords
from memory.facts.writer import FactWriter, Screen
from memory.store import Store

__all__ = ["DELETED", "ConversationFacts", "Reading", "key_digest"]

DELETED = "deleted by the user"
_GLOBAL = "global"
Stated = dict[int, frozenset[tuple[str, str]]]


def key_digest(scope: str, key: str) -> str:
    """How facts_observed names a fact a message stated: sha256 of its scope and key (never its text)."""
    return hashlib.sha256(f"{scope}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Reading:
    """A task's messages read for facts with nothing written: what those read before stated (`stated`, as
    `observe` answers it) and the clauses of the others (`clauses`, by message digest, for `observe` to write
    without reading them again)."""

    stated: Mapping[int, frozenset[tuple[str, str]]]
    clauses: Mapping[str, Sequence[Clause]]


def _as_seen(given: Sequence[tuple[int, str]], readable: Sequence[tuple[int, str, str]],
             seen: Mapping[str, Sequence[str]]) -> dict[int, set[str]]:
    """For each message given, the key digests an earlier call recorded for it (none for one not read yet)."""
    stated: dict[int, set[str]] = {index: set() for index, _ in given}
    for index, _, digest in readable:
        stated[index].update(seen.get(digest, ()))
    return stated


class ConversationFacts:
    """Reads a task's user messages for facts through the one write path (FactWriter), each message once."""

    def __init__(self, store: Store, writer: FactWriter, read: Callable[[str], Sequence[Clause]], clock: Clock,
                 limits: LimitsConfig) -> None:
        self._store = store
        self._writer = writer
        self._read = read  # observe's own extraction: the rules, then the detector
        self._clock = clock
        self._limits = limits
        self._rows = FactRecords()

    def read(self, namespace: str, task_id: str, messages: Sequence[tuple[int, str]]) -> Reading:
        """The messages read, as `observe` reads them, with nothing written: the messages no earlier call read
        stated nothing yet (their clauses are in the reading)."""
        given, readable = self._readable_of(task_id, messages)
        seen = _observed(self._store.db, namespace, task_id, [digest for _, _, digest in readable])
        clauses = {digest: self._read(clean) for _, clean, digest in readable if digest not in seen}
        return Reading(self._answer(namespace, task_id, _as_seen(given, readable, seen)), clauses)

    def observe(self, namespace: str, task_id: str, messages: Sequence[tuple[int, str]],
                source_prefix: str | None = None, reading: Reading | None = None) -> Stated:
        """Read the messages not read before for this task; for every message given, the (scope, key) of the
        facts in force that it stated. One transaction: a call that fails stores nothing. The clauses of a
        `reading` made before (`read`) are written without being read again."""
        given, readable = self._readable_of(task_id, messages)
        if source_prefix is not None and not isinstance(source_prefix, str):
            raise ValidationError(f"source_prefix must be a string or None, got {source_prefix!r}")
        session = f"session:{task_id}"
        prefix = source_prefix if source_prefix is not None else f"conversation {task_id}"
        known = reading.clauses if reading is not None else {}
        # Read outside the write lock (the detector runs a model): the messages no earlier call read, as of now.
        seen = _observed(self._store.db, namespace, task_id, [digest for _, _, digest in readable])
        clauses = {digest: known[digest] if digest in known else self._read(clean)
                   for _, clean, digest in readable if digest not in seen}
        if not clauses:  # every message was read before (most turns): nothing to write, no write lock to wait for
            return self._answer(namespace, task_id, _as_seen(given, readable, seen))
        stated: dict[int, set[str]] = {index: set() for index, _ in given}
        screen = self._screen(namespace)
        with self._store.transaction() as db:
            now = to_iso(self._clock())
            # Again under the lock: another call may have read some of them meanwhile.
            seen = _observed(db, namespace, task_id, [digest for _, _, digest in readable])
            for index, clean, digest in readable:
                if digest in seen:
                    stated[index].update(seen[digest])
                    continue
                change = self._writer.write(namespace, session, clauses.get(digest) or self._read(clean),
                                            f"{prefix} messages[{index}]", pin=None, task_id=task_id, screen=screen,
                                            reads=(_GLOBAL,))
                keys = sorted({key_digest(r.scope, r.key) for r in self._stated(db, namespace, change)})
                db.execute("INSERT INTO facts_observed (namespace, task_id, message_digest, idx, keys, observed_at) "
                           "VALUES (?, ?, ?, ?, ?, ?)", [namespace, task_id, digest, index, json.dumps(keys), now])
                seen[digest] = keys  # the same message given twice is read once
                stated[index].update(keys)
        return self._answer(namespace, task_id, stated)

    def _readable_of(self, task_id: str, messages: Sequence[tuple[int, str]],
                     ) -> tuple[list[tuple[int, str]], list[tuple[int, str, str]]]:
        """The messages checked, and those read for facts: (index, text without NULs, digest)."""
        given = _check_messages(messages)
        readable = []
        for index, text in given:
            clean = text.replace("\x00", "")  # a NUL means nothing in prose (observe drops them too)
            if self._readable(clean):
                readable.append((index, clean, _message_digest(task_id, index, text)))
        return given, readable

    def _answer(self, namespace: str, task_id: str, stated: dict[int, set[str]]) -> Stated:
        """For each message, the (scope, key) of the facts in force it stated (key digests mapped back)."""
        in_force = self._in_force(self._store.db, namespace, f"session:{task_id}") if any(stated.values()) else {}
        return {index: frozenset(in_force[d] for d in digests if d in in_force) for index, digests in stated.items()}

    def forget_namespace(self, db: Connection, namespace: str) -> int:
        """Inside a namespace delete: its tombstones and observed messages; rows removed."""
        removed = tombstones.clear(db, namespace)
        return removed + db.execute("DELETE FROM facts_observed WHERE namespace = ?", [namespace]).rowcount

    def _readable(self, text: str) -> bool:
        """Whether a message (NULs removed) is read: it has text, within limits.max_text_chars, that SQLite can
        store (no lone surrogate). The others state nothing; they are not an error here."""
        return bool(text.strip()) and len(text) <= self._limits.max_text_chars and _encodes(text)

    def _screen(self, namespace: str) -> Screen:
        """What a conversation's fact meets before it is written in its task's scope (FactWriter's screen)."""

        def screen(db: Connection, where: str, fact: ExtractedFact) -> FactRecord | str | None:
            said = tombstones.fold(fact.text)
            lineages = [self._rows.lineage(db, namespace, scope, fact.key) for scope in dict.fromkeys((where, _GLOBAL))]
            in_force = [next((r for r in lineage if r.current), None) for lineage in lineages]
            # The version the task reads: its own scope's when it has one, else the namespace's (narrowest wins).
            read = next((r for r in in_force if r is not None), None)
            if read is not None and tombstones.fold(read.text) == said:
                return read  # already known
            if tombstones.buried(db, namespace, fact.key, fact.text):
                return DELETED
            for lineage, current in zip(lineages, in_force, strict=True):
                if current is not None and any(tombstones.fold(r.text) == said for r in lineage if not r.current):
                    # A history re-sent holds the user's old statements; a new message with the same value in
                    # other words ("actually, back to 500") is not one and is written as usual.
                    return f"an older statement of {fact.key}: version {current.version} is in force"
            return None

        return screen

    def _stated(self, db: Connection, namespace: str, change: FactChange) -> list[FactRecord]:
        """The facts a message's write stands for: those it stored and those it found known."""
        ids = dict.fromkeys(i for outcome in change.outcomes for i in outcome.facts)
        return [r for r in (self._rows.get(db, namespace, i) for i in ids) if r is not None]

    def _in_force(self, db: Connection, namespace: str, session: str) -> dict[str, tuple[str, str]]:
        """The facts in force the task reads, by key digest."""
        return {key_digest(f.scope, f.key): (f.scope, f.key)
                for f in self._rows.list_current(db, namespace, (_GLOBAL, session))}


def _check_messages(messages: object) -> list[tuple[int, str]]:
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise ValidationError(f"messages must be a list of (index, text) pairs, got {str(messages)[:80]!r}")
    checked = []
    for at, pair in enumerate(messages):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValidationError(f"messages[{at}] must be an (index, text) pair, got {str(pair)[:80]!r}")
        index, text = pair
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ValidationError(f"messages[{at}]'s index must be a whole number from 0 (the message's place in "
                                  f"the conversation), got {index!r}")
        if not isinstance(text, str):
            raise ValidationError(f"messages[{at}]'s text must be a string, got {type(text).__name__}")
        checked.append((index, text))
    return checked


def _observed(db: Connection, namespace: str, task_id: str, digests: list[str]) -> dict[str, list[str]]:
    """The messages among `digests` read before for the task, with the key digests of what each stated."""
    if not digests:
        return {}
    rows = db.execute("SELECT message_digest, keys FROM facts_observed WHERE namespace = ? AND task_id = ? "
                      f"AND message_digest IN ({db.dialect.json_members('?')})",
                      [namespace, task_id, json.dumps(digests)]).fetchall()
    return {digest: json.loads(keys) for digest, keys in rows}


def _message_digest(task_id: str, index: int, text: str) -> str:
    return hashlib.sha256(f"{task_id}\0{index}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: SQLite could not store the fact's text
        return False
    return True
