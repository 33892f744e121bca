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
_NOUN_PHRASE = r"(?P<thing>[a-z][a-z-]*(?:\s+(?:and|&)\s+[a-z][a-z-]*|\s+[a-z][a-z-]*){0,3})"
_FOR = re.compile(r"\bbudget\b[^.;]*?\bfor\s+" + _NOUN_PHRASE, re.IGNORECASE)
_MONEY = r"(?:[$€£¥]\s?\d[\d,.]*k?|\d[\d,.]*\s?(?:k|dollars?|euros?|pounds?|bucks|quid|usd|eur|gbp|yuan|rmb|cny)\b)"
_MONEY_FOR = re.compile(_MONEY + r"\s+(?:for|on)\s+" + _NOUN_PHRASE, re.IGNORECASE)
# "a laptop for no more than 1.5k dollars": the thing comes before the money it may cost.
_THING_FOR_MONEY = re.compile(r"\b(?:a|an|the|my|our)\s+" + _NOUN_PHRASE + r"\s+(?:for|under|below|that costs?)\s+"
                              r"(?:no more than\s+|not more than\s+|less than\s+|at most\s+|up to\s+|under\s+|"
                              r"about\s+|around\s+|max\s+)?" + _MONEY, re.IGNORECASE)
# "the total cost below 2,000 euros" names what is limited, not a thing it is for.
_MONEY_WORDS = frozenset(
    "cost costs price prices spend spending expense expenses bill amount money total sum thing things stuff "
    "everything lot".split())
# Where the noun phrase after "for" / "on" stops: a verb, a preposition or a number says the thing has ended.
_THING_END = frozenset(
    "is are was were be been will would should must can could has have had of at to under below around about "
    "over within up no not than max maximum tops per each every with in on by from so but or if".split())
_BEFORE_ZH = re.compile(r"([\u4e00-\u9fff]+?)的?(?:总)?预算")
# Leading words before 预算 that say whose, when or how much: stripped until a thing is left (or nothing).
_GENERIC_ZH = ("我们的", "我的", "我们", "你的", "我", "你", "他", "她", "这次", "本次", "这回", "这个月", "下个月",
               "本月", "这个", "那个", "目前",
               "现在", "大概", "每个月", "每月", "每年", "每周", "每天", "月度", "年度", "整体", "全部", "总", "的")
_BUYING_ZH = re.compile(r"(?:买|订|租|选|找)(?:个|一个|一台|一部|一件)?(?P<thing>[\u4e00-\u9fff]{1,4}?)的话")
_CUE = re.compile(r"\bbudget\b|预算", re.IGNORECASE)


def budget_subject(clause: str) -> str:
    """The key subject of a budget stated in `clause`: "budget for <thing>", or "budget" when it names none."""
    if not (_CUE.search(clause) or _MONEY_FOR.search(clause) or _THING_FOR_MONEY.search(clause)
            or _BUYING_ZH.search(clause)):
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
            return " ".join(_singular(word) for word in kept[-2:])
    for pattern in (_FOR, _MONEY_FOR, _THING_FOR_MONEY):
        found = pattern.search(clause)
        if found is not None:
            thing = _head(found.group("thing"))
            if thing:
                return thing
    return None


def _head(phrase: str) -> str | None:
    # "the new keyboard is around" -> "keyboard"; "the whole party" -> "party"; "flights and hotels" stays whole.
    words: list[str] = []
    for word in phrase.lower().split():
        if word in _THING_END:
            break
        words.append(word)
    while words and words[0] in _GENERIC_EN:
        words.pop(0)
    if not words or words[0] in _FOR_NOTHING or words[-1] in _MONEY_WORDS:
        return None
    # One key for "the headphones" and "the headphone budget": a plural names the same thing.
    words = [_singular(word) for word in words]
    return " ".join(words[-3:] if "and" in words or "&" in words else words[-2:])


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "ous")):
        return word[:-3] + "y" if word.endswith("ies") else word[:-1]
    return word


def _thing_zh(clause: str) -> str | None:
    bought = _BUYING_ZH.search(clause)  # "买耳机的话顶多一千"
    if bought is not None:
        return bought.group("thing")
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
