"""An extractive summary of a span of history: a brief the next turn can work from, never a paraphrase.

Fixed sections (seed 003 §3.3), in this order: *User constraints* (given by the caller: the facts the rules found
in the span and the pinned ones, never rewritten or cut), *Open* (pending steps, errors), *Decisions*, *Done*
(steps and their results), *Key data* (identifiers verbatim, memory.context.identifiers) and *References* (the
task items holding the whole text). Sentences are picked by cue words in English and Chinese, in the order they
were said; no model is called. The summary fits `budget` tokens: constraints first, then references, then the
other sections' items in the order above while they fit (issue 19 builds compaction on this).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory.bullet import clean
from memory.context.identifiers import identifiers
from memory.context.messages import Message
from memory.text.sentences import split_sentences
from memory.tokens import TokenCounter

__all__ = ["SECTIONS", "Summary", "summarise"]

SECTIONS = ("User constraints", "Open", "Decisions", "Done", "Key data", "References")

_CUES = {
    "Open": re.compile(
        r"\b(todo|to do|next|pending|still (?:need|have) to|remaining|not yet|unresolved|error|failed|fails|failing|"
        r"exception|blocked|waiting for)\b|待办|下一步|还需要|尚未|还没|未完成|报错|错误|失败|异常|卡住",
        re.IGNORECASE),
    "Decisions": re.compile(
        r"\b(decided|decide to|we'll use|i'll use|let's use|let's go with|going with|chose|choose|picked|settled on|"
        r"instead of|rather than|will use)\b|决定|采用|选用|改用|就用|选择了|不用", re.IGNORECASE),
    "Done": re.compile(
        r"\b(done|finished|completed|created|wrote|written|saved|added|fixed|updated|deployed|merged|committed|"
        r"installed|passed|succeeded|generated|uploaded|sent)\b|已完成|完成了|已写入|写好了|已保存|已修复|修好了|已部署|"
        r"已提交|已生成|已上传|通过了", re.IGNORECASE),
}
_HEADER = "## Summary of messages[{first}] to messages[{last}]"
_MAX_SENTENCE_CHARS = 400  # a longer "sentence" is pasted material, not a step


@dataclass(frozen=True)
class Summary:
    """The summary's text, its exact tokens, its items per section and the message range it covers."""

    text: str
    tokens: int
    sections: dict[str, tuple[str, ...]]
    first: int
    last: int


def summarise(messages: Sequence[Message], counter: TokenCounter, budget: int, *,
              constraints: Sequence[str] = (), references: Sequence[str] = ()) -> Summary:
    """The summary of `messages` (a span of history) within `budget` tokens; constraints are never cut."""
    first = messages[0].index if messages else -1
    last = messages[-1].index if messages else -1
    picked: dict[str, list[str]] = {name: [] for name in SECTIONS}
    picked["User constraints"] = list(dict.fromkeys(clean(c) for c in constraints if c.strip()))
    picked["References"] = list(dict.fromkeys(references))
    for message in messages:
        if message.role == "tool":
            continue
        for sentence in split_sentences(message.content):
            if len(sentence) > _MAX_SENTENCE_CHARS:
                continue
            for name, cue in _CUES.items():
                if cue.search(sentence):
                    picked[name].append(clean(sentence))
                    break
    found = [i.text for m in messages for i in identifiers(m.content)]
    picked["Key data"] = list(dict.fromkeys(found))
    for name in ("Open", "Decisions", "Done"):
        picked[name] = list(dict.fromkeys(picked[name]))
    return _fit(picked, counter, budget, first, last)


def _fit(picked: dict[str, list[str]], counter: TokenCounter, budget: int, first: int, last: int) -> Summary:
    """Lines in priority order while they fit; each section's kept items then written in its own order."""
    header = _HEADER.format(first=first, last=last)
    spent = counter.count(header + "\n")
    kept: dict[str, list[str]] = {name: [] for name in SECTIONS}
    opened: set[str] = set()
    order = ["User constraints", "References", "Open", "Decisions", "Done", "Key data"]
    for name in order:
        for item in picked[name]:
            cost = counter.count(f"- {item}\n") + (0 if name in opened else counter.count(f"### {name}\n"))
            if name != "User constraints" and spent + cost > budget:
                continue
            kept[name].append(item)
            opened.add(name)
            spent += cost
    text = _render(header, kept)
    # Line costs add up exactly for lines that start with "-" or "#" after a newline; the whole is counted to be
    # sure, and the lowest-priority line dropped while over.
    tokens = counter.count(text)
    for name in reversed(order[1:]):
        while tokens > budget and kept[name]:
            kept[name].pop()
            text = _render(header, kept)
            tokens = counter.count(text)
    return Summary(text, tokens, {n: tuple(v) for n, v in kept.items()}, first, last)


def _render(header: str, kept: dict[str, list[str]]) -> str:
    lines = [header]
    for name in SECTIONS:
        if kept[name]:
            lines.append(f"### {name}")
            lines.extend(f"- {item}" for item in kept[name])
    return "\n".join(lines)
