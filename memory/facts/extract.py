"""Turn one user message into facts by matching the rule set sentence by sentence, clause by clause.

Every sentence ends in a Clause: its facts, or the reason it has none. A sentence is cut into clauses where a
conjunction opens a clause with its own subject (markers new_clause), then at commas; one that reads best whole
stays one Clause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from memory.facts import guards
from memory.facts.model import Clause, ExtractedFact, Extraction, Ignored, Lifetime
from memory.facts.normalize import agree, normalize_group, normalize_key, strip_edges
from memory.facts.qualify import budget_subject
from memory.facts.rules import INSTRUCTION_KINDS, Markers, Rule, RuleSet
from memory.facts.sentences import (
    Span,
    find_quotes,
    has_cjk,
    prepare,
    split_at,
    split_clauses,
    split_sentences,
)

__all__ = ["Clause", "ExtractedFact", "Extraction", "Ignored", "extract", "normalize_key"]

# A constraint is said in a clause, not a page: longer stretches are skipped rather than searched, and an
# "and" chain is split at its first few conjunctions only, so extraction time stays linear in the message.
_MAX_UNIT = 400
_MAX_SPLITS = 8
# The rule patterns read a run of spaces, separators or digits again from every place in it where they may start,
# so a long run costs its square; no constraint is said with more than a few of them in a row, and a longer run is
# read as its first ones. A sentence (a stretch without a sentence break) longer than _MAX_SENTENCE is a page, not
# an instruction: it is accounted for, not read.
_LONG_RUN = re.compile(r"[\s,;:\-]{17,}|\d{33,}|\.{17,}")
_RUN_KEPT = {True: 32, False: 16}
_MAX_SENTENCE = 2000
# A message is read up to here (a constraint is not said on page ten); what follows is accounted for, not read.
_MAX_MESSAGE = 20_000
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_SUFFIX = re.compile(r"_\d+$")
_WORD = re.compile(r"[^\W_]")
_AFTER_IF_YOU = re.compile(r"\bif\s+you(?:\s+(?:could|would|can|can't|couldn't))?(?:\s+(?:please|always|just))?[\s,]*$",
                           re.IGNORECASE)
_AFTER_MIND = re.compile(r"\bwould you mind[\s,]*$", re.IGNORECASE)
_NOT = re.compile(r"not\s+", re.IGNORECASE)
_HEAD = re.compile(r"did not|didn'?t|\w+")
_SUBJECT = re.compile(r"(?:我|你|您|他|她|咱)|(?:i|we|you|he|she|they|it)\b", re.IGNORECASE)
_NOUN_ALONE = re.compile(r"(?:s|ing)$|[^\x00-\x7f]", re.IGNORECASE)
# A prohibition that compares without its second term, and the forms that name the pinned version instead.
_COMPARES_EN = re.compile(r"(?:any(?:thing)?\s+|the\s+)?(?:newer|later|more recent|higher|above|upcoming)\b",
                          re.IGNORECASE)
_THAN_THAT = re.compile(r"\bthan\s+(?:that|it|this|ours|what we have|what we use)\b", re.IGNORECASE)
_COMPARES_ZH = re.compile(r"(?:更新|更高|更新版本|更高版本|新版本|新版|高版本|以后版本|之后版本)的?")
_BARE_VERSION_ZH = re.compile(r"\d+(?:\.\d+)*\s*(?:才有|以上|及以上|之后|以后|版本)")
_ITEMS_ZH = re.compile(r"\s*(?:、|和|及|以及|与|跟|或者|或|\band\b|\bor\b)\s*")
# What frames a listed item without being part of it: "比如耳环", "如《时间简史》", "《人类简史》等", "such as X".
_ITEM_EDGES = re.compile(r"^(?:比如说?|例如|譬如|像是|像|如|尤其是|特别是|是|such as|like|e\.g\.?|including)\s*"
                         r"|\s*(?:等等|等|什么的|之类的?|etc\.?|and so on)$", re.IGNORECASE)
# Where an `each` rule's list splits into items: commas, "and" / "or", 、和 及 与 或.
_ITEMS = re.compile(r"\s*(?:,\s*(?:and|or)\s+|,|;|\band\b|\bor\b|\bnor\b|、|，|和|及|以及|与|跟|或者|或)\s*")


@dataclass
class _Unit:
    """One sentence or clause being read: where it is in the message, its facts, or why it has none."""

    span: Span
    facts: list[ExtractedFact] = field(default_factory=list[ExtractedFact])
    reason: str | None = None
    lifetime: Lifetime = "standing"


@dataclass(frozen=True)
class _Message:
    """The original message next to its prepared copy; both share character offsets."""

    original: str
    work: str
    rules: RuleSet
    plain: str = ""
    """`work` with quoted names blanked out too: what the guards read, so "《听妈妈的话》" sets up no "if"."""
    for_this_request: bool = False
    """Whether the message says its rules are for this request ("for this task: no tables", "这次…")."""

    def guarded(self, start: int, end: int) -> str:
        return (self.plain or self.work)[start:end]

    def text(self, span: Span) -> str:
        return self.original[span.start:span.end].strip()

    def lang(self, span: Span) -> str:
        return "zh" if has_cjk(self.work[span.start:span.end]) else "en"


def extract(text: str, rules: RuleSet) -> Extraction:
    """Extract the user's constraints and preferences from one message, accounting for every sentence."""
    text = _LONG_RUN.sub(lambda m: m.group()[:_RUN_KEPT[m.group()[0].isdigit()]], text)
    if len(text) > _MAX_MESSAGE:
        cut = text.rfind("\n", 0, _MAX_MESSAGE) + 1 or _MAX_MESSAGE
        read = extract(text[:cut], rules)
        rest = " ".join(text[cut:cut + 80].split())
        unread = Ignored(f"{rest}… ({len(text) - cut:,} characters)", f"beyond the first {_MAX_MESSAGE:,} characters "
                         "of the message, which are all that is read for constraints")
        return replace(read, ignored=(*read.ignored, unread), clauses=(*read.clauses, Clause(
            unread.text, (), unread.reason)))
    prepared = prepare(text, rules.code_lines)
    masked = [_Unit(span, reason=guards.CODE) for span in prepared.code]
    work, plain = _mask_quotes(prepared.text, rules, masked)
    said = any(m.this_request is not None and m.this_request.search(work) for m in rules.markers.values())
    message = _Message(original=text, work=work, rules=rules, plain=plain, for_this_request=said)
    units = [unit for sentence in split_sentences(work) for unit in _sentence(message, sentence)]
    _refer(units)
    return _assemble(text, units, masked)


def _refer(units: list[_Unit]) -> None:
    # "We use Java 17, so don't use newer syntax" / "用的是 Java 17，别用更新的语法": a prohibition that compares
    # without saying with what ("newer", "更新的", "15才有的") is about the version the message pinned.
    pinned = [f for unit in units for f in unit.facts if f.kind == "requirement" and ".version" in f.rule]
    if not pinned:
        return
    version = pinned[-1].value
    tool = version.rsplit(" ", 1)[0]
    for unit in units:
        for index, fact in enumerate(unit.facts):
            if fact.kind != "prohibition":
                continue
            value = fact.value
            if _COMPARES_EN.match(value) and not re.search(r"\bthan\b", value, re.IGNORECASE):
                value = f"{value} than {version}"
            elif _THAN_THAT.search(value):
                value = _THAN_THAT.sub(f"than {version}", value)
            elif _COMPARES_ZH.match(value):
                value = f"比 {version} {value}"
            elif _BARE_VERSION_ZH.match(value):
                value = f"{tool} {value}"
            else:
                continue
            unit.facts[index] = replace(fact, value=value, key=normalize_key(fact.kind, value))


def _mask_quotes(work: str, rules: RuleSet, masked: list[_Unit]) -> tuple[str, str]:
    # Quoted instructions belong to someone else; a quoted bare term ("eval") is just a name, kept for the rules
    # and blanked for the guards (the second text).
    names: list[Span] = []
    for quote in find_quotes(work):
        inner = work[quote.inner.start:quote.inner.end]
        markers = rules.markers["zh" if has_cjk(inner) else "en"]
        if guards.looks_like_constraint(inner, markers):
            masked.append(_Unit(quote.outer, reason=guards.QUOTED))
            blank = (quote.outer.start, quote.outer.end)
            work = work[:blank[0]] + " " * (blank[1] - blank[0]) + work[blank[1]:]
        else:
            names.append(quote.inner)
            for pos in (quote.outer.start, quote.inner.end):
                width = quote.inner.start - quote.outer.start if pos == quote.outer.start else quote.outer.end - pos
                work = work[:pos] + " " * width + work[pos + width:]
    plain = work
    for name in names:
        plain = plain[:name.start] + "x" * (name.end - name.start) + plain[name.end:]
    return work, plain


def _sentence(message: _Message, span: Span) -> list[_Unit]:
    if span.end - span.start > _MAX_SENTENCE:
        return [_Unit(span, reason=f"too long to read as one instruction: {span.end - span.start} characters "
                                   f"without a sentence break (at most {_MAX_SENTENCE} are read)")]
    markers = message.rules.markers[message.lang(span)]
    start, end = strip_edges(message.work, span.start, span.end, markers)
    units: list[_Unit] = []
    if start < end:
        verdict = guards.judge_sentence(message.guarded(start, span.end), markers,
                                        whole=message.guarded(span.start, span.end))
        if verdict is not None:
            said = _said_before_asking(message, span) if verdict.reason == guards.QUESTION else None
            return said if said is not None else [_Unit(span, reason=verdict.reason)]
        # Either language's new-clause conjunctions cut a sentence that mixes the two.
        parts = split_at(message.work, Span(start, end), (m.new_clause for m in message.rules.markers.values()))
        units = [unit for part in parts for unit in _part(message, span if len(parts) == 1 else part)]
    if not units:  # only greetings, thanks and the like ("Thanks!", "OK, got it.")
        return [_Unit(span, reason=guards.NO_FACT)] if _WORD.search(message.work, span.start, span.end) else []
    # The sentence's edges (lead-ins, trailers, the closing mark) belong to its first and last clause.
    units[0].span = Span(span.start, units[0].span.end)
    units[-1].span = Span(units[-1].span.start, span.end)
    if _for_this_request(message, span):
        for unit in units:
            unit.lifetime = "request"
            unit.facts = [replace(f, lifetime="request") if f.kind in INSTRUCTION_KINDS else f for f in unit.facts]
    return units


def _for_this_request(message: _Message, span: Span) -> bool:
    # A message that says its rules are for this request ("for this task: no tables", "这次不要用表格"), or a
    # sentence shaped as a one-off request ("Write a 300-word summary without commas"), is about this request
    # only, unless the sentence speaks of later answers too ("always", "from now on", "以后").
    sentence = message.work[span.start:span.end]
    markers = message.rules.markers[message.lang(span)]
    if markers.standing is not None and markers.standing.search(sentence):
        return False
    return message.for_this_request or (
        markers.one_off is not None and markers.one_off.search(sentence.strip()) is not None)


def _said_before_asking(message: _Message, span: Span) -> list[_Unit] | None:
    # "我很喜欢旅游和看电影，你呢？", "I love hiking, do you?": the question is the last clause; what the clauses
    # before it state is still said. None when the sentence asks from its first clause on.
    clauses = split_clauses(message.work, span)
    for index, clause in enumerate(clauses):
        markers = message.rules.markers[message.lang(clause)]
        if guards.judge_sentence(message.guarded(clause.start, clause.end), markers) is not None:
            if index == 0:
                return None
            head = _sentence(message, Span(span.start, clauses[index - 1].end))
            return [*head, _Unit(Span(clause.start, span.end), reason=guards.QUESTION)]
    return None


def _part(message: _Message, span: Span) -> list[_Unit]:
    markers = message.rules.markers[message.lang(span)]
    start, end = strip_edges(message.work, span.start, span.end, markers)
    if start >= end:
        return []
    whole: list[ExtractedFact] = []
    if guards.judge_clause(message.guarded(start, end), markers) is None:
        whole = _match_unit(message, span, {})
    by_clause = _clauses(message, Span(start, end))
    split = [fact for unit in by_clause for fact in unit.facts]
    # Whole only when it reads more than the clauses do: the same facts keep the clauses, each accounted for.
    if _prefer_whole(whole, split) and (len(by_clause) == 1 or _said(whole) != _said(split)):
        return [_Unit(span, whole)]
    return by_clause


def _said(facts: list[ExtractedFact]) -> set[tuple[str, str]]:
    return {(fact.key, fact.value.lower()) for fact in facts}


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
    # "Berlin, Germany" or "jQuery, React, or Vue" continue a value; "it looks so cozy" and "我刚下班" (a
    # subject of its own) start a new thought.
    parts = [part.strip() for part in value.split(",")]
    if has_cjk(value):
        return _comma_list_zh(parts)
    return all(not _SUBJECT.match(part) and len(part.split()) <= 3 for part in parts[1:])


def _comma_list_zh(parts: list[str]) -> bool:
    # In Chinese a comma mostly separates clauses ("测试，赶时间"); a run of three or more short parts is a
    # casual list ("唱歌跳舞，健身，旅游，电影").
    return len(parts) >= 3 and all(0 < len(part) <= 4 and not _SUBJECT.match(part) for part in parts[1:])


def _clauses(message: _Message, span: Span) -> list[_Unit]:
    units: list[_Unit] = []
    carry: guards.Verdict | None = None
    for clause in split_clauses(message.work, span):
        markers = message.rules.markers[message.lang(clause)]
        start, end = strip_edges(message.work, clause.start, clause.end, markers)
        if start >= end:
            continue
        verdict = guards.judge_clause(message.guarded(start, end), markers)
        if verdict is not None or carry is not None:
            reason = verdict.reason if verdict is not None else carry.reason if carry is not None else ""
            units.append(_Unit(clause, reason=reason))
            carry = verdict if verdict is not None and verdict.carries else None
            continue
        facts = _match_unit(message, clause, {})
        units.append(_Unit(clause, facts, None if facts else guards.NO_FACT if end - start <= _MAX_UNIT else (
            f"too long to read as one instruction: {end - start} characters without a sentence or clause break "
            f"(at most {_MAX_UNIT} are read)")))
    return units


def _match_unit(message: _Message, span: Span, memo: dict[tuple[Span, bool], list[ExtractedFact]],
                half: bool = False) -> list[ExtractedFact]:
    if (span, half) in memo:
        return memo[(span, half)]
    lang = message.lang(span)
    markers = message.rules.markers[lang]
    start, end = strip_edges(message.work, span.start, span.end, markers)
    result: list[ExtractedFact] = []
    if start < end <= start + _MAX_UNIT:
        whole = _best(message, _present(message, start, end), message.text(span), lang, half)
        # "and" joins two constraints only when both halves stand on their own; otherwise the whole clause
        # is one constraint ("don't use tabs and spaces"). A lone half is not trusted: its subject may be
        # in the other half ("they brighten our day and always make us smile").
        split = _split(message, Span(start, end), memo, markers)
        result = split or whole
    memo[(span, half)] = result
    return result


def _present(message: _Message, start: int, end: int) -> str:
    # A wish ("It would be great if you used British spelling", "Would you mind not using my full name") asks
    # for what its verb says: the verb is read in the present (vocab.past, vocab.gerund) as a request to do it
    # ("make sure to use ...") or, negated, not to ("don't use ...").
    core = message.work[start:end]
    before = message.work[max(0, start - 40):start]
    if _AFTER_IF_YOU.search(before):
        table = message.rules.vocab.get("past", {})
    elif _AFTER_MIND.search(before):
        table = message.rules.vocab.get("gerund", {})
    else:
        return core
    negated = _NOT.match(core)
    rest = core[negated.end():] if negated else core
    head = _HEAD.match(rest)
    if head is None or head.group(0).lower() not in table:
        return core
    verb, tail = table[head.group(0).lower()], rest[head.end():]
    if verb in ("don't", "do not", "never", "always", "only"):
        return verb + tail
    return ("don't " if negated else "make sure to ") + verb + tail


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


def _best(message: _Message, core: str, text: str, lang: str, half: bool = False) -> list[ExtractedFact]:
    best: list[ExtractedFact] = []
    extra: list[ExtractedFact] = []
    for rule in message.rules.for_lang(lang):
        if (half and rule.whole_clause) or (best and not rule.also):
            continue
        match = rule.pattern.search(core)
        if match is not None:
            facts = _build(rule, match, message.rules, lang, text)
            if rule.also:
                extra.extend(facts)
            elif facts:
                best = facts
    # An `also` fact adds to what the best rule read ("a 300-word summary without commas") or stands alone.
    return [*best, *(f for f in extra if f.key not in {b.key for b in best})]


def _build(rule: Rule, match: re.Match[str], rules: RuleSet, lang: str, text: str) -> list[ExtractedFact]:
    groups = {name: raw for name, raw in match.groupdict().items() if raw is not None and raw.strip()}
    listed = next((name for name in groups if _SUFFIX.sub("", name) == rule.each), None)
    items = _items(groups[listed]) if listed is not None else []
    if listed is None or len(items) < 2:
        fact = _fact(rule, groups, rules, lang, text)
        return [fact] if fact is not None else []
    # One fact per listed item ("allergic to peanuts and shellfish", "I like hiking, running and climbing"):
    # each stands or is superseded on its own.
    facts = [_fact(rule, {**groups, listed: item}, rules, lang, text) for item in items]
    return [fact for fact in facts if fact is not None] if all(facts) else []


def _items(listed: str) -> list[str]:
    # Only a list of short items is split: a long one is one thought ("the flexibility of working from home").
    cjk = has_cjk(listed) and not _comma_list_zh([part.strip() for part in re.split(r"[,，]", listed)])
    splitter = _ITEMS_ZH if cjk else _ITEMS  # a Chinese comma ends a clause, not an item, but in a short list
    items = [_ITEM_EDGES.sub("", item.strip()) for item in splitter.split(listed.strip()) if item.strip()]
    items = [item for item in items if item]
    if len(items) < 2 or any(len(item) > 10 if has_cjk(item) else len(item.split()) > 5 for item in items):
        return []
    # "action and comedy movies", "Sichuan and Cantonese cuisine": single modifiers share the last item's noun;
    # a plural or a gerund is a noun of its own ("comedies and romance films", "hiking and rock climbing").
    last = items[-1].split()
    if len(last) >= 2 and all(len(item.split()) == 1 and not _NOUN_ALONE.search(item) for item in items[:-1]):
        items = [f"{item} {last[-1]}" for item in items[:-1]] + [items[-1]]
    return items


def _fact(rule: Rule, groups: dict[str, str], rules: RuleSet, lang: str, text: str) -> ExtractedFact | None:
    values: dict[str, str] = {}
    for name, raw in groups.items():
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
    if subject == "budget":  # a budget for one thing is not a budget for another (memory.facts.qualify)
        subject = budget_subject(text)
    return ExtractedFact(key=normalize_key(rule.kind, subject), value=value, kind=rule.kind, text=text, rule=rule.id)


def _assemble(original: str, units: list[_Unit], masked: list[_Unit]) -> Extraction:
    # Quoted or code text inside a sentence without facts is why it has none; elsewhere it is a clause of its own.
    for mark in masked:
        holder = next((u for u in units if u.span.start <= mark.span.start and mark.span.end <= u.span.end), None)
        if holder is None:
            units.append(mark)
        elif not holder.facts:
            holder.reason = mark.reason
    seen: set[tuple[str, str]] = set()
    clauses: list[Clause] = []
    for unit in sorted(units, key=lambda u: u.span.start):
        fresh: list[ExtractedFact] = []
        for fact in unit.facts:
            if (fact.key, fact.value.lower()) not in seen:
                seen.add((fact.key, fact.value.lower()))
                fresh.append(fact)
        reason = (unit.reason or guards.NO_FACT) if not unit.facts else None if fresh else guards.REPEATED
        clauses.append(Clause(original[unit.span.start:unit.span.end].strip(), tuple(fresh), reason, unit.lifetime))
    return Extraction(
        facts=tuple(fact for clause in clauses for fact in clause.facts),
        ignored=tuple(Ignored(c.text, c.reason or guards.NO_FACT) for c in clauses if not c.facts),
        clauses=tuple(clauses),
    )
