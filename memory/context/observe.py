"""The user's constraints: read from the conversation into fact memory, and what of them the model must be told.

The user messages are read for facts once each, as the store remembers (FactMemory.observe_conversation): a
restart or another replica does not read them again, a deleted fact does not come back from the message that
stated it, and an older message never supersedes a newer fact. What the conversation says binds its task (scope
`session:<task_id>`); a fact pinned outside it (POST /v1/facts/pin) binds every conversation of the namespace. For
one key, the narrowest scope in force wins: the task's over the project's over the namespace's.

What goes in the constraints block, the first thing after the system prompt: every pinned fact of the namespace or
project that the task does not override, and the task's facts that the model can no longer read where they were
said (their message left out, and not held by the summary in use), when a rule read them or the user pinned them: a
trained model's reading is recalled by relevance, not shown unasked. A fact still in a message the model reads is not
stated twice: the block then stays byte-stable while the conversation grows, and the prompt's cached prefix with it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from memory.bullet import clean
from memory.context.constraints import block, restatement
from memory.context.messages import Message
from memory.facts.conversation import Reading
from memory.facts.memory import FactMemory
from memory.facts.records import FactRecord
from memory.tokens import TokenCounter

__all__ = ["Stated", "block_messages", "capped", "foreseen", "scopes", "shown_facts", "stated"]

_NARROW = ("session:", "project:", "global")  # the first that holds a key wins


@dataclass(frozen=True)
class Stated:
    """The facts in force for a task (one per key, the narrowest scope's) and, per user message index, the facts
    it stated."""

    facts: tuple[FactRecord, ...]
    by_message: Mapping[int, frozenset[tuple[str, str]]]

    def said_at(self) -> dict[tuple[str, str], int]:
        """For each stated fact, the index of the last message stating it."""
        out: dict[tuple[str, str], int] = {}
        for index in sorted(self.by_message):
            out.update(dict.fromkeys(self.by_message[index], index))
        return out


def scopes(task_id: str, filters: Mapping[str, object] | None) -> tuple[str, ...]:
    """The fact scopes a turn reads: the namespace's, this task's, and the project's its filters name."""
    found = ["global", f"session:{task_id}"]
    if filters and isinstance(filters.get("project"), str):
        found.append(f"project:{filters['project']}")
    return tuple(found)


def stated(facts: FactMemory, counter: TokenCounter, namespace: str, task_id: str, readable: Sequence[Message],
           read: bool, longest: int, filters: Mapping[str, object] | None, reading: Reading | None = None) -> Stated:
    """Observe the user messages (when `read`; those over `longest` tokens are pasted material, not rules) and
    answer the facts in force with what each message stated (`reading`: `foreseen`'s, whose clauses it writes)."""
    users = _users(counter, readable, read, longest)
    by_message = facts.observe_conversation(namespace, task_id, users, reading=reading) if users else {}
    return _in_force(facts, namespace, task_id, filters, by_message)


def foreseen(facts: FactMemory, counter: TokenCounter, namespace: str, task_id: str, readable: Sequence[Message],
             read: bool, longest: int, filters: Mapping[str, object] | None) -> tuple[Stated, Reading | None]:
    """What `stated` would answer as the store is now, with nothing written (a message not read before states
    nothing yet), and the reading that spares `stated` the messages' clauses."""
    users = _users(counter, readable, read, longest)
    reading = facts.read_conversation(namespace, task_id, users) if users else None
    by_message = reading.stated if reading is not None else {}
    return _in_force(facts, namespace, task_id, filters, by_message), reading


def _in_force(facts: FactMemory, namespace: str, task_id: str, filters: Mapping[str, object] | None,
              by_message: Mapping[int, frozenset[tuple[str, str]]]) -> Stated:
    """The facts in force in the turn's scopes (the narrowest of each key), with what each message stated."""
    return Stated(_narrowest(facts.list_facts(namespace, scopes=scopes(task_id, filters))), by_message)


def _users(counter: TokenCounter, readable: Sequence[Message], read: bool, longest: int) -> list[tuple[int, str]]:
    """The user messages read for facts, (index, text)."""
    if not read:
        return []
    return [(m.index, m.content) for m in readable
            if m.role == "user" and not m.ephemeral and counter.count(m.content) <= longest]


def _narrowest(facts: Sequence[FactRecord]) -> tuple[FactRecord, ...]:
    chosen: dict[str, FactRecord] = {}
    for fact in sorted(facts, key=lambda f: next(i for i, s in enumerate(_NARROW) if f.scope.startswith(s))):
        chosen.setdefault(fact.key, fact)
    return tuple(sorted(chosen.values(), key=lambda f: (f.scope, f.key, f.id)))


def shown_facts(facts: Stated, visible: Collection[int], summarised: Collection[str]) -> list[FactRecord]:
    """The block's facts: the pinned ones from outside the conversation, and the conversation's own certain ones
    (FactRecord.certain) that no message the model reads states and the summary in use does not hold (`summarised`:
    its facts' texts)."""
    seen = {key for index in visible for key in facts.by_message.get(index, ())}
    out = []
    for fact in facts.facts:
        if not fact.scope.startswith("session:"):
            if fact.pinned:
                out.append(fact)
        elif fact.certain and (fact.scope, fact.key) not in seen and clean(fact.text) not in summarised:
            out.append(fact)
    return out


def block_messages(facts: Sequence[FactRecord], restated: Sequence[FactRecord], restate: bool,
                   ) -> tuple[list[Message], list[Message]]:
    """[the constraints block] and [the restatement of `restated`'s pinned facts] (either may be empty)."""
    text = block(facts)
    again = restatement(restated) if restate else ""
    return ([Message(-1, "system", text)] if text else []), ([Message(-1, "system", again)] if again else [])


def capped(facts: Sequence[FactRecord], said_at: Mapping[tuple[str, str], int], cap: int,
           cost: Callable[[Sequence[FactRecord]], int]) -> tuple[list[FactRecord], list[FactRecord]]:
    """The block's facts within `cap` tokens (`cost(facts)` is what their block costs as a message): every pinned
    one, then the unpinned, the last stated first; and those left out."""
    if cost(facts) <= cap:
        return list(facts), []
    kept = [f for f in facts if f.pinned]
    others = sorted((f for f in facts if not f.pinned),
                    key=lambda f: (said_at.get((f.scope, f.key), -1), f.updated_at, f.id), reverse=True)
    taken: list[FactRecord] = []
    for fact in others:
        if cost([*kept, *taken, fact]) <= cap:
            taken.append(fact)
    return [*kept, *taken], [f for f in others if f not in taken]

