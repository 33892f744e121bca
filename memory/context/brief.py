"""A summary's picked items packed into its budget in priority order, and written under their headings."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memory.context.tool_calls import informative, shorten
from memory.tokens import TokenCounter

__all__ = ["DATA", "GIVEN", "SECTIONS", "SHOWN", "Step", "Summary", "heading", "pack", "queue_items", "section"]

SECTIONS = ("User constraints", "Open", "Decisions", "Done", "Tool calls", "Key data", "Earlier", "References")
# Not a heading of its own: the Key data items a user stated, written first under Key data and kept with a priority
# just below the constraints, in every later version (the model summariser keeps every Key data item verbatim).
GIVEN = "Given by the user"
_HEADER = "## Summary of messages[{first}] to messages[{last}]"
# Constraints, the identifiers the user gave, the newest reference; then identifiers before lines and sentences (a
# few tokens each, kept verbatim by the model summariser too, and what a next call takes): those people wrote, used
# later or the far span kept (an identifier does not lose its place for being older), those tools printed, times
# and amounts. Then the calls that found something (the far span's with the span's; a line is written in place of
# the identifiers it shows, cut to fit when it does not), the brief's sentences, the calls' other details, and last
# the calls that found nothing, the older references (reachable through the newest) and the far overview.
_PRIORITY = ("User constraints", "Said in passing", GIVEN, "References", "Key data", "Printed", "Minor data",
             "Tool calls", "Open", "Decisions", "Done", "Said", "Details", "Minor calls", "Older references", "Earlier")
_NEWEST_FIRST = (GIVEN, "References", "Older references")  # chosen from the newest; the others by salience
# Items picked apart and written under another section's heading: after its own items, or before them (the calls of
# the far span came before the span's).
SHOWN = {"Earlier data": "Key data", "Printed": "Key data", "Minor data": "Key data",
         "Said in passing": "User constraints", "Said": "Done", "Earlier calls": "Tool calls", GIVEN: "Key data"}
_SHOWN_BEFORE = frozenset({"Earlier calls", GIVEN})
_CALLS = ("Earlier calls", "Tool calls")
DATA = ("Key data", "Earlier data", "Printed", "Minor data")  # not GIVEN: listed whatever else shows it
# The most of the budget these may take: older references are reachable through the newest, and what tools printed
# (with the times and amounts) would leave no room for the lines that say what the identifiers are, nor the brief.
_SHARE = {"References": 0.25, "Printed": 0.5}
_SHARED = {"Minor data": "Printed"}  # the times and amounts count in the printed identifiers' share
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


# One step of filling a summary: an item of a section, and the text it is written as (a richer form of a call's).
Step = tuple[str, int, str]


def queue_items(picked: Mapping[str, Sequence[str]], richer: Mapping[int, str],
                salience: Callable[[str], int]) -> list[Step]:
    """Every item in the order it is tried: _PRIORITY's steps, within a step the newest first or the most salient
    (the highest `salience`: in a summary, sharing the most terms and values with what comes after the span; ties:
    the most recent)."""
    def items(*names: str) -> list[tuple[str, int]]:  # the far span's first: said or made before the span's
        return [(name, i) for name in names for i in range(len(picked[name]))]

    calls = items(*_CALLS)
    older = len(picked["References"]) - 1
    steps = {"Key data": items("Earlier data", "Key data"),
             "Tool calls": [(n, i) for n, i in calls if informative(picked[n][i])],
             "Minor calls": [(n, i) for n, i in calls if not informative(picked[n][i])],
             "Details": [("Tool calls", i) for i in richer],
             "References": items("References")[older:], "Older references": items("References")[:older]}
    queue: list[Step] = []
    for step in _PRIORITY:
        listed = steps[step] if step in steps else items(step)
        order = list(range(len(listed)))
        if step in _NEWEST_FIRST:
            order.reverse()
        elif step not in ("User constraints", "Said in passing"):
            weight = [salience(picked[n][i]) for n, i in listed]
            order.sort(key=lambda k: (-weight[k], -k))
        queue += [(n, i, richer[i] if step == "Details" else picked[n][i]) for n, i in (listed[k] for k in order)]
    return queue


def pack(picked: dict[str, list[str]], queue: Sequence[Step], counter: TokenCounter, budget: int, first: int,
         last: int, dropped: tuple[tuple[str, str], ...], within: Callable[[str, str], bool]) -> Summary:
    """The queue's items while they fit, in two passes (a call line written frees the identifiers it shows:
    `within(value, text)` says whether the line's text holds the value whole); each section written in its own
    order."""
    header = heading(first, last)
    spent = counter.count(header + "\n")
    chosen: dict[str, dict[int, str]] = {name: {} for name in picked}
    heads = dict.fromkeys(SECTIONS, 0)  # items written under each heading
    taken: Counter[str] = Counter()  # tokens per share of the budget (_SHARE)
    lines = ""  # the call lines written: an identifier they show is not listed again

    def cost(name: str, text: str) -> int:
        shown = SHOWN.get(name, name)
        return counter.count(f"- {text}\n") + (0 if heads[shown] else counter.count(f"### {shown}\n"))

    def freed(name: str, text: str) -> tuple[list[tuple[str, int, int]], int]:
        """The identifiers listed that a call line shows, their tokens, and all they free with the heading."""
        gone = [(data, j, counter.count(f"- {item}\n")) for data in (DATA if name in _CALLS else ())
                for j, item in chosen[data].items() if within(item, text)]
        heading_too = bool(gone) and heads["Key data"] == len(gone)
        return gone, sum(g[2] for g in gone) + (counter.count("### Key data\n") if heading_too else 0)

    def take(name: str, i: int, text: str, tokens: int) -> None:
        nonlocal spent, lines
        gone, back = freed(name, text)
        for data, j, item_tokens in gone:
            del chosen[data][j]
            taken[_SHARED.get(data, data)] -= item_tokens
        heads["Key data"] -= len(gone)
        heads[SHOWN.get(name, name)] += i not in chosen[name]
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
            if text != picked[name][i] or (name in DATA and within(text, lines)):
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
    for extra, name in SHOWN.items():
        before, after = (kept.get(extra, ()), ()) if extra in _SHOWN_BEFORE else ((), kept.get(extra, ()))
        shown[name] = [*before, *shown[name], *after]
    return shown


def _render(header: str, kept: Mapping[str, Sequence[str]]) -> str:
    shown = _shown(kept)
    return "\n".join([header, *(section(name, shown[name]) for name in SECTIONS if shown[name])])
