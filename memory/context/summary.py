"""An extractive summary of a span of history: a brief the next turn can work from, never a paraphrase.

Fixed sections (seed 003 §3.3), in this order: *User constraints* (given by the caller: the facts in force the
constraints block does not already state, never rewritten or cut, and what the user said as a rule in passing),
*Open* (pending steps, errors), *Decisions*, *Done* (steps and their results), *Tool calls* (one line per call: the
tool, its arguments and what it found, memory.context.tool_calls), *Key data* (identifiers verbatim,
memory.context.identifiers: first those a user stated, which every later version carries on), *Earlier* (the far
span: a short overview of what an earlier version of the summary held) and *References* (the task items holding the
whole text). Sentences are picked by cue words in English and Chinese (memory.context.cues); no model is called.

Forget first (seed 001 §3.6): a tool call that failed and was tried again later, an error or pending step a later
sentence reports fixed or done, and an option the conversation rejected are left out, each listed in `dropped` with
its reason. Then items are kept in _PRIORITY's order while they fit `budget`, within a step the most salient first
(sharing the most terms and values with what comes after the span: the later turns, their calls and the query;
ties: the most recent), and each section is written in the order it was said. The summary fits `budget` exactly as
the tokenizer counts it; only the constraints and the newest reference may take it over.
"""


from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memory.bullet import clean
from memory.context.cues import cues, place, words
from memory.context.identifiers import Identifier, identifiers, values
from memory.context.messages import Message
from memory.context.tool_calls import DETAIL, IDS, call_lines, informative, printed, retried, shorten
from memory.text import remembered
from memory.text.sentences import split_sentences
from memory.tokens import TokenCounter

__all__ = ["GIVEN", "SECTIONS", "Summary", "forget", "heading", "section", "summarise", "terms"]

SECTIONS = ("User constraints", "Open", "Decisions", "Done", "Tool calls", "Key data", "Earlier", "References")
# Not a heading of its own: the Key data items a user stated, written first under Key data and kept with a priority
# just below the constraints, in every later version (the model summariser keeps every Key data item verbatim).
GIVEN = "Given by the user"

_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_HEADER = "## Summary of messages[{first}] to messages[{last}]"
_MAX_SENTENCE_CHARS = 400  # a longer "sentence" is pasted material, not a step
# Constraints, the identifiers the user gave, the newest reference; then identifiers before lines and sentences (a
# few tokens each, kept verbatim by the model summariser too, and what a next call takes): those people wrote, used
# later or the far span kept (an identifier does not lose its place for being older), those tools printed, times
# and amounts. Then the calls that found something (the far span's with the span's; a line is written in place of
# the identifiers it shows, cut to fit when it does not), the brief's sentences, the calls' other details, and last
# the calls that found nothing, the older references (reachable through the newest) and the far overview.
_PRIORITY = ("User constraints", "Said in passing", GIVEN, "References", "Key data", "Printed", "Minor data",
             "Tool calls", "Open", "Decisions", "Done", "Said", "Details", "Minor calls", "Older references", "Earlier")
_NEWEST_FIRST = (GIVEN, "References", "Older references")  # chosen from the newest; the others by salience
# A user message longer than this is pasted material: its identifiers are data (Key data), not given in passing.
_STATED_CHARS = 2000
_STATED_DIGITS = 5  # a bare number the user gives is an identifier from this many digits on (an order, a phone)
# Items picked apart and written under another section's heading: after its own items, or before them (the calls of
# the far span came before the span's).
_SHOWN = {"Earlier data": "Key data", "Printed": "Key data", "Minor data": "Key data",
          "Said in passing": "User constraints", "Said": "Done", "Earlier calls": "Tool calls", GIVEN: "Key data"}
_SHOWN_BEFORE = frozenset({"Earlier calls", GIVEN})
_CALLS = ("Earlier calls", "Tool calls")
_DATA = ("Key data", "Earlier data", "Printed", "Minor data")  # not GIVEN: listed whatever else shows it
_MINOR_KINDS = frozenset({"time", "amount", "number"})
# The most of the budget these may take: older references are reachable through the newest, and what tools printed
# (with the times and amounts) would leave no room for the lines that say what the identifiers are, nor the brief.
_SHARE = {"References": 0.25, "Printed": 0.5}
_SHARED = {"Minor data": "Printed"}  # the times and amounts count in the printed identifiers' share
_PRINTED = 32  # identifiers per tool result at most: a listing's first rows (the rest is behind the reference)
_FINDING_CHARS = (160, 400)  # a call's finding: as many characters as the budget has tokens, within these
# Dropped in this order while a summary's counted whole is over its budget (line costs can miss a token or two).
_TRIMMED = ("Earlier", "Minor data", "Printed", "Earlier calls", "Earlier data", "Tool calls", "Key data", "Said",
            "Done", "Decisions", "Open", "References", GIVEN, "Said in passing", "User constraints")


@dataclass(frozen=True)
class Summary:
    """The summary's text, its exact tokens, its items per section, the message range it covers and what forgetting
    left out first (text, reason)."""

    text: str
    tokens: int
    sections: dict[str, tuple[str, ...]]
    first: int
    last: int
    dropped: tuple[tuple[str, str], ...] = ()


def _prose(text: str) -> str:
    """The text without its fenced code blocks, and nothing of a JSON payload: a brief quotes no code or data
    (it is behind the span's reference, and its identifiers are in Key data)."""
    if text.lstrip().startswith(("{", "[")):
        return ""
    return _FENCED.sub(" ", text) if "```" in text else text


@functools.lru_cache(maxsize=16384)
def _identifiers(text: str) -> tuple[Identifier, ...]:
    return identifiers(text)


@functools.lru_cache(maxsize=65536)
def _values(text: str) -> frozenset[str]:
    return frozenset(values(text))


@functools.lru_cache(maxsize=16384)
def _sentences(text: str) -> tuple[str, ...]:
    """split_sentences, remembered: the messages after one compaction's span are the next one's."""
    return tuple(split_sentences(text))


# Content terms of a text (memory.context.cues.words), remembered: the messages after one compaction's span are the
# next one's.
terms = functools.lru_cache(maxsize=65536)(words)


def forget() -> None:
    """Clear the sentences, identifiers, values and terms remembered from messages (memory.text.remembered)."""
    terms.cache_clear()
    _identifiers.cache_clear()
    _values.cache_clear()
    _sentences.cache_clear()


def summarise(messages: Sequence[Message], counter: TokenCounter, budget: int, *,
              constraints: Sequence[str] = (), instructions: Sequence[str] = (), references: Sequence[str] = (),
              prior: Mapping[str, Sequence[str]] | None = None, later: Sequence[Message] = (),
              query: str = "", first: int | None = None, last: int | None = None) -> Summary:
    """The summary of `messages` (a span of history) within `budget` tokens; constraints are never cut.

    `instructions` are the user's rules the fact rules did not recognise: under *User constraints* too, after the
    constraints, and kept before anything else while they fit.

    `prior` is the sections of the summary this one extends (the far span): its open items stay open unless the
    span closes them, its decisions and steps become the *Earlier* overview, its key data and calls compete with the
    span's own (and the identifiers its calls' lines show stay candidates when a line is not kept), its references
    are kept before the span's, and the identifiers a user gave (its `GIVEN`) before the span's. `later` (the
    messages after the span) and `query` decide salience and what was retried or fixed later. `first` and `last`
    are the messages the summary covers (by default the span's; `first` is the prior's when there is one).

    The sections returned hold one more than those written, `GIVEN`: the *Key data* items a user stated, for the
    next version to carry on.
    """
    first = (messages[0].index if messages else -1) if first is None else first
    last = (messages[-1].index if messages else -1) if last is None else last
    gone, notes = retried(messages, later)
    dropped: list[tuple[str, str]] = [(note, "failed, tried again later") for note in notes]
    kept_messages = [m for m in messages if m.index not in gone]
    said = [(m.role, clean(s)) for m in kept_messages if m.role != "tool" for s in _sentences(_prose(m.content))
            if len(s) <= _MAX_SENTENCE_CHARS]
    sentences, statements, rejected = place(said)  # (section, sentence); the assistant's other sentences
    dropped += [(text, "rejected option") for text in rejected]
    later_done = [clean(s) for m in later if m.role != "tool" for s in _sentences(m.content)
                  if len(s) <= _MAX_SENTENCE_CHARS and "Done" in cues(s)]
    picked: dict[str, list[str]] = {name: [] for name in (*SECTIONS, *_SHOWN)}
    picked["User constraints"] = list(dict.fromkeys(clean(c) for c in constraints if c.strip()))
    picked["Said in passing"] = [clean(i) for i in instructions if clean(i) not in set(picked["User constraints"])]
    picked["References"] = list(dict.fromkeys([*(prior or {}).get("References", ()), *references]))
    dones = [t for n, t in sentences if n == "Done"]
    seen_done = 0
    for name, text in [*(("Open", item) for item in (prior or {}).get("Open", ())), *sentences]:  # the far span's
        seen_done += name == "Done"  # an open item is closed by a step done after it
        closer = _closed_by(text, dones[seen_done:] + later_done) if name == "Open" else None
        if closer is not None:
            dropped.append((text, f"done later: {closer}"))
        else:
            picked[name].append(text)
    if prior:
        picked["Earlier"] = [*prior.get("Earlier", ()), *prior.get("Decisions", ()), *prior.get("Done", ())]
    # What comes after the span says what it is still about: its words, and the values its messages and calls use.
    used = "\n".join([query, *(m.content for m in later if m.role != "tool"),
                      *(c.arguments for m in later for c in m.tool_calls)])
    _pick_data(picked, kept_messages, prior or {}, used)
    # Each call twice: its ids, codes, names and dates (what a next call takes), and with every detail that fits.
    chars = min(max(budget, _FINDING_CHARS[0]), _FINDING_CHARS[1])
    lines = call_lines(kept_messages, ((chars, IDS), (2 * chars, DETAIL)))
    picked["Tool calls"] = [ids for ids, _ in lines]
    richer = {i: detail for i, (_, detail) in enumerate(lines)}
    picked["Earlier calls"] = [c for c in (prior or {}).get("Tool calls", ()) if c not in set(picked["Tool calls"])]
    # The same statement made again ("Answer 7: ..." / "Answer 8: ...") is kept once, its latest wording.
    latest = {terms(t): t for t in statements}
    picked["Said"] = [t for t in statements if latest.get(terms(t)) == t and len(terms(t)) >= 2]
    for name in picked:
        picked[name] = list(dict.fromkeys(picked[name]))
    salient = terms(query) | frozenset().union(*(terms(m.content) for m in later if m.role != "tool"))
    queue = _queue(picked, richer, salient, _values(used))
    return _fit(picked, queue, counter, budget, first, last, tuple(dict.fromkeys(dropped)))


def _pick_data(picked: dict[str, list[str]], kept: Sequence[Message], prior: Mapping[str, Sequence[str]],
               used: str) -> None:
    """The identifiers, each once where it ranks highest: what the user gave in passing (an order number, a path,
    an address: kept through every later version); *Key data*: what people wrote, and what a tool printed that the
    conversation uses later; the far span's key data; *Printed*: what the calls were made with and found (the far
    span's calls' lines included, which may not be kept); *Minor data*: the times, amounts and bare numbers."""
    stated = [i for m in kept if m.role == "user" and len(m.content) <= _STATED_CHARS  # not pasted material
              for i in _identifiers(m.content) if i.kind != "number" or sum(map(str.isdigit, i.text)) >= _STATED_DIGITS]
    picked[GIVEN] = [*prior.get(GIVEN, ()), *(i.text for i in stated)]
    later = _values(used)
    said = [i for m in kept if m.role != "tool" for i in _identifiers(m.content)
            if i.kind != "number" or _within(i.text, used)]  # a bare number ("question 12") is kept when used again
    shown = [*(v for line in prior.get("Tool calls", ()) for v in values(line)[:_PRINTED]),
             *(v for m in kept for text in ([m.content] if m.role == "tool" else [c.arguments for c in m.tool_calls])
               for v in printed(text)[:_PRINTED])]
    picked["Key data"] = [*(i.text for i in said if i.kind not in _MINOR_KINDS),
                          *(v for v in shown if v in later or (" " in v and _within(v, used)))]
    picked["Earlier data"] = [d for d in prior.get("Key data", ()) if not _minor(d)]
    picked["Printed"] = shown
    picked["Minor data"] = [*(d for d in prior.get("Key data", ()) if _minor(d)),
                            *(i.text for i in said if i.kind in _MINOR_KINDS)]
    listed = set(picked[GIVEN])
    for name in _DATA:
        picked[name] = [d for d in dict.fromkeys(picked[name]) if d not in listed]
        listed.update(picked[name])


def _minor(item: str) -> bool:
    """Whether a Key data item is a time, an amount or a bare number."""
    found = _identifiers(item)
    return len(found) == 1 and found[0].text == item and found[0].kind in _MINOR_KINDS


def _within(value: str, text: str) -> bool:
    """Whether `value` is in `text` whole (not inside a longer word or code)."""
    if value in _values(text):
        return True
    if _values(value) == {value} or value not in text:  # a value word is found as one
        return False
    return re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", text) is not None


def _closed_by(item: str, done: Sequence[str]) -> str | None:
    """The first later Done sentence that is about the same thing as an open item: a shared identifier, or two
    shared content terms."""
    ids = {i.text for i in _identifiers(item) if i.kind != "number"}
    about = terms(item)
    for sentence in done:
        if ids & {i.text for i in _identifiers(sentence)} or len(about & terms(sentence)) >= 2:
            return sentence
    return None


# One step of filling a summary: an item of a section, and the text it is written as (a richer form of a call's).
_Step = tuple[str, int, str]


def _queue(picked: Mapping[str, Sequence[str]], richer: Mapping[int, str], salient: frozenset[str],
           later: frozenset[str]) -> list[_Step]:
    """Every item in the order it is tried: _PRIORITY's steps, within a step the newest first or the most salient
    (sharing the most terms and values with what comes after the span; ties: the most recent)."""
    def items(*names: str) -> list[tuple[str, int]]:  # the far span's first: said or made before the span's
        return [(name, i) for name in names for i in range(len(picked[name]))]

    calls = items(*_CALLS)
    older = len(picked["References"]) - 1
    steps = {"Key data": items("Earlier data", "Key data"),
             "Tool calls": [(n, i) for n, i in calls if informative(picked[n][i])],
             "Minor calls": [(n, i) for n, i in calls if not informative(picked[n][i])],
             "Details": [("Tool calls", i) for i in richer],
             "References": items("References")[older:], "Older references": items("References")[:older]}
    queue: list[_Step] = []
    for step in _PRIORITY:
        listed = steps[step] if step in steps else items(step)
        order = list(range(len(listed)))
        if step in _NEWEST_FIRST:
            order.reverse()
        elif step not in ("User constraints", "Said in passing"):
            weight = [len(terms(t) & salient) + len(_values(t) & later) for t in (picked[n][i] for n, i in listed)]
            order.sort(key=lambda k: (-weight[k], -k))
        queue += [(n, i, richer[i] if step == "Details" else picked[n][i]) for n, i in (listed[k] for k in order)]
    return queue


def _fit(picked: dict[str, list[str]], queue: Sequence[_Step], counter: TokenCounter, budget: int, first: int,
         last: int, dropped: tuple[tuple[str, str], ...]) -> Summary:
    """The queue's items while they fit, in two passes (a call line written frees the identifiers it shows); each
    section written in its own order."""
    header = heading(first, last)
    spent = counter.count(header + "\n")
    chosen: dict[str, dict[int, str]] = {name: {} for name in picked}
    heads = dict.fromkeys(SECTIONS, 0)  # items written under each heading
    taken: Counter[str] = Counter()  # tokens per share of the budget (_SHARE)
    lines = ""  # the call lines written: an identifier they show is not listed again

    def cost(name: str, text: str) -> int:
        shown = _SHOWN.get(name, name)
        return counter.count(f"- {text}\n") + (0 if heads[shown] else counter.count(f"### {shown}\n"))

    def freed(name: str, text: str) -> tuple[list[tuple[str, int, int]], int]:
        """The identifiers listed that a call line shows, their tokens, and all they free with the heading."""
        gone = [(data, j, counter.count(f"- {item}\n")) for data in (_DATA if name in _CALLS else ())
                for j, item in chosen[data].items() if _within(item, text)]
        heading_too = bool(gone) and heads["Key data"] == len(gone)
        return gone, sum(g[2] for g in gone) + (counter.count("### Key data\n") if heading_too else 0)

    def take(name: str, i: int, text: str, tokens: int) -> None:
        nonlocal spent, lines
        gone, back = freed(name, text)
        for data, j, item_tokens in gone:
            del chosen[data][j]
            taken[_SHARED.get(data, data)] -= item_tokens
        heads["Key data"] -= len(gone)
        heads[_SHOWN.get(name, name)] += i not in chosen[name]
        chosen[name][i] = text
        spent += tokens - back
        taken[_SHARED.get(name, name)] += tokens
        lines += "\n" + text if name in _CALLS else ""

    for _ in range(2):
        for name, i, text in queue:
            if i in chosen[name]:  # a richer form of a line written
                extra = counter.count(f"- {text}\n") - counter.count(f"- {chosen[name][i]}\n")
                if chosen[name][i] != text and spent + extra - freed(name, text)[1] <= budget:
                    take(name, i, text, extra)
                continue
            if text != picked[name][i] or (name in _DATA and _within(text, lines)):
                continue  # a richer form of a line not written; an identifier a line shows
            tokens, share = cost(name, text), _SHARED.get(name, name)
            most = budget * _SHARE.get(share, 1)  # the share of the budget items of its kind may take
            for part in (2, 4) if name in _CALLS and spent + tokens - freed(name, text)[1] > budget else ():
                shorter = shorten(text, part)  # a line that does not fit: half or a quarter of its finding
                if shorter is not None and spent + cost(name, shorter) - freed(name, shorter)[1] <= budget:
                    text, tokens = shorter, cost(name, shorter)
                    break
            if name == "User constraints" or (name == "References" and not chosen[name]):
                pass  # never cut, nor the link to every compacted message
            elif spent + tokens - freed(name, text)[1] > budget or taken[share] + tokens > most:
                continue
            take(name, i, text, tokens)
    kept = {name: [chosen[name][i] for i in sorted(chosen[name])] for name in picked}
    text = _render(header, kept)
    # Line costs add up exactly for lines that start with "-" or "#" after a newline; the whole is counted to be
    # sure, and the lowest-priority line dropped while over.
    tokens = counter.count(text)
    # The constraints themselves are never cut, nor the newest reference.
    floor = {"User constraints": len(picked["User constraints"]), "References": min(1, len(picked["References"]))}
    for name in _TRIMMED:
        while tokens > budget and len(kept[name]) > floor.get(name, 0):
            kept[name].pop(0 if name in _NEWEST_FIRST else -1)
            text = _render(header, kept)
            tokens = counter.count(text)
    written = _shown(kept)
    return Summary(text, tokens, {**{n: tuple(written[n]) for n in SECTIONS}, GIVEN: tuple(kept[GIVEN])}, first,
                   last, dropped)


def heading(first: int, last: int) -> str:
    """A summary's first line: the messages it covers."""
    return _HEADER.format(first=first, last=last)


def section(name: str, items: Sequence[str]) -> str:
    """One section of a summary as written: its "### " heading and a "- " line per item (the model summariser
    writes the sections it keeps from the extractive pass the same way)."""
    return "\n".join([f"### {name}", *(f"- {item}" for item in items)])


def _shown(kept: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """The items under each heading: a section's own, with those picked apart for it before or after them."""
    shown = {name: list(kept.get(name, ())) for name in SECTIONS}
    for extra, name in _SHOWN.items():
        before, after = (kept.get(extra, ()), ()) if extra in _SHOWN_BEFORE else ((), kept.get(extra, ()))
        shown[name] = [*before, *shown[name], *after]
    return shown


def _render(header: str, kept: Mapping[str, Sequence[str]]) -> str:
    shown = _shown(kept)
    return "\n".join([header, *(section(name, shown[name]) for name in SECTIONS if shown[name])])


remembered.register(forget)
