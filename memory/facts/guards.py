"""Decide when a sentence or clause must not become a fact: questions, hypotheticals, reported or negated speech."""

from __future__ import annotations

from dataclasses import dataclass

from memory.facts.rules import Markers

__all__ = [
    "ADVICE",
    "CIRCUMSTANCE",
    "CODE",
    "HYPOTHETICAL",
    "NO_FACT",
    "QUESTION",
    "QUOTED",
    "REPEATED",
    "REPORTED",
    "Verdict",
    "judge_clause",
    "judge_sentence",
    "looks_like_constraint",
]

QUESTION = "a question, not a statement"
HYPOTHETICAL = "hypothetical, not a standing instruction"
REPORTED = "reported speech, not the user's own instruction"
ADVICE = "encouragement or advice to a person, not an instruction"
CIRCUMSTANCE = "what the user has not got at hand or in mind, not an instruction"
QUOTED = "quoted text, not the user's own instruction"
CODE = "code, not prose"
NO_FACT = "no constraint, preference or profile statement found"
REPEATED = "says again what an earlier sentence of this message said"
_TAIL_NOISE = " \t,.:;!?'\"-—…。、了吧啊呀哦"


@dataclass(frozen=True)
class Verdict:
    """Why a piece of text is rejected, and whether the reason carries on to the next clause."""

    reason: str
    carries: bool = False


def judge_sentence(sentence: str, markers: Markers, whole: str | None = None) -> Verdict | None:
    """Reject a whole sentence that asks a question, sets up a hypothetical or hangs on a condition ('if ...').

    `whole` is the sentence before its lead-in was stripped, where a request frame ("Could you ...") is seen.
    """
    # A request worded as a question ("Could you not use bullet points?", "能不能别用表格？") asks for a rule.
    request = markers.request is not None and markers.request.search((whole or sentence).strip()) is not None
    if not request and markers.question is not None and markers.question.search(sentence):
        return Verdict(QUESTION)
    if markers.hypothetical is not None and markers.hypothetical.search(sentence):
        return Verdict(HYPOTHETICAL)
    return None


def judge_clause(clause: str, markers: Markers) -> Verdict | None:
    """Reject one clause that only sets a scope ('when ...'), encourages a person ('don't give up'), says what the
    user has not got at hand ('I don't have the order id with me'), reports someone else, or negates ('I'm not
    saying')."""
    if markers.conditional is not None and markers.conditional.search(clause):
        return Verdict(HYPOTHETICAL)
    if markers.advice is not None and markers.advice.search(clause):
        return Verdict(ADVICE)
    if markers.circumstance is not None and markers.circumstance.search(clause):
        return Verdict(CIRCUMSTANCE)
    if markers.reported is not None:
        match = markers.reported.search(clause)
        if match is not None:
            # "He said, never use globals": the reporting verb governs the clause after the comma.
            return Verdict(REPORTED, carries=not clause[match.end():].strip(_TAIL_NOISE))
    if markers.negated is not None:
        match = markers.negated.search(clause)
        if match is not None:
            return Verdict(f"negated: '{match.group(0).strip()}'", carries=not clause[match.end():].strip(_TAIL_NOISE))
    return None


def looks_like_constraint(text: str, markers: Markers) -> bool:
    """True when text contains a constraint cue: a quoted instruction, not a quoted name ("eval")."""
    return markers.cue is not None and markers.cue.search(text) is not None
