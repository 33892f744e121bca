"""Cue words that place a sentence in an extractive summary's sections (Open, Decisions, Done) or mark an option
the conversation rejected, in English and Chinese; and the content words that tell what a sentence is about."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["SECTION_CUES", "cues", "place", "words"]

# Cue words per kind: single words, phrases (matched on word boundaries) and Chinese words (matched anywhere). Kept
# as data rather than one regex alternation: a set lookup per word is what keeps summarising a long span fast
# (bench/compaction_trace.py times it).
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
SECTION_CUES = ("Open", "Decisions", "Done")  # a sentence with several goes to the first
_NOT_LETTERS = re.compile(r"[^a-z']+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]{3,}|[\u4e00-\u9fff]{2,}")
# Words that carry the cues or no topic: sharing them says nothing about two sentences being about one thing.
_STOP = frozenset(
    "that this with from have been were will would should could then than them they there their what when which "
    "into also just only about after before error errors failed fails failing fixed done next need still test "
    "tests pending finished completed created wrote written saved added updated now again".split())


def cues(text: str) -> set[str]:
    """The cue kinds a sentence holds (section names, and "Rejected")."""
    low = text.lower().replace("\u2019", "'")
    spaced = " " + _NOT_LETTERS.sub(" ", low) + " "
    found = set(spaced.split())
    han = bool(text) and max(text) >= "\u4e00"
    return {kind for kind, (single, phrases, chinese) in _CUE_WORDS.items()
            if not single.isdisjoint(found) or any(p in spaced for p in phrases)
            or (han and any(c in text for c in chinese))}


def place(said: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """(role, sentence) pairs in the order said, placed by their cues: (section, sentence) for those a section's
    cue places, the assistant's other sentences (answers given, findings), and the options the conversation
    rejected (a rejection that is not also a decision)."""
    placed: list[tuple[str, str]] = []
    statements: list[str] = []
    rejected: list[str] = []
    for role, sentence in said:
        kinds = cues(sentence)
        name = next((n for n in SECTION_CUES if n in kinds), None)
        if "Rejected" in kinds and "Decisions" not in kinds:
            rejected.append(sentence)
        elif name is not None:
            placed.append((name, sentence))
        elif role == "assistant":
            statements.append(sentence)
    return placed, statements, rejected


def words(text: str) -> frozenset[str]:
    """Content words of a text: longer words (lower-cased) and CJK bigrams, without the cue and filler words."""
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
