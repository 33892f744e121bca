"""An extractive summary of a span of history: a brief the next turn can work from, never a paraphrase.

Fixed sections (seed 003 §3.3), in this order: *User constraints* (given by the caller: the facts in force the
constraints block does not already state, never rewritten or cut, and what the user said as a rule in passing),
*Open* (pending steps, errors), *Decisions*, *Done* (steps and their results), *Key data* (identifiers verbatim,
memory.context.identifiers), *Earlier* (the far span: a short overview of what an earlier version of the summary
held) and *References* (the task items holding the whole text). Sentences are picked by cue words in English and
Chinese; no model is called.

Forget first (seed 001 §3.6): before anything is picked, a tool call that failed and was tried again later is left
out, an error or pending step that a later sentence reports fixed or done is left out, and so is an option the
conversation rejected; each is listed in `dropped` with its reason. Then, within `budget`: constraints first, then
references, then the other sections' items, the most salient first (sharing the most terms with what comes after
the span: the later turns and the query), the far overview last; each section is written in the order it was
said. The summary fits `budget` exactly as the tokenizer counts it; only the constraints and the newest reference may
take it over.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memory.bullet import clean
from memory.context.identifiers import Identifier, identifiers
from memory.context.messages import Message
from memory.text import remembered
from memory.text.sentences import split_sentences
from memory.tokens import TokenCounter

__all__ = ["SECTIONS", "Summary", "forget", "heading", "section", "summarise", "terms"]

SECTIONS = ("User constraints", "Open", "Decisions", "Done", "Key data", "Earlier", "References")

# Cue words per kind: single words, phrases (matched on word boundaries) and Chinese words (matched anywhere). Kept
# as data rather than one regex alternation: a set lookup per word is what lets a 20k-token span be summarised in a
# few tens of milliseconds (bench/compaction_trace.py times it).
_CUE_WORDS: dict[str, tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]] = {
    "Open": (frozenset("todo next pending remaining unresolved error failed fails failing exception blocked".split()),
             ("to do", "still need to", "still have to", "not yet", "waiting for"),
             ("待办", "下一步", "还需要", "尚未", "还没", "未完成", "报错", "错误", "失败", "异常", "卡住")),
    "Decisions": (frozenset("decided chose choose picked".split()),
                  ("decide to", "we'll use", "i'll use", "let's use", "let's go with", "going with", "settled on",
                   "instead of", "rather than", "will use"),
                  ("决定", "采用", "选用", "改用", "就用", "选择了", "不用")),
    "Done": (frozenset("done finished completed created wrote written saved added fixed updated deployed merged "
                       "committed installed passed succeeded generated uploaded sent resolved".split()),
             (),
             ("已完成", "完成了", "已写入", "写好了", "已保存", "已修复", "修好了", "已部署", "已提交", "已生成",
              "已上传", "通过了", "解决了", "已解决")),
    "Rejected": (frozenset(["rejected"]),
                 ("ruled out", "won't use", "will not use", "not going with", "scrap that idea", "scrap the idea",
                  "scrapped that idea", "scrapped the idea", "dropped the idea"),
                 ("否决", "放弃了", "不考虑", "排除了")),
}
_CUE_WORDS = {kind: (single, tuple(f" {p} " for p in phrases), chinese)  # phrases padded: whole words only
              for kind, (single, phrases, chinese) in _CUE_WORDS.items()}
_SECTION_CUES = ("Open", "Decisions", "Done")  # a sentence with several goes to the first
_NOT_LETTERS = re.compile(r"[^a-z']+")
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
# A tool result that reports its own failure: its call, tried again later, says nothing the retry does not.
_FAILED_RESULT = re.compile(
    r"\b(error|exception|traceback|failed|failure|not found|timed? ?out|denied|invalid)\b|错误|失败|异常|超时",
    re.IGNORECASE)
_HEADER = "## Summary of messages[{first}] to messages[{last}]"
_MAX_SENTENCE_CHARS = 400  # a longer "sentence" is pasted material, not a step
_FAILURE_HEAD = 300  # a failure shows in the first characters of a result, not deep in its data
# Identifiers deep in a long tool result (rows of data) are read through the span's reference, not listed.
_TOOL_SCAN_CHARS = 4000
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,}|[\u4e00-\u9fff]{2,}")
# Words that carry the cues or no topic: sharing them says nothing about two sentences being about one thing.
_STOP = frozenset(
    "that this with from have been were will would should could then than them they there their what when which "
    "into also just only about after before error errors failed fails failing fixed done next need still test "
    "tests pending finished completed created wrote written saved added updated now again".split())
_PRIORITY = ("User constraints", "Said in passing", "References", "Open", "Decisions", "Done", "Key data", "Said",
             "Earlier", "Earlier data")


# Items picked apart and written under another section's heading.
_SHOWN = {"Earlier data": "Key data", "Said in passing": "User constraints", "Said": "Done"}


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


def _cues(text: str) -> set[str]:
    """The cue kinds a sentence holds (section names, and "Rejected")."""
    low = text.lower().replace("\u2019", "'")
    spaced = " " + _NOT_LETTERS.sub(" ", low) + " "
    words = set(spaced.split())
    han = bool(text) and max(text) >= "\u4e00"
    return {kind for kind, (single, phrases, chinese) in _CUE_WORDS.items()
            if not single.isdisjoint(words) or any(p in spaced for p in phrases)
            or (han and any(c in text for c in chinese))}


def _prose(text: str) -> str:
    """The text without its fenced code blocks, and nothing of a JSON payload: a brief quotes no code or data
    (it is behind the span's reference, and its identifiers are in Key data)."""
    if text.lstrip().startswith(("{", "[")):
        return ""
    return _FENCED.sub(" ", text) if "```" in text else text


@functools.lru_cache(maxsize=16384)
def _identifiers(text: str) -> tuple[Identifier, ...]:
    return identifiers(text)


@functools.lru_cache(maxsize=16384)
def _sentences(text: str) -> tuple[str, ...]:
    """split_sentences, remembered: the messages after one compaction's span are the next one's."""
    return tuple(split_sentences(text))


@functools.lru_cache(maxsize=65536)
def terms(text: str) -> frozenset[str]:
    """Content terms of a text: longer words (lower-cased) and CJK bigrams, without the cue and filler words."""
    out: set[str] = set()
    for match in _WORD.finditer(text):
        word = match.group(0)
        if word[0] >= "\u4e00":
            out.update(word[i:i + 2] for i in range(len(word) - 1))
        else:
            low = word.lower()
            if low not in _STOP:
                out.add(low)
    return frozenset(out)


def forget() -> None:
    """Clear the sentences, identifiers and terms remembered from messages (memory.text.remembered)."""
    terms.cache_clear()
    _identifiers.cache_clear()
    _sentences.cache_clear()


def summarise(messages: Sequence[Message], counter: TokenCounter, budget: int, *,
              constraints: Sequence[str] = (), instructions: Sequence[str] = (), references: Sequence[str] = (),
              prior: Mapping[str, Sequence[str]] | None = None, later: Sequence[Message] = (),
              query: str = "", first: int | None = None, last: int | None = None) -> Summary:
    """The summary of `messages` (a span of history) within `budget` tokens; constraints are never cut.

    `instructions` are the user's rules the fact rules did not recognise: under *User constraints* too, after the
    constraints, and kept before anything else while they fit.

    `prior` is the sections of the summary this one extends (the far span): its open items stay open unless the
    span closes them, its decisions and steps become the *Earlier* overview, its key data and references are kept
    after the span's own. `later` (the messages after the span) and `query` decide salience and what was retried
    or fixed later. `first` and `last` are the messages the summary covers (by default the span's; `first` is the
    prior's when there is one).
    """
    first = (messages[0].index if messages else -1) if first is None else first
    last = (messages[-1].index if messages else -1) if last is None else last
    dropped: list[tuple[str, str]] = []
    kept_messages = _forget_retried(messages, later, dropped)
    sentences: list[tuple[str, str]] = []  # (section, sentence) in the order said
    statements: list[str] = []  # what the assistant said that no cue places: answers given, findings
    for message in kept_messages:
        if message.role == "tool":
            continue
        for sentence in _sentences(_prose(message.content)):
            if len(sentence) > _MAX_SENTENCE_CHARS:
                continue
            text = clean(sentence)
            cues = _cues(text)
            if "Rejected" in cues and "Decisions" not in cues:
                dropped.append((text, "rejected option"))
                continue
            name = next((n for n in _SECTION_CUES if n in cues), None)
            if name is not None:
                sentences.append((name, text))
            elif message.role == "assistant":
                statements.append(text)
    later_done = [clean(s) for m in later if m.role != "tool" for s in _sentences(m.content)
                  if len(s) <= _MAX_SENTENCE_CHARS and "Done" in _cues(s)]
    picked: dict[str, list[str]] = {name: [] for name in (*SECTIONS, *_SHOWN)}
    picked["User constraints"] = list(dict.fromkeys(clean(c) for c in constraints if c.strip()))
    picked["Said in passing"] = [clean(i) for i in instructions if clean(i) not in set(picked["User constraints"])]
    picked["References"] = list(dict.fromkeys([*(prior or {}).get("References", ()), *references]))
    done_after: list[list[str]] = []  # for each sentence, the Done sentences said after it
    dones = [t for n, t in sentences if n == "Done"]
    seen_done = 0
    for name, _ in sentences:
        if name == "Done":
            seen_done += 1
        done_after.append(dones[seen_done:] + later_done)
    for (name, text), after in zip(sentences, done_after, strict=True):
        if name == "Open":
            closer = _closed_by(text, after)
            if closer is not None:
                dropped.append((text, f"done later: {closer}"))
                continue
        picked[name].append(text)
    if prior:
        span_done = dones + later_done
        for item in prior.get("Open", ()):
            closer = _closed_by(item, span_done)
            if closer is not None:
                dropped.append((item, f"done later: {closer}"))
            else:
                picked["Open"].insert(0, item)
        picked["Earlier"] = [*prior.get("Earlier", ()), *prior.get("Decisions", ()), *prior.get("Done", ())]
        picked["Earlier data"] = list(prior.get("Key data", ()))
    # The identifiers the people wrote, and those a tool printed that the conversation uses later; the rest of a
    # tool's output is data, read through the span's reference.
    used = "\n".join([query, *(m.content for m in later if m.role != "tool")])
    said = [i.text for m in kept_messages if m.role != "tool" for i in identifiers(m.content)
            if i.kind != "number" or i.text in used]  # a bare number ("question 12") is kept when used again
    printed = [i.text for m in kept_messages if m.role == "tool" for i in identifiers(m.content[:_TOOL_SCAN_CHARS])
               if i.text in used]
    picked["Key data"] = list(dict.fromkeys([*said, *printed]))
    # The same statement made again ("Answer 7: ..." / "Answer 8: ...") is kept once, its latest wording.
    latest = {terms(t): t for t in statements}
    picked["Said"] = [t for t in statements if latest.get(terms(t)) == t and len(terms(t)) >= 2]
    for name in picked:
        picked[name] = list(dict.fromkeys(picked[name]))
    picked["Earlier data"] = [d for d in picked["Earlier data"] if d not in set(picked["Key data"])]
    salient = terms(query) | frozenset().union(*(terms(m.content) for m in later if m.role != "tool"))
    return _fit(picked, counter, budget, first, last, salient, tuple(dict.fromkeys(dropped)))


def _forget_retried(messages: Sequence[Message], later: Sequence[Message],
                    dropped: list[tuple[str, str]]) -> list[Message]:
    """The span without the tool calls whose results failed and whose tool was called again afterwards."""
    everything = [*messages, *later]
    calls_at: dict[str, list[int]] = {}
    for position, message in enumerate(everything):
        for call in message.tool_calls:
            calls_at.setdefault(call.name, []).append(position)
    results = {m.tool_call_id: m for m in messages if m.role == "tool"}
    gone: set[int] = set()
    for position, message in enumerate(messages):
        if not message.tool_calls:
            continue
        answers = [results.get(c.id) for c in message.tool_calls]
        if not all(a is not None and _FAILED_RESULT.search(a.content[:_FAILURE_HEAD]) for a in answers):
            continue
        if all(any(p > position for p in calls_at.get(c.name, ())) for c in message.tool_calls):
            names = ", ".join(c.name for c in message.tool_calls)
            gone.add(message.index)
            gone |= {a.index for a in answers if a is not None}
            dropped.append((f"messages[{message.index}]: {names}", "failed, tried again later"))
    return [m for m in messages if m.index not in gone]


def _closed_by(item: str, done: Sequence[str]) -> str | None:
    """The first later Done sentence that is about the same thing as an open item: a shared identifier, or two
    shared content terms."""
    ids = {i.text for i in _identifiers(item) if i.kind != "number"}
    words = terms(item)
    for sentence in done:
        if ids & {i.text for i in _identifiers(sentence)} or len(words & terms(sentence)) >= 2:
            return sentence
    return None


def _fit(picked: dict[str, list[str]], counter: TokenCounter, budget: int, first: int, last: int,
         salient: frozenset[str], dropped: tuple[tuple[str, str], ...]) -> Summary:
    """Lines in priority order while they fit, the most salient first; each section written in its own order."""
    header = heading(first, last)
    spent = counter.count(header + "\n")
    chosen: dict[str, set[int]] = {name: set() for name in picked}
    opened: set[str] = set()
    for name in _PRIORITY:
        shown = _SHOWN.get(name, name)
        items = picked[name]
        order: Sequence[int] = range(len(items))
        limit = budget
        if name == "References":
            # The newest first, within a quarter of the budget: each span's item names the one before it, so the
            # older ones stay reachable through the newest (memory.context.compaction.span_text).
            order, limit = range(len(items) - 1, -1, -1), spent + budget // 4
        elif name not in ("User constraints", "Said in passing"):
            weight = [len(terms(item) & salient) for item in items]
            order = sorted(order, key=lambda i: (-weight[i], -i))  # ties: the most recent first
        for i in order:
            cost = counter.count(f"- {items[i]}\n") + (0 if shown in opened else counter.count(f"### {shown}\n"))
            newest = name == "References" and not chosen[name]  # the link to every compacted message: kept
            if name != "User constraints" and not newest and (spent + cost > budget or spent + cost > limit):
                if name == "References":
                    break  # older ones only through the newer
                continue
            chosen[name].add(i)
            opened.add(shown)
            spent += cost
    kept = {name: [item for i, item in enumerate(picked[name]) if i in chosen[name]] for name in picked}
    for extra, shown in _SHOWN.items():
        kept[shown] = [*kept[shown], *kept.pop(extra)]
    text = _render(header, kept)
    # Line costs add up exactly for lines that start with "-" or "#" after a newline; the whole is counted to be
    # sure, and the lowest-priority line dropped while over.
    tokens = counter.count(text)
    # The constraints themselves are never cut, nor the newest reference.
    floor = {"User constraints": len(picked["User constraints"]), "References": min(1, len(picked["References"]))}
    for name in ("Earlier", "Key data", "Done", "Decisions", "Open", "References", "User constraints"):
        while tokens > budget and len(kept[name]) > floor.get(name, 0):
            kept[name].pop(0 if name == "References" else -1)
            text = _render(header, kept)
            tokens = counter.count(text)
    return Summary(text, tokens, {n: tuple(kept[n]) for n in SECTIONS}, first, last, dropped)


def heading(first: int, last: int) -> str:
    """A summary's first line: the messages it covers."""
    return _HEADER.format(first=first, last=last)


def section(name: str, items: Sequence[str]) -> str:
    """One section of a summary as written: its "### " heading and a "- " line per item (the model summariser
    writes the sections it keeps from the extractive pass the same way)."""
    return "\n".join([f"### {name}", *(f"- {item}" for item in items)])


def _render(header: str, kept: Mapping[str, Sequence[str]]) -> str:
    return "\n".join([header, *(section(name, kept[name]) for name in SECTIONS if kept.get(name))])


remembered.register(forget)
