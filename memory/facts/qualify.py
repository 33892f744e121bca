"""What a spending limit is for: "my rent budget is $800" and "预算不超过500元" are two limits, not one.

Every budget rule writes the key `limit:budget`, so each budget a user states replaced the one before, whatever it
was for. The clause usually names the thing: a noun before "budget" ("rent budget", "wedding budget"), a "for ..."
after it ("budget for the trip", "$600 for flights and hotels"), or the words before 预算 ("月租预算",
"这次旅行的预算"). Such a limit gets the key `limit:budget for <thing>`; a budget that names nothing stays
`limit:budget`. Words that only say whose, how much or how often ("my", "total", "monthly", "每月") name nothing.
"""

from __future__ import annotations

import re

__all__ = ["budget_subject"]

_GENERIC_EN = frozenset(
    "a an the my our your his her their its this that these those total overall whole entire max maximum min "
    "minimum monthly weekly daily yearly annual rough current new old tight small big large limited strict "
    "realistic approximate estimated planned set fixed budget per month week year day is was be of".split())
# What "for ..." names when it names no thing.
_FOR_NOTHING = frozenset(
    "this that it now me us you him her them everything all anything something both each month week year day "
    "one".split())
_BEFORE = re.compile(r"((?:[a-z][a-z-]*\s+){1,4})budget\b", re.IGNORECASE)
_FOR = re.compile(r"\bbudget\b[^.;]*?\bfor\s+(?:the\s+|my\s+|our\s+|a\s+|an\s+|this\s+|your\s+)?"
                  r"(?P<thing>[a-z][a-z-]*(?:\s+(?:and|&)\s+[a-z][a-z-]*)?)", re.IGNORECASE)
_MONEY_FOR = re.compile(r"(?:[$€£¥]\s?\d[\d,.]*|\d[\d,.]*\s?(?:k|dollars?|euros?|pounds?|bucks|usd|eur|gbp)\b)"
                        r"\s+for\s+(?:the\s+|my\s+|our\s+|a\s+|an\s+)?"
                        r"(?P<thing>[a-z][a-z-]*(?:\s+(?:and|&)\s+[a-z][a-z-]*)?)", re.IGNORECASE)
_BEFORE_ZH = re.compile(r"([\u4e00-\u9fff]+?)的?(?:总)?预算")
# Leading words before 预算 that say whose, when or how much: stripped until a thing is left (or nothing).
_GENERIC_ZH = ("我们的", "我的", "我们", "你的", "我", "你", "他", "她", "这次", "本次", "这回", "这个", "那个", "目前",
               "现在", "大概", "每个月", "每月", "每年", "每周", "每天", "月度", "年度", "整体", "全部", "总", "的")
_CUE = re.compile(r"\bbudget\b|预算", re.IGNORECASE)


def budget_subject(clause: str) -> str:
    """The key subject of a budget stated in `clause`: "budget for <thing>", or "budget" when it names none."""
    if not _CUE.search(clause) and not _MONEY_FOR.search(clause):
        return "budget"
    thing = _thing_en(clause) or _thing_zh(clause)
    return f"budget for {thing}" if thing else "budget"


def _thing_en(clause: str) -> str | None:
    before = _BEFORE.search(clause)
    if before is not None:
        words = before.group(1).lower().split()
        kept: list[str] = []
        for word in reversed(words):
            if word in _GENERIC_EN:
                break
            kept.insert(0, word)
        if kept:
            return " ".join(kept[-2:])
    for pattern in (_FOR, _MONEY_FOR):
        found = pattern.search(clause)
        if found is not None:
            thing = found.group("thing").lower()
            if thing.split()[0] not in _FOR_NOTHING:
                return " ".join(thing.split())
    return None


def _thing_zh(clause: str) -> str | None:
    found = _BEFORE_ZH.search(clause)
    if found is None:
        return None
    thing = found.group(1)
    changed = True
    while thing and changed:
        changed = False
        for word in _GENERIC_ZH:
            if thing.startswith(word):
                thing, changed = thing[len(word):], True
                break
    return thing or None
