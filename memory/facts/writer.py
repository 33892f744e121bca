"""The one write path of extracted facts: each clause's facts stored as new versions (or found known), and what
became of every clause. Explicit observes, pins and a conversation's messages all go through it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from memory.clock import Clock, to_iso
from memory.config import FactsConfig
from memory.database import Connection
from memory.facts import guards
from memory.facts.model import Clause, ExtractedFact
from memory.facts.records import FactChange, FactRecord, FactRecords, Outcome
from memory.facts.rules import RuleSet
from memory.store import Store

__all__ = ["FactWriter", "Screen"]

_BUDGET = "limit:budget"
_THIS_TURN = ("for this request only: returned in this_turn and not stored (send task_id to keep it for the task, "
              "or say 'from now on' to make it a standing rule)")

Screen = Callable[[Connection, str, ExtractedFact], FactRecord | str | None]
"""Asked about each fact before it is written in scope `where` (the second argument): None lets it be written, a
FactRecord is the version in force that already says it (nothing is written), a string why it is ignored."""


class FactWriter:
    """Writes clauses' facts to the `facts` table, one transaction per call (a savepoint inside a caller's)."""

    def __init__(self, store: Store, rules: RuleSet, config: FactsConfig, clock: Clock) -> None:
        self._store = store
        self._rules = rules
        self._config = config
        self._clock = clock
        self._rows = FactRecords()

    def write(self, namespace: str, scope: str, clauses: Sequence[Clause], source: str | None,
              pin: bool | None, task_id: str | None = None, keep: bool = True, *, screen: Screen | None = None,
              reads: Sequence[str] = (), auto_pin: bool = True) -> FactChange:
        """Store the clauses' facts and say what became of each; with `keep` False, roll it all back.

        With `pin` None a new fact is pinned when its kind is one of `auto_pin_kinds`, unless `auto_pin` is False.

        `screen` may stop a fact before it is written; `reads` are the other scopes the facts are read with, where
        a correction that names no thing ("make that $1,500") may find the budget it corrects.
        """
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
                screened: list[str] = []
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
                        fact = replace(fact, key=self._latest_budget(db, namespace, (where, *reads)) or fact.key)
                    if correcting:
                        fact = fact.naming_its_subject()
                    verdict = screen(db, where, fact) if screen is not None else None
                    if isinstance(verdict, str):
                        screened.append(verdict)
                        continue
                    if verdict is not None:
                        ids.append(verdict.id)
                        known.append(verdict)
                        continue
                    current = self._rows.current(db, namespace, where, fact.key)
                    # A fact the model-assisted detector found is recalled when relevant, not pinned unasked.
                    pinned = pin if pin is not None else (
                        current.pinned if current else auto_pin and fact.kind in self._config.auto_pin_kinds
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
                elif not ids:
                    outcomes.append(Outcome(clause.text, "ignored", "; ".join(dict.fromkeys(screened))))
                else:
                    outcomes.append(_outcome(clause.text, ids, replaced, known))
        ignored = tuple((o.text, o.reason or "") for o in outcomes if o.outcome == "ignored")
        return FactChange(tuple(stored), tuple(superseded), ignored, tuple(outcomes), tuple(this_turn))

    def _corrects(self, text: str) -> bool:
        """Whether text corrects what was said before it (the rule files' correction markers, either language)."""
        return any(m.correction is not None and m.correction.search(text) for m in self._rules.markers.values())

    @staticmethod
    def _latest_budget(db: Connection, namespace: str, scopes: Sequence[str]) -> str | None:
        """The key of the budget in force stated last ("budget", or "budget for <thing>") in `scopes`: what a
        correction that names no thing ("actually, make that $1,500", "算了，改成800元") corrects."""
        marks = ", ".join("?" for _ in scopes)
        row = db.execute(
            f"SELECT key FROM facts WHERE namespace = ? AND scope IN ({marks}) AND superseded_at IS NULL "
            "AND (key = ? OR key LIKE ?) ORDER BY rowid DESC LIMIT 1",  # rowid: the order written
            [namespace, *scopes, _BUDGET, _BUDGET + " for%"]).fetchone()
        return str(row[0]) if row else None


def _outcome(text: str, ids: list[str], replaced: list[str],
             known: list[FactRecord]) -> Outcome:
    # A clause whose facts were all known already stored nothing; one new fact is enough to count as stored.
    if len(known) == len(ids):
        said = ", ".join(f"{r.id} (version {r.version})" for r in known)
        return Outcome(text, "ignored", f"already known: same value as {said}", tuple(ids))
    return Outcome(text, "superseded" if replaced else "stored", None, tuple(ids), tuple(replaced))
