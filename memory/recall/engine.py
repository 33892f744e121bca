"""recall(namespace, query, budget): gather candidates from the three tiers, then pack them into the budget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from memory.clock import Clock
from memory.config import Config
from memory.errors import ValidationError
from memory.experience import ExperienceMemory, SearchFilters
from memory.facts.memory import FactMemory
from memory.limits import check_length, check_score
from memory.namespaces import check_namespace
from memory.recall.model import RecallResult, is_one_shot
from memory.recall.pack import item_cap, pack
from memory.task import TaskMemory
from memory.text import query_terms
from memory.tokens import TokenCounter

__all__ = ["Recaller", "parse_filters"]

_FILTER_KEYS = ("project", "tags", "source", "kind", "updated_from", "updated_to")
# Experience candidates are cut once their tokens add up to this many budgets (see Shortlist).
_CANDIDATE_BUDGETS = 3


def parse_filters(filters: Mapping[str, Any] | SearchFilters | None) -> SearchFilters:
    """SearchFilters from a mapping of project / tags / source / kind / updated_from / updated_to."""
    if filters is None:
        return SearchFilters()
    if isinstance(filters, SearchFilters):
        return filters
    unknown = sorted(set(filters) - set(_FILTER_KEYS))
    if unknown:
        raise ValidationError(f"unknown filter {', '.join(unknown)}; filters accept {', '.join(_FILTER_KEYS)}")
    values = dict(filters)
    tags = values.get("tags") or ()
    if isinstance(tags, str):
        tags = (tags,)
    if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
        raise ValidationError(f"filters.tags must be a list of strings, got {tags!r}")
    for name in ("project", "source", "kind", "updated_from", "updated_to"):
        if values.get(name) is not None and not isinstance(values[name], str):
            raise ValidationError(f"filters.{name} must be a string, got {values[name]!r}")
    if values.get("kind") not in (None, "document", "memory"):
        raise ValidationError(f"filters.kind must be 'document' or 'memory', got {values['kind']!r}")
    return SearchFilters(
        project=values.get("project"), tags=tuple(tags), source=values.get("source"), kind=values.get("kind"),
        updated_from=values.get("updated_from"), updated_to=values.get("updated_to"),
    )


class Recaller:
    """Asks each tier for candidates and packs the best into the token budget."""

    def __init__(self, facts: FactMemory, tasks: TaskMemory, experience: ExperienceMemory, counter: TokenCounter,
                 config: Config, clock: Clock) -> None:
        self._facts = facts
        self._tasks = tasks
        self._experience = experience
        self._counter = counter
        self._config = config
        self._clock = clock

    def recall(self, namespace: str, query: str, budget: int, *, task_id: str | None = None,
               filters: Mapping[str, Any] | SearchFilters | None = None,
               min_score: float | None = None, for_context: bool = False, consume: bool = True) -> RecallResult:
        """The context block for one agent turn: pinned facts, task items and experience that fit `budget`.

        `for_context` leaves out what context assembly shows elsewhere: the facts (a block of their own) and the
        tool results it offloaded (the history names them by key). With `consume` False the one-shot task items the
        block shows (RecallResult.one_shot) are left in place, for a caller that consumes them in its own transaction
        (TaskMemory.consume_all).
        """
        check_namespace(namespace)
        if not isinstance(query, str):
            raise ValidationError(f"query must be a string, got {type(query).__name__}")
        check_length(query, self._config.limits.max_query_chars, "query", "limits.max_query_chars")
        limit = self._config.limits.max_budget
        if isinstance(budget, bool) or not isinstance(budget, int) or not 0 <= budget <= limit:
            raise ValidationError(f"budget must be a whole number of tokens from 0 to {limit:,}, got {budget!r}")
        check_score(min_score, "min_score")
        threshold = self._config.recall.min_score if min_score is None else min_score
        search_filters = parse_filters(filters)
        scopes = ["global"]
        if search_filters.project:
            scopes.append(f"project:{search_filters.project}")
        if task_id:
            scopes.append(f"session:{task_id}")
        candidates = [] if for_context else list(self._facts.snippets(namespace, query, tuple(scopes)))
        if task_id:
            candidates.extend(self._tasks.snippets(namespace, task_id, query_terms(query), consume=False,
                                                   with_refs=not for_context))
        beyond: Sequence[float] = ()
        if query.strip():
            # Enough experience candidates to fill the budget with short turns, bounded for latency.
            k = max(10, min(100, budget // 20))
            reach = _CANDIDATE_BUDGETS * budget
            # A long snippet counts what packing can show of it, not its whole length (see results.within).
            # The spread over conversations orders; it does not push a result out of the threshold.
            shortlist = self._experience.shortlist(namespace, query, k, filters=search_filters, reach_tokens=reach,
                                                   item_tokens=item_cap(budget, self._config.recall), floor=threshold)
            candidates.extend(shortlist.snippets)
            beyond = shortlist.beyond
        now = self._clock()
        wanted = frozenset(query_terms(query))
        won: set[str] = set()
        while True:  # ends: each pass that loses a race drops at least one candidate
            result = pack(candidates, budget, self._config.recall, self._counter, min_score=threshold, now=now,
                          wanted=wanted)
            # One-shot task items are consumed only once they are in the block; one that did not fit stays for a
            # later turn. One that a concurrent call consumed first is dropped and the block packed again.
            shown = set(result.one_shot) - won
            if shown:
                won |= self._tasks.consume(namespace, sorted(shown)) if consume else shown
            lost = shown - won
            if not lost:
                if not candidates and query.strip() and not for_context \
                        and not _holds(namespace, self._experience, self._facts, self._tasks):
                    result = replace(result, warnings=(*result.warnings, _EMPTY.format(namespace=namespace)))
                return _with_beyond(result, beyond, threshold)
            candidates = [c for c in candidates if not (is_one_shot(c) and c.key in lost)]


# A recall from a namespace that holds nothing: most often one spelt another way than where the memory is.
_EMPTY = ("namespace {namespace!r} holds no facts, tasks or documents; check the name (each namespace is a memory "
          "of its own)")


def _holds(namespace: str, experience: ExperienceMemory, facts: FactMemory, tasks: TaskMemory) -> bool:
    return bool(experience.list_documents(namespace, limit=1) or facts.list_facts(namespace)
                or tasks.counts(lambda name: name == namespace))


def _with_beyond(result: RecallResult, beyond: Sequence[float], threshold: float) -> RecallResult:
    """`result` with the candidates never packed (their scores) counted in `omitted`, under the reason that applies."""
    if not beyond:
        return result
    low = sum(1 for score in beyond if score < threshold)
    omitted = replace(result.omitted, below_threshold=result.omitted.below_threshold + low,
                      over_budget=result.omitted.over_budget + len(beyond) - low)
    return replace(result, omitted=omitted)
