"""An extractive summary of a span of history: a brief the next turn can work from, never a paraphrase.

Fixed sections (docs/how-it-works.md), in this order: *User constraints* (given by the caller: the facts in force the
constraints block does not already state, never rewritten or cut, and what the user said as a rule in passing),
*Open* (pending steps, errors), *Decisions*, *Done* (steps and their results), *Tool calls* (one line per call: the
tool, its arguments and what it found, memory.context.tool_calls), *Key data* (identifiers verbatim,
memory.context.identifiers: first those a user stated, which every later version carries on, then those people
wrote or the conversation uses later, those tools printed, the times and amounts), *Earlier* (the far
span: a short overview of what an earlier version of the summary held) and *References* (the task items holding the
whole text). Sentences are picked by cue words in English and Chinese (memory.context.cues); no model is called.

Forget first (docs/how-it-works.md): a tool call that failed and was tried again later, an error or pending step a later
sentence reports fixed or done, and an option the conversation rejected are left out, each listed in `dropped` with
its reason. Then items are kept in priority order while they fit `budget` (memory.context.brief), within a step the
most salient first (sharing the most terms and values with what comes after the span: the later turns, their calls
and the query; ties: the most recent), and each section is written in the order it was said. The summary fits
`budget` exactly as the tokenizer counts it; only the constraints and the newest reference may take it over.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

from memory.bullet import clean
from memory.context.brief import DATA, GIVEN, SECTIONS, SHOWN, Summary, heading, pack, queue_items, section
from memory.context.cues import cues, place, words
from memory.context.identifiers import Identifier, identifiers, values
from memory.context.memo import Memo
from memory.context.messages import Message
from memory.context.tool_calls import DETAIL, IDS, call_lines, printed, retried
from memory.text.sentences import split_sentences
from memory.tokens import TokenCounter

__all__ = ["GIVEN", "SECTIONS", "Summary", "heading", "section", "summarise"]

_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_MAX_SENTENCE_CHARS = 400  # a longer "sentence" is pasted material, not a step
_INSIDE = re.compile(r"[\w-]")  # a character next to a value that makes it part of a longer word or code
# A user message longer than this is pasted material: its identifiers are data (Key data), not given in passing.
_STATED_CHARS = 2000
_STATED_DIGITS = 5  # a bare number the user gives is an identifier from this many digits on (an order, a phone)
_MINOR_KINDS = frozenset({"time", "amount", "number"})
_PRINTED = 32  # identifiers per tool result at most: a listing's first rows (the rest is behind the reference)
_FINDING_CHARS = (160, 400)  # a call's finding: as many characters as the budget has tokens, within these


def _prose(text: str) -> str:
    """The text without its fenced code blocks, and nothing of a JSON payload: a brief quotes no code or data
    (it is behind the span's reference, and its identifiers are in Key data)."""
    if text.lstrip().startswith(("{", "[")):
        return ""
    return _FENCED.sub(" ", text) if "```" in text else text


def _identifiers(memo: Memo, text: str) -> tuple[Identifier, ...]:
    return memo.of("identifiers", text, lambda t: tuple(identifiers(t)))


def _values(memo: Memo, text: str) -> frozenset[str]:
    return memo.of("values", text, lambda t: frozenset(values(t)))


def _sentences(memo: Memo, text: str) -> tuple[str, ...]:
    return memo.of("sentences", text, lambda t: tuple(split_sentences(t)))


def _terms(memo: Memo, text: str) -> frozenset[str]:
    """Content terms of a text (memory.context.cues.words)."""
    return memo.of("terms", text, words)


def summarise(messages: Sequence[Message], counter: TokenCounter, budget: int, *,
              constraints: Sequence[str] = (), instructions: Sequence[str] = (), references: Sequence[str] = (),
              prior: Mapping[str, Sequence[str]] | None = None, later: Sequence[Message] = (),
              query: str = "", first: int | None = None, last: int | None = None, memo: Memo | None = None) -> Summary:
    """The summary of `messages` (a span of history) within `budget` tokens; constraints are never cut.

    `instructions` are the user's rules the fact rules did not recognise: under *User constraints* too, after the
    constraints, and kept before anything else while they fit.

    `prior` is the sections of the summary this one extends (the far span): its open items stay open unless the
    span closes them, its decisions and steps become the *Earlier* overview, its key data and calls compete with the
    span's own (and the identifiers its calls' lines show stay candidates when a line is not kept), its references
    are kept before the span's, and the identifiers a user gave (its `GIVEN`) before the span's. `later` (the
    messages after the span) and `query` decide salience and what was retried or fixed later. `first` and `last`
    are the messages the summary covers (by default the span's; `first` is the prior's when there is one). `memo`
    keeps what is read of each message for the next compaction (memory.context.memo).

    The sections returned hold one more than those written, `GIVEN`: the *Key data* items a user stated, for the
    next version to carry on.
    """
    memo = memo or Memo()
    first = (messages[0].index if messages else -1) if first is None else first
    last = (messages[-1].index if messages else -1) if last is None else last
    gone, notes = retried(messages, later)
    dropped: list[tuple[str, str]] = [(note, "failed, tried again later") for note in notes]
    kept_messages = [m for m in messages if m.index not in gone]
    said = [(m.role, clean(s)) for m in kept_messages if m.role != "tool"
            for s in _sentences(memo, _prose(m.content)) if len(s) <= _MAX_SENTENCE_CHARS]
    sentences, statements, rejected = place(said)  # (section, sentence); the assistant's other sentences
    dropped += [(text, "rejected option") for text in rejected]
    later_done = [clean(s) for m in later if m.role != "tool" for s in _sentences(memo, m.content)
                  if len(s) <= _MAX_SENTENCE_CHARS and "Done" in cues(s)]
    picked: dict[str, list[str]] = {name: [] for name in (*SECTIONS, *SHOWN)}
    picked["User constraints"] = list(dict.fromkeys(clean(c) for c in constraints if c.strip()))
    picked["Said in passing"] = [clean(i) for i in instructions if clean(i) not in set(picked["User constraints"])]
    picked["References"] = list(dict.fromkeys([*(prior or {}).get("References", ()), *references]))
    dones = [t for n, t in sentences if n == "Done"]
    seen_done = 0
    for name, text in [*(("Open", item) for item in (prior or {}).get("Open", ())), *sentences]:  # the far span's
        seen_done += name == "Done"  # an open item is closed by a step done after it
        closer = _closed_by(memo, text, dones[seen_done:] + later_done) if name == "Open" else None
        if closer is not None:
            dropped.append((text, f"done later: {closer}"))
        else:
            picked[name].append(text)
    if prior:
        picked["Earlier"] = [*prior.get("Earlier", ()), *prior.get("Decisions", ()), *prior.get("Done", ())]
    # What comes after the span says what it is still about: its words, and the values its messages and calls use.
    used = "\n".join([query, *(m.content for m in later if m.role != "tool"),
                      *(c.arguments for m in later for c in m.tool_calls)])
    _pick_data(memo, picked, kept_messages, prior or {}, used)
    # Each call twice: its ids, codes, names and dates (what a next call takes), and with every detail that fits.
    chars = min(max(budget, _FINDING_CHARS[0]), _FINDING_CHARS[1])
    lines = {ids: detail for ids, detail in call_lines(kept_messages, ((chars, IDS), (2 * chars, DETAIL)))}
    picked["Tool calls"] = list(lines)  # each once: two calls can read the same once their arguments are cut
    richer = dict(enumerate(lines.values()))
    picked["Earlier calls"] = [c for c in (prior or {}).get("Tool calls", ()) if c not in set(picked["Tool calls"])]
    # The same statement made again ("Answer 7: ..." / "Answer 8: ...") is kept once, its latest wording.
    latest = {_terms(memo, t): t for t in statements}
    picked["Said"] = [t for t in statements if latest.get(_terms(memo, t)) == t and len(_terms(memo, t)) >= 2]
    for name in picked:
        picked[name] = list(dict.fromkeys(picked[name]))
    salient = _terms(memo, query).union(*(_terms(memo, m.content) for m in later if m.role != "tool"))
    after = _values(memo, used)  # salience: the terms and values an item shares with what comes after the span
    queue = queue_items(picked, richer,
                        lambda text: len(_terms(memo, text) & salient) + len(_values(memo, text) & after))
    return pack(picked, queue, counter, budget, first, last, tuple(dict.fromkeys(dropped)),
                functools.partial(_within, memo))


def _pick_data(memo: Memo, picked: dict[str, list[str]], kept: Sequence[Message], prior: Mapping[str, Sequence[str]],
               used: str) -> None:
    """The identifiers, each once where it ranks highest: what the user gave in passing (an order number, a path,
    an address: kept through every later version); *Key data*: what people wrote, and what a tool printed that the
    conversation uses later; the far span's key data; *Printed*: what the calls were made with and found (the far
    span's calls' lines included, which may not be kept); *Minor data*: the times, amounts and bare numbers."""
    stated = [i for m in kept if m.role == "user" and len(m.content) <= _STATED_CHARS  # not pasted material
              for i in _identifiers(memo, m.content)
              if i.kind != "number" or sum(map(str.isdigit, i.text)) >= _STATED_DIGITS]
    picked[GIVEN] = [*prior.get(GIVEN, ()), *(i.text for i in stated)]
    later = _values(memo, used)
    said = [i for m in kept if m.role != "tool" for i in _identifiers(memo, m.content)
            if i.kind != "number" or _within(memo, i.text, used)]  # a bare number ("question 12"): kept when used again
    shown = [*(v for line in prior.get("Tool calls", ()) for v in values(line)[:_PRINTED]),
             *(v for m in kept for text in ([m.content] if m.role == "tool" else [c.arguments for c in m.tool_calls])
               for v in printed(text)[:_PRINTED])]
    picked["Key data"] = [*(i.text for i in said if i.kind not in _MINOR_KINDS),
                          *(v for v in shown if v in later or (" " in v and _within(memo, v, used)))]
    picked["Earlier data"] = [d for d in prior.get("Key data", ()) if not _minor(memo, d)]
    picked["Printed"] = shown
    picked["Minor data"] = [*(d for d in prior.get("Key data", ()) if _minor(memo, d)),
                            *(i.text for i in said if i.kind in _MINOR_KINDS)]
    listed = set(picked[GIVEN])
    for name in DATA:
        picked[name] = [d for d in dict.fromkeys(picked[name]) if d not in listed]
        listed.update(picked[name])


def _minor(memo: Memo, item: str) -> bool:
    """Whether a Key data item is a time, an amount or a bare number."""
    found = _identifiers(memo, item)
    return len(found) == 1 and found[0].text == item and found[0].kind in _MINOR_KINDS


def _within(memo: Memo, value: str, text: str) -> bool:
    """Whether `value` is in `text` whole (not inside a longer word or code)."""
    if value in _values(memo, text):
        return True
    if _values(memo, value) == {value}:  # a value word is found as one
        return False
    at = text.find(value)
    while at >= 0:
        end = at + len(value)
        if not _INSIDE.match(text, at - 1 if at else 0, at) and not _INSIDE.match(text, end, end + 1):
            return True
        at = text.find(value, at + 1)
    return False


def _closed_by(memo: Memo, item: str, done: Sequence[str]) -> str | None:
    """The first later Done sentence that is about the same thing as an open item: a shared identifier, or two
    shared content terms."""
    ids = {i.text for i in _identifiers(memo, item) if i.kind != "number"}
    about = _terms(memo, item)
    for sentence in done:
        if ids & {i.text for i in _identifiers(memo, sentence)} or len(about & _terms(memo, sentence)) >= 2:
            return sentence
    return None
