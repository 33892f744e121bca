"""FactMemory: extract facts from messages by rules, store them as versions, pin, list, forget, score; read a
task's conversation once per message (memory.facts.conversation)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

from memory.caches import Caches
from memory.clock import Clock, to_iso
from memory.config import FactsConfig, LimitsConfig
from memory.errors import NotFoundError, ValidationError
from memory.facts import guards, tombstones
from memory.facts.assisted import ModelReaders, read_again
from memory.facts.conversation import ConversationFacts, Reading
from memory.facts.extract import extract
from memory.facts.model import Clause, ExtractedFact
from memory.facts.records import FactChange, FactRecord, FactRecords
from memory.facts.rules import RuleSet
from memory.facts.writer import FactWriter
from memory.limits import check_length
from memory.snippet import Snippet
from memory.store import Store
from memory.text import terms
from memory.tokens import TokenCounter

__all__ = ["FactMemory", "check_scope"]

_SCOPE = re.compile(r"global|(project|session):[A-Za-z0-9._:@\-]{1,128}")
_KEY = re.compile(r"[^\s].{0,199}", re.S)


def check_scope(scope: str) -> str:
    """`global`, `project:<name>` or `session:<id>`, else ValidationError."""
    if not isinstance(scope, str) or not _SCOPE.fullmatch(scope):
        raise ValidationError(
            f"scope must be 'global', 'project:<name>' or 'session:<id>', got {str(scope)[:80]!r}"
        )
    return scope


class FactMemory:
    """The fact tier over the store's `facts` table."""

    def __init__(self, store: Store, rules: RuleSet, counter: TokenCounter, config: FactsConfig,
                 clock: Clock, *, limits: LimitsConfig = LimitsConfig(),
                 readers: ModelReaders | None = None, caches: Caches | None = None) -> None:
        self._caches = caches or Caches()  # what layers above keep of this tier's records (memory.caches)
        self._store = store
        self._readers = readers
        self._limits = limits
        self._rules = rules
        self._counter = counter
        self._config = config
        self._clock = clock
        self._rows = FactRecords()
        self._writer = FactWriter(store, rules, config, clock)
        self._conversations = ConversationFacts(store, self._writer, self._read, clock, limits)

    def observe(self, namespace: str, text: str, *, scope: str = "global", source: str | None = None,
                task_id: str | None = None, auto_pin: bool = True) -> FactChange:
        """Extract facts from a user message by rules and store them; a fact on a known key supersedes it.

        Every sentence of the message gets one outcome: stored, superseded (a new version of a known key),
        request (a constraint for this request only) or ignored with the reason. A request-only constraint is
        returned in `this_turn`; it is stored only for the task (`session:<task_id>`) when `task_id` is given,
        or in `scope` when that is narrower than global, never as a standing global fact. With `auto_pin` False
        no fact is pinned for its kind: every one is recalled when relevant (a message from a recorded history).
        """
        return self._observe(namespace, text, scope, source, task_id, keep=True, auto_pin=auto_pin)

    def preview(self, namespace: str, text: str, *, scope: str = "global", source: str | None = None,
                task_id: str | None = None) -> FactChange:
        """What observe would answer for this message now, with nothing stored (the web inspector's dry run).

        observe's own extraction and write run in a transaction that is rolled back instead of committed, so the
        outcomes (stored, superseded, already known, request, ignored) are the ones observe would give.
        """
        return self._observe(namespace, text, scope, source, task_id, keep=False)

    def _observe(self, namespace: str, text: str, scope: str, source: str | None, task_id: str | None, *,
                 keep: bool, auto_pin: bool = True) -> FactChange:
        check_length(text, self._limits.max_text_chars, "text", "limits.max_text_chars")
        text = _check_text(text)
        check_scope(scope)
        if task_id is not None:
            _check_task_id(task_id)
        return self._writer.write(namespace, scope, self._read(text), source, pin=None, task_id=task_id, keep=keep,
                                  auto_pin=auto_pin)

    def observe_conversation(self, namespace: str, task_id: str, messages: Sequence[tuple[int, str]], *,
                             source_prefix: str | None = None,
                             reading: Reading | None = None) -> dict[int, frozenset[tuple[str, str]]]:
        """Read a task's user messages, (index in the conversation, text) in order, for facts; for each message
        given, the (scope, key) of the facts in force it stated.

        A message read before for this task (across restarts) is not read again. Facts are kept for the task
        (scope `session:<task_id>`, source `conversation <task_id> messages[<index>]`, or `source_prefix` in place
        of `conversation <task_id>`); a clause stating a fact the user deleted, or one already in force (in the
        task's scope or the namespace's), or the words of a superseded version, stores nothing. A message with no
        text (NULs, blanks) or over limits.max_text_chars is not read. One transaction for all the messages.
        `reading` (read_conversation's, made before) spares reading the messages' clauses again.
        """
        return self._conversations.observe(namespace, _check_task_id(task_id), messages, source_prefix, reading)

    def read_conversation(self, namespace: str, task_id: str, messages: Sequence[tuple[int, str]]) -> Reading:
        """What observe_conversation would read, with nothing written: what the messages read before stated, and
        the clauses of the others (handed back to observe_conversation, which writes them under the write lock).
        A caller reads ahead of its transaction so that the detector's model runs outside the lock."""
        return self._conversations.read(namespace, _check_task_id(task_id), messages)

    def _read(self, text: str) -> tuple[Clause, ...]:
        """The message's clauses by the rules, then the trained readers (observe and conversations alike)."""
        found = read_again(extract(text, self._rules), self._readers, self._rules)
        # A message of punctuation alone has no sentence: it is one ignored outcome of its own.
        return found.clauses or (Clause(text.strip(), (), guards.NO_FACT),)

    def pin(self, namespace: str, *, text: str | None = None, key: str | None = None, value: str | None = None,
            scope: str = "global", source: str | None = None) -> FactChange:
        """Pin a constraint: from free text (rules first, the text itself otherwise) or an explicit key/value."""
        for name, field in (("text", text), ("value", value)):
            check_length(field, self._limits.max_text_chars, name, "limits.max_text_chars")
        check_scope(scope)
        if text is not None and (key is not None or value is not None):
            raise ValidationError("pin either text, or key and value, not both")
        if text is not None:
            text = _check_text(text)
            extraction = extract(text, self._rules)
            # Text the rules find nothing in is pinned as it stands, as one note.
            clauses = extraction.clauses if extraction.facts else (Clause(text, (ExtractedFact(
                key="note:" + _digest(text), value=text, kind="note", text=text, rule="pinned-text"),)),)
        elif key is not None and value is not None:
            if not _KEY.fullmatch(key.strip() or " "):
                raise ValidationError(f"key must be 1-200 characters, got {key[:80]!r}")
            value = _check_text(value, "value")
            fact = ExtractedFact(key=key.strip().lower(), value=value, kind="constraint",
                                 text=f"{key.strip()}: {value}", rule="pinned-key")
            clauses = (Clause(fact.text, (fact,)),)
        else:
            raise ValidationError("pin needs 'text', or both 'key' and 'value'")
        return self._writer.write(namespace, scope, clauses, source, pin=True)

    def set_pinned(self, namespace: str, fact_id: str, *, pinned: bool) -> FactRecord:
        """Pin or unpin the fact in force for `fact_id`'s key, as a new version."""
        with self._store.transaction() as db:
            found = self._rows.get(db, namespace, fact_id)
            if found is None:
                raise NotFoundError(f"fact {fact_id!r} does not exist in namespace {namespace!r}")
            current = self._rows.current(db, namespace, found.scope, found.key)
            assert current is not None  # a lineage always keeps its current version
            if current.pinned == pinned:
                return current
            now = to_iso(self._clock())
            record = FactRecord(**{**current.__dict__, "id": FactRecords.new_id(), "pinned": pinned,
                                   "version": current.version + 1, "created_at": now, "updated_at": now})
            self._rows.insert(db, record)
            self._rows.supersede(db, current, record.id, now)
            return record

    def list_facts(self, namespace: str, *, scopes: tuple[str, ...] | None = None,
             pinned: bool | None = None) -> list[FactRecord]:
        """Facts in force."""
        return self._rows.list_current(self._store.db, namespace, scopes, pinned)

    def history(self, namespace: str, fact_id: str) -> list[FactRecord]:
        """Every version of the fact's key, oldest first."""
        db = self._store.db
        found = self._rows.get(db, namespace, fact_id)
        if found is None:
            raise NotFoundError(f"fact {fact_id!r} does not exist in namespace {namespace!r}")
        return self._rows.lineage(db, namespace, found.scope, found.key)

    def delete(self, namespace: str, fact_id: str) -> int:
        """Hard-delete the fact and every version of its key; returns rows removed.

        Each version leaves a tombstone (a digest of its key and text, no text): re-reading the conversation that
        stated it does not bring it back (observe_conversation); an explicit observe does.
        """
        with self._store.transaction() as db:
            found = self._rows.get(db, namespace, fact_id)
            if found is None:
                raise NotFoundError(f"fact {fact_id!r} does not exist in namespace {namespace!r}")
            lineage = self._rows.lineage(db, namespace, found.scope, found.key)
            tombstones.bury(db, namespace, lineage, to_iso(self._clock()))
            self._store.erase_later(db)  # the WAL still holds the deleted versions (memory.erase)
            removed = self._rows.delete_lineage(db, namespace, found.scope, found.key)
        self._caches.forget(namespace)  # sentences of it kept above this tier
        return removed

    def counts(self, within: Callable[[str], bool] | None = None) -> dict[str, tuple[int, int]]:
        """(facts in force, pinned among them) per namespace that has one, of those `within` accepts."""
        found = self._rows.counts(self._store.db)
        return {ns: n for ns, n in found.items() if within is None or within(ns)}

    def delete_namespace(self, namespace: str) -> int:
        """Hard-delete every fact of a namespace, with its tombstones and which messages were read; facts removed."""
        with self._store.transaction() as db:
            removed = self._rows.delete_namespace(db, namespace)
            changed = removed + self._conversations.forget_namespace(db, namespace)
            if changed:
                self._store.erase_later(db)
        if changed:  # nothing deleted, nothing to forget
            self._caches.forget(namespace)
        return removed

    def snippets(self, namespace: str, query: str, scopes: tuple[str, ...]) -> list[Snippet]:
        """Recall candidates: pinned facts score 1.0; others by how much of them the query mentions."""
        wanted = set(terms(query))
        found = []
        for fact in self.list_facts(namespace, scopes=scopes):
            if fact.pinned:
                score, coverage = 1.0, None
            else:
                own = set(terms(f"{fact.key.split(':', 1)[-1]} {fact.value} {fact.text}"))
                coverage = len(own & wanted) / len(own) if own else 0.0
                # A mentioned fact is worth showing; an unmentioned one stays below the default threshold.
                score = round(min(1.0, 0.3 + 0.7 * coverage) if coverage else 0.1, 4)
            text = fact.text
            found.append(Snippet(
                tier="fact", id=fact.id, text=text, score=score, tokens=self._counter.count(text),
                source=fact.source, updated_at=fact.updated_at, pinned=fact.pinned, key=fact.key,
                metadata={"kind": fact.kind, "value": fact.value, "scope": fact.scope, "version": fact.version},
                why={"fact": {"pinned": fact.pinned, "coverage": coverage}},
            ))
        return found


def _digest(text: str) -> str:
    return hashlib.sha256(" ".join(text.lower().split()).encode("utf-8")).hexdigest()[:12]


def _check_task_id(task_id: object) -> str:
    """A task id as a session scope accepts it."""
    if not isinstance(task_id, str) or not _SCOPE.fullmatch(f"session:{task_id}"):
        raise ValidationError(f"task_id must be 1-128 characters of letters, digits, '.', '_', ':', '@' or '-', "
                              f"got {str(task_id)[:80]!r}")
    return task_id


def _check_text(text: object, field: str = "text") -> str:
    """The message without NUL characters (they mean nothing in prose and must not reach a rendered block)."""
    if isinstance(text, str):
        text = text.replace("\x00", "")
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"{field} must be a non-empty string, got {str(text)[:80]!r}")
    return text
