"""FactMemory: extract facts from messages by rules, store them as versions, pin, list, forget, score."""

from __future__ import annotations

import builtins
import hashlib
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from memory.clock import Clock, to_iso
from memory.config import FactsConfig, LimitsConfig
from memory.errors import NotFoundError, ValidationError
from memory.facts import guards
from memory.facts.assisted import read_again
from memory.facts.detector import ClauseDetector
from memory.facts.extract import extract
from memory.facts.model import Clause, ExtractedFact
from memory.facts.records import FactChange, FactRecord, FactRecords, Outcome
from memory.facts.rules import RuleSet
from memory.limits import check_length
from memory.snippet import Snippet
from memory.store import Store
from memory.text import remembered, terms
from memory.tokens import TokenCounter

__all__ = ["FactMemory", "check_scope"]

_SCOPE = re.compile(r"global|(project|session):[A-Za-z0-9._:@\-]{1,128}")
_KEY = re.compile(r"[^\s].{0,199}", re.S)
_BUDGET = "limit:budget"
_THIS_TURN = ("for this request only: returned in this_turn and not stored (send task_id to keep it for the task, "
              "or say 'from now on' to make it a standing rule)")


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
                 detector: ClauseDetector | None = None) -> None:
        self._store = store
        self._detector = detector
        self._limits = limits
        self._rules = rules
        self._counter = counter
        self._config = config
        self._clock = clock
        self._rows = FactRecords()

    def observe(self, namespace: str, text: str, *, scope: str = "global", source: str | None = None,
                task_id: str | None = None) -> FactChange:
        """Extract facts from a user message by rules and store them; a fact on a known key supersedes it.

        Every sentence of the message gets one outcome: stored, superseded (a new version of a known key),
        request (a constraint for this request only) or ignored with the reason. A request-only constraint is
        returned in `this_turn`; it is stored only for the task (`session:<task_id>`) when `task_id` is given,
        or in `scope` when that is narrower than global, never as a standing global fact.
        """
        return self._observe(namespace, text, scope, source, task_id, keep=True)

    def preview(self, namespace: str, text: str, *, scope: str = "global", source: str | None = None,
                task_id: str | None = None) -> FactChange:
        """What observe would answer for this message now, with nothing stored (the web inspector's dry run).

        observe's own extraction and write run in a transaction that is rolled back instead of committed, so the
        outcomes (stored, superseded, already known, request, ignored) are the ones observe would give.
        """
        return self._observe(namespace, text, scope, source, task_id, keep=False)

    def _observe(self, namespace: str, text: str, scope: str, source: str | None, task_id: str | None, *,
                 keep: bool) -> FactChange:
        check_length(text, self._limits.max_text_chars, "text", "limits.max_text_chars")
        text = _check_text(text)
        check_scope(scope)
        if task_id is not None and (not isinstance(task_id, str) or not _SCOPE.fullmatch(f"session:{task_id}")):
            raise ValidationError(f"task_id must be 1-128 characters of letters, digits, '.', '_', ':', '@' or '-', "
                                  f"got {str(task_id)[:80]!r}")
        # A message of punctuation alone has no sentence: it is one ignored outcome of its own.
        found = read_again(extract(text, self._rules), self._detector, self._rules)
        clauses = found.clauses or (Clause(text.strip(), (), guards.NO_FACT),)
        return self._write(namespace, scope, clauses, source, pin=None, task_id=task_id, keep=keep)

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
        return self._write(namespace, scope, clauses, source, pin=True)

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

    def list(self, namespace: str, *, scopes: tuple[str, ...] | None = None,
             pinned: bool | None = None) -> list[FactRecord]:
        """Facts in force."""
        return self._rows.list_current(self._store.db, namespace, scopes, pinned)

    def history(self, namespace: str, fact_id: str) -> builtins.list[FactRecord]:
        """Every version of the fact's key, oldest first."""
        db = self._store.db
        found = self._rows.get(db, namespace, fact_id)
        if found is None:
            raise NotFoundError(f"fact {fact_id!r} does not exist in namespace {namespace!r}")
        return self._rows.lineage(db, namespace, found.scope, found.key)

    def delete(self, namespace: str, fact_id: str) -> int:
        """Hard-delete the fact and every version of its key; returns rows removed."""
        with self._store.transaction() as db:
            found = self._rows.get(db, namespace, fact_id)
            if found is None:
                raise NotFoundError(f"fact {fact_id!r} does not exist in namespace {namespace!r}")
            self._store.erase_later(db)  # the WAL still holds the deleted versions (memory.erase)
            removed = self._rows.delete_lineage(db, namespace, found.scope, found.key)
        remembered.forget_all()  # sentences of it cached above this tier
        return removed

    def delete_namespace(self, namespace: str) -> int:
        """Hard-delete every fact of a namespace."""
        with self._store.transaction() as db:
            removed = self._rows.delete_namespace(db, namespace)
            if removed:
                self._store.erase_later(db)
        remembered.forget_all()
        return removed

    def snippets(self, namespace: str, query: str, scopes: tuple[str, ...]) -> builtins.list[Snippet]:
        """Recall candidates: pinned facts score 1.0; others by how much of them the query mentions."""
        wanted = set(terms(query))
        found = []
        for fact in self.list(namespace, scopes=scopes):
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

    def _corrects(self, text: str) -> bool:
        """Whether text corrects what was said before it (the rule files' correction markers, either language)."""
        return any(m.correction is not None and m.correction.search(text) for m in self._rules.markers.values())

    def _latest_budget(self, db: Any, namespace: str, scope: str) -> str | None:
        """The key of the budget in force stated last ("budget", or "budget for <thing>"): what a correction
        that names no thing ("actually, make that $1,500", "算了，改成800元") corrects."""
        row = db.execute(
            "SELECT key FROM facts WHERE namespace = ? AND scope = ? AND superseded_at IS NULL "
            "AND (key = ? OR key LIKE ?) ORDER BY rowid DESC LIMIT 1",  # rowid: the order written
            [namespace, scope, _BUDGET, _BUDGET + " for%"]).fetchone()
        return str(row[0]) if row else None

    def _write(self, namespace: str, scope: str, clauses: Sequence[Clause], source: str | None,
               pin: bool | None, task_id: str | None = None, keep: bool = True) -> FactChange:
        """Store the clauses' facts and say what became of each; with `keep` False, roll it all back."""
        stored: list[FactRecord] = []
        superseded: list[FactRecord] = []
        outcomes: list[Outcome] = []
        this_turn: list[ExtractedFact] = []
        with self._store.transaction(commit=keep) as db:
            now = to_iso(self._clock())
            said_before = ""
            for clause in clauses:
                correcting = self._corrects(said_before + " " + clause.text)
                said_before = clause.text
                if not clause.facts:
                    outcomes.append(Outcome(clause.text, "ignored", clause.reason or guards.NO_FACT))
                    continue
                ids: list[str] = []
                replaced: list[str] = []
                known: list[FactRecord] = []
                kept = 0
                for fact in clause.facts:
                    where = scope
                    if pin is None and fact.lifetime == "request":
                        this_turn.append(fact)
                        if scope == "global" and task_id is None:
                            continue  # for this request only: answered in this_turn, never a global standing rule
                        where = f"session:{task_id}" if scope == "global" else scope
                    kept += 1
                    if correcting and fact.key == _BUDGET:
                        fact = replace(fact, key=self._latest_budget(db, namespace, where) or fact.key)
                    current = self._rows.current(db, namespace, where, fact.key)
                    # A fact the model-assisted detector found is recalled when relevant, not pinned unasked.
                    pinned = pin if pin is not None else (
                        current.pinned if current else fact.kind in self._config.auto_pin_kinds
                        and fact.confidence >= 1.0
                        and not fact.key.startswith(_BUDGET + " for"))  # about one thing: recalled, not standing
                    if current and (current.value, current.kind, current.pinned) == (fact.value, fact.kind, pinned):
                        ids.append(current.id)
                        known.append(current)
                        continue
                    record = FactRecord(
                        id=FactRecords.new_id(), namespace=namespace, scope=where, key=fact.key, value=fact.value,
                        kind=fact.kind, text=fact.text, pinned=pinned,
                        version=current.version + 1 if current else 1,
                        created_at=now, updated_at=now, source=source, rule=fact.rule, confidence=fact.confidence,
                    )
                    self._rows.insert(db, record)
                    if current:
                        superseded.append(self._rows.supersede(db, current, record.id, now))
                        replaced.append(current.id)
                    stored.append(record)
                    ids.append(record.id)
                if not kept:
                    outcomes.append(Outcome(clause.text, "request", _THIS_TURN))
                    continue
                outcomes.append(_outcome(clause.text, ids, replaced, known))
        ignored = tuple((o.text, o.reason or "") for o in outcomes if o.outcome == "ignored")
        return FactChange(tuple(stored), tuple(superseded), ignored, tuple(outcomes), tuple(this_turn))


def _outcome(text: str, ids: builtins.list[str], replaced: builtins.list[str],
             known: builtins.list[FactRecord]) -> Outcome:
    # A clause whose facts were all known already stored nothing; one new fact is enough to count as stored.
    if len(known) == len(ids):
        said = ", ".join(f"{r.id} (version {r.version})" for r in known)
        return Outcome(text, "ignored", f"already known: same value as {said}", tuple(ids))
    return Outcome(text, "superseded" if replaced else "stored", None, tuple(ids), tuple(replaced))


def _digest(text: str) -> str:
    return hashlib.sha256(" ".join(text.lower().split()).encode("utf-8")).hexdigest()[:12]


def _check_text(text: object, field: str = "text") -> str:
    """The message without NUL characters (they mean nothing in prose and must not reach a rendered block)."""
    if isinstance(text, str):
        text = text.replace("\x00", "")
    if not isinstance(text, str) or not text.strip():
        raise ValidationError(f"{field} must be a non-empty string, got {str(text)[:80]!r}")
    return text
