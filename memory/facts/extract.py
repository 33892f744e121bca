"""Turn one user message into facts by matching the rule set sentence by sentence, clause by clause."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory.facts import guards
from memory.facts.model import ExtractedFact, Extraction, Ignored
from memory.facts.normalize import agree, normalize_group, normalize_key, strip_edges
from memory.facts.rules import Markers, Rule, RuleSet
from memory.facts.sentences import (
    Span,
    find_quotes,
    fold_width,
    has_cjk,
    prepare,
    split_clauses,
    split_sentences,
)

__all__ = ["ExtractedFact", "Extraction", "Ignored", "extract", "normalize_key"]

# A constraint is said in a clause, not a page: longer stretches are skipped rather than searched, and an
# "and" chain is split at its first few conjunctions only, so extraction time stays linear in the message.
_MAX_UNIT = 400
_MAX_SPLITS = 8
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_SUFFIX = re.compile(r"_\d+$")


@dataclass
class _Found:
    """Facts and rejections gathered for one stretch of text."""

    facts: list[ExtractedFact] = field(default_factory=list[ExtractedFact])
    ignored: list[Ignored] = field(default_factory=list[Ignored])

    def extend(self, other: _Found) -> None:
        self.facts.extend(other.facts)
        self.ignored.extend(other.ignored)


@dataclass(frozen=True)
class _Message:
    """The original message next to its prepared copy; both share character offsets."""

    original: str
    work: str
    rules: RuleSet

    def text(self, span: Span) -> str:
        return self.original[span.start:span.end].strip()

    def lang(self, span: Span) -> str:
        return "zh" if has_cjk(self.work[span.start:span.end]) else "en"


def extract(text: str, rules: RuleSet) -> Extraction:
    """Extract the user's constraints and preferences from one message."""
    prepared = prepare(text, rules.code_lines)
    found = _Found()
    for span in prepared.code:
        _reject(text, span, guards.CODE, rules, found)
    work = _mask_quotes(text, prepared.text, rules, found)
    message = _Message(original=text, work=work, rules=rules)
    for sentence in split_sentences(work):
        found.extend(_sentence(message, sentence))
    return Extraction(facts=_dedupe(found.facts), ignored=tuple(dict.fromkeys(found.ignored)))


def _mask_quotes(original: str, work: str, rules: RuleSet, found: _Found) -> str:
    # Quoted instructions belong to someone else; a quoted bare term ("eval") is just a name.
    for quote in find_quotes(work):
        inner = work[quote.inner.start:quote.inner.end]
        markers = rules.markers["zh" if has_cjk(inner) else "en"]
        if guards.looks_like_constraint(inner, markers):
            found.ignored.append(Ignored(original[quote.inner.start:quote.inner.end].strip(), guards.QUOTED))
            blank = (quote.outer.start, quote.outer.end)
            work = work[:blank[0]] + " " * (blank[1] - blank[0]) + work[blank[1]:]
        else:
            for pos in (quote.outer.start, quote.inner.end):
                width = quote.inner.start - quote.outer.start if pos == quote.outer.start else quote.outer.end - pos
                work = work[:pos] + " " * width + work[pos + width:]
    return work


def _sentence(message: _Message, span: Span) -> _Found:
    markers = message.rules.markers[message.lang(span)]
    start, end = strip_edges(message.work, span.start, span.end, markers)
    if start >= end:
        return _Found()
    verdict = guards.judge_sentence(message.work[start:span.end], markers)
    if verdict is not None:
        found = _Found()
        _reject(message.original, span, verdict.reason, message.rules, found)
        return found
    whole: list[ExtractedFact] = []
    if guards.judge_clause(message.work[start:end], markers) is None:
        whole = _match_unit(message, span, {})
    by_clause = _clauses(message, Span(start, end))
    return _Found(facts=whole) if _prefer_whole(whole, by_clause.facts) else by_clause


def _prefer_whole(whole: list[ExtractedFact], by_clause: list[ExtractedFact]) -> bool:
    # The whole sentence may refine what its clauses found ("I live in Berlin, Germany", "don't use A, B or C")
    # but not glue unrelated clauses into one object ("don't get me wrong, I love Python"). With no clause
    # fact to anchor it, it may only read across a colon ("Budget: $500"), never across a comma.
    if not whole:
        return False
    if by_clause:
        return len(by_clause) < len(whole) or (
            len(by_clause) == len(whole) and {f.rule for f in by_clause} <= {f.rule for f in whole}
            and all(_list_like(fact.value) for fact in whole))
    return not any("," in fact.value for fact in whole)


def _list_like(value: str) -> bool:
    # "Berlin, Germany" or "jQuery, React, or Vue" continue a value; "it looks so cozy" starts a new thought.
    return all(len(part.strip()) <= 4 if has_cjk(part) else len(part.split()) <= 3 for part in value.split(",")[1:])


def _clauses(message: _Message, span: Span) -> _Found:
    found = _Found()
    carry: guards.Verdict | None = None
    for clause in split_clauses(message.work, span):
        markers = message.rules.markers[message.lang(clause)]
        start, end = strip_edges(message.work, clause.start, clause.end, markers)
        if start >= end:
            continue
        verdict = guards.judge_clause(message.work[start:end], markers)
        if verdict is not None or carry is not None:
            reason = verdict.reason if verdict is not None else carry.reason if carry is not None else ""
            _reject(message.original, clause, reason, message.rules, found)
            carry = verdict if verdict is not None and verdict.carries else None
            continue
        found.facts.extend(_match_unit(message, clause, {}))
    return found


def _match_unit(message: _Message, span: Span, memo: dict[tuple[Span, bool], list[ExtractedFact]],
                half: bool = False) -> list[ExtractedFact]:
    if (span, half) in memo:
        return memo[(span, half)]
    lang = message.lang(span)
    markers = message.rules.markers[lang]
    start, end = strip_edges(message.work, span.start, span.end, markers)
    result: list[ExtractedFact] = []
    if start < end <= start + _MAX_UNIT:
        whole = _best(message, message.work[start:end], message.text(span), lang, half)
        # "and" joins two constraints only when both halves stand on their own; otherwise the whole clause
        # is one constraint ("don't use tabs and spaces"). A lone half is not trusted: its subject may be
        # in the other half ("they brighten our day and always make us smile").
        split = _split(message, Span(start, end), memo, markers)
        result = split or ([whole] if whole is not None else [])
    memo[(span, half)] = result
    return result


def _split(message: _Message, span: Span, memo: dict[tuple[Span, bool], list[ExtractedFact]],
           markers: Markers) -> list[ExtractedFact]:
    if markers.conjunction is None:
        return []
    for count, match in enumerate(markers.conjunction.finditer(message.work, span.start, span.end)):
        if count >= _MAX_SPLITS:
            break
        if match.start() <= span.start or match.end() >= span.end:
            continue
        left = _match_unit(message, Span(span.start, match.start()), memo, half=True)
        right = _match_unit(message, Span(match.end(), span.end), memo, half=True)
        if left and right:
            return left + right
    return []


def _best(message: _Message, core: str, text: str, lang: str, half: bool = False) -> ExtractedFact | None:
    for rule in message.rules.for_lang(lang):
        if half and rule.whole_clause:
            continue
        match = rule.pattern.search(core)
        if match is not None:
            fact = _build(rule, match, message.rules, lang, text)
            if fact is not None:
                return fact
    return None


def _build(rule: Rule, match: re.Match[str], rules: RuleSet, lang: str, text: str) -> ExtractedFact | None:
    values: dict[str, str] = {}
    for name, raw in match.groupdict().items():
        if raw is None or not raw.strip():
            continue
        normalized = normalize_group(name, raw, rules, lang)
        if normalized is None:
            return None
        values[name] = normalized
        values.setdefault(_SUFFIX.sub("", name), normalized)

    def fill(template: str) -> str:
        filled = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), rule.defaults.get(m.group(1), "")), template)
        return " ".join(filled.split())

    subject, value = fill(rule.key), agree(fill(rule.value))
    if not subject or not value:
        return None
    return ExtractedFact(key=normalize_key(rule.kind, subject), value=value, kind=rule.kind, text=text, rule=rule.id)


def _reject(original: str, span: Span, reason: str, rules: RuleSet, found: _Found) -> None:
    text = original[span.start:span.end].strip()
    if guards.looks_like_constraint(fold_width(text), rules.markers["zh" if has_cjk(text) else "en"]):
        found.ignored.append(Ignored(text=text, reason=reason))


def _dedupe(facts: list[ExtractedFact]) -> tuple[ExtractedFact, ...]:
    seen: set[tuple[str, str]] = set()
    kept: list[ExtractedFact] = []
    for fact in facts:
        if (fact.key, fact.value.lower()) not in seen:
            seen.add((fact.key, fact.value.lower()))
            kept.append(fact)
    return tuple(kept)
