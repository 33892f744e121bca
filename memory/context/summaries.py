"""The history's summary: the stored version reused while its messages are unchanged, a new version written by a
compaction, a shorter form for a smaller window, and the facts it states kept to those still in force.

A version states the task's facts its messages stated (their texts under *User constraints*, listed again under the
unrendered section "Facts"); when one is deleted or superseded later, the version is sent without its line, so a
delete reaches the summary as it reaches the constraints block.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from memory.bullet import clean
from memory.context.compaction import digest, instructions, linked, span_texts
from memory.context.memo import Memo, MemoCache
from memory.context.messages import Message
from memory.context.model import Action, SummaryInUse
from memory.context.offload import Offloads
from memory.context.summariser import ModelSummariser
from memory.context.summary import summarise
from memory.facts.records import FactRecord
from memory.task import TaskMemory
from memory.task.model import SummaryVersion
from memory.tokens import TokenCounter

__all__ = ["FACTS", "ROOM", "Compaction", "in_use", "sent_text", "stored", "written_for"]

FACTS = "Facts"  # the unrendered section naming the facts a version states
ROOM = "Room"  # the unrendered section holding the budget a version was written for


def stored(tasks: TaskMemory, namespace: str, task_id: str, messages: Sequence[Message],
           warnings: list[str]) -> SummaryVersion | None:
    """The task's latest version when the messages it covers are the ones sent again, else None (with a warning
    when there was one: an edited history is summarised afresh)."""
    version = tasks.latest_summary(namespace, task_id)
    if version is None:
        return None
    if version.last >= len(messages) or digest(messages, version.last) != version.digest:
        warnings.append(f"the messages up to messages[{min(version.last, len(messages) - 1)}] differ from those "
                        f"summary version {version.version} covers; the history is summarised afresh")
        return None
    return version


def sent_text(version: SummaryVersion, in_force: Collection[str]) -> str:
    """The version's text without the lines of its facts that are no longer in force (`in_force`: the cleaned
    texts of the facts in force)."""
    gone = {f"- {text}" for text in version.sections.get(FACTS, ()) if text not in in_force}
    if not gone:
        return version.text
    return "\n".join(line for line in version.text.split("\n") if line not in gone)


def written_for(version: SummaryVersion) -> int | None:
    """The budget a version was written for (None for a version stored before it was recorded)."""
    room = version.sections.get(ROOM, ())
    return int(room[0]) if room and room[0].isdigit() else None


def in_use(version: SummaryVersion | None, created: bool, tokens: int) -> SummaryInUse | None:
    """The report's account of the summary sent (`tokens`: its text as sent)."""
    if version is None:
        return None
    return SummaryInUse(version.version, version.first, version.last, tokens, version.covered_tokens, created,
                        version.summariser)


class Compaction:
    """Writes a new version: the span's whole text put aside, its facts and rules kept, the summary stored."""

    def __init__(self, tasks: TaskMemory, counter: TokenCounter, summariser: ModelSummariser | None,
                 cost: Callable[[Sequence[Message]], int], overhead: int, limit: int,
                 memos: MemoCache | None = None) -> None:
        self._memos = memos
        self._tasks = tasks
        self._counter = counter
        self._summariser = summariser
        self._cost = cost
        self._overhead = overhead
        self._limit = limit

    def write(self, namespace: str, task_id: str, messages: Sequence[Message], span: Sequence[Message],
              later: Sequence[Message], prior: SummaryVersion | None, budget: int, query: str,
              facts: Sequence[FactRecord], passing: Sequence[Message], offloads: Offloads,
              actions: list[Action], warnings: list[str]) -> SummaryVersion:
        """Summarise `span` (the request's messages as sent) onto `prior` within `budget` tokens and store it as
        the task's next version. `facts` are the task's facts the covered messages stated, `passing` the covered
        user messages short enough to hold rules said in passing."""
        last = span[-1].index if span else prior.last if prior is not None else 0
        first = prior.first if prior is not None else (span[0].index if span else 0)
        ref = digest(messages, last)
        earlier = prior.references[-1] if prior is not None and prior.references else None
        key = None
        if span:
            parts = span_texts(span, earlier, offloaded=offloads.keys, limit=self._limit)
            for number, part in enumerate(parts):
                text = part if key is None or number == 0 else linked(part, key)
                key = offloads.store("note", text, {"compacted": [span[0].index, last]}, f"{ref[:32]}:{number}")
        texts = list(dict.fromkeys(clean(f.text) for f in facts))
        kept_before = [t for t in (prior.sections.get(FACTS, ()) if prior is not None else ()) if t not in texts]
        stated = [*kept_before, *texts]
        memo = Memo(self._memos, namespace)
        made = summarise(span, self._counter, budget, constraints=stated,
                         instructions=instructions(passing, stated, memo), references=[key] if key else [],
                         prior=prior.sections if prior is not None else None, later=later, query=query,
                         first=first, last=last, memo=memo)
        name = "extractive"
        if self._summariser is not None and span:
            extractive = made
            made, said = self._summariser.summarise(span, extractive, budget)
            warnings += said
            if made.text != extractive.text:
                name = self._summariser.name
        sections = {**made.sections, FACTS: tuple(stated), ROOM: (str(max(budget, 0)),)}
        version = self._tasks.add_summary(
            namespace, task_id, first=first, last=last, digest=ref, text=made.text, tokens=made.tokens,
            covered_tokens=self._cost(span) + (prior.covered_tokens if prior is not None else 0),
            sections=sections, dropped=tuple({"text": t, "reason": r} for t, r in made.dropped),
            references=made.sections.get("References", ()), summariser=name)
        before = self._cost(span) + (prior.tokens + self._overhead if prior is not None else 0)
        actions.append(Action("compacted", span[0].index if span else first, before, made.tokens + self._overhead,
                              key, detail=f"summary version {version.version}"))
        return version

    def shortened(self, version: SummaryVersion, text: str, room: int, warnings: list[str]) -> str | None:
        """The version cut to its constraints and newest reference within `room` tokens as a message, for this turn
        only (the stored version stays for the turns after); None when even that does not fit."""
        short = summarise([], self._counter, max(room - self._overhead, 0),
                          constraints=[c for c in version.sections.get("User constraints", ()) if f"- {c}" in text],
                          references=version.references[-1:], first=version.first, last=version.last)
        if short.tokens + self._overhead > room:
            warnings.append(f"this turn leaves {room} tokens for the history, too few for summary version "
                            f"{version.version} even cut to its constraints ({short.tokens} tokens): it was not "
                            "sent this turn, the stored version is unchanged")
            return None
        warnings.append(f"this turn leaves too little room for summary version {version.version} "
                        f"({version.tokens} tokens); its constraints and newest reference were sent ({short.tokens} "
                        "tokens), the stored version is unchanged")
        return short.text
