"""A question that asks for an amount of money ("how much did I spend on …", "what did the flight cost", "花了多少钱")
favours the chunks that state one ("$12", "450 dollars", "300元").

The words of such a question name the topic (the bike, the workshops) and the act (spend, pay), and both retrievers
find the conversation about the topic; but in it the turn that gives the sum ("I got the helmet for $12") is one
short turn among many that talk about the topic at more length, and the answer is the figure, which no query term
matches. Matching the kind of answer the question wants, not only its words, is what reading comprehension has
always done with "how much" and "when". `amount_boost` scales the fused score of the chunks that state an amount
of money (see memory.experience.boosts); a question that does not ask for one is left as it was.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memory.experience.boosts import boosted
from memory.experience.catalog import ChunkRow
from memory.experience.fuse import Fused

__all__ = ["AmountBoost", "asks_amount", "states_amount"]

# An amount asked for: "how much" or "amount" (not of time or effort) with a word of money in the same question, or
# a noun that is itself an amount ("the price of", "the cost of", "the budget for"); in Chinese 多少 with money
# (多少钱, 花了多少, 费用是多少): the noun alone ("申请费用由谁承担") asks for no sum.
_MONEY_WORDS = (r"money|spen[dt]|spending|costs?|costed|pa(?:y|id)|price[ds]?|earn(?:ed)?|raised?|sav(?:e|ed)|"
                r"charge[ds]?|budget|fees?|rent|salary|worth|dollars?|owe[ds]?|donat(?:e|ed)")
_ASKS = re.compile(
    rf"\b(?:how much|amount)\b(?!\s+(?:of\s+)?(?:time|effort|energy|sleep|weight)\b).*\b(?:{_MONEY_WORDS})\b"
    r"|\bhow many dollars\b|\b(?:price|cost|amount of money|total amount|budget) (?:of|for)\b"
    r"|多少钱|多少(?:元|块|美元|欧元|费用|花费|成本|金额)|(?:花|付|赚|挣|捐|筹)了?多少"
    r"|(?:费用|价格|价钱|预算|工资|租金|花费|成本|金额)(?:是|为|有|一共|总共)?多少",
    re.IGNORECASE,
)
# An amount stated: a currency sign before digits, digits before a currency word, or a Chinese amount in 元 / 块.
_STATES = re.compile(
    r"[$€£¥￥]\s?\d|\b\d[\d,.]*\s?(?:k\s)?(?:dollars?|bucks|usd|eur|euros?|pounds|cents)\b"
    r"|\d\s?(?:万|千)?\s?(?:元|块|美元|欧元|英镑)|[一二两三四五六七八九十百千万]+(?:元|块钱|美元)",
    re.IGNORECASE,
)


def asks_amount(query: str) -> bool:
    """Whether the query asks for an amount of money (see the module's docstring)."""
    return _ASKS.search(query) is not None


def states_amount(text: str) -> bool:
    """Whether the text states an amount of money: "$12", "450 dollars", "€30", "300元", "五十块钱"."""
    return _STATES.search(text) is not None


class AmountBoost:
    """For a query that asks for an amount of money, the chunks that state one scaled by 1 + `weight`
    (`[retrieval] amount_boost`)."""

    def __init__(self, query: str, weight: float) -> None:
        self.span = (1.0, 1.0 + weight) if weight > 0 and asks_amount(query) else (1.0, 1.0)

    def favour(self, fused: list[Fused], rows: Mapping[str, ChunkRow]) -> list[Fused]:
        """`fused` with the chunks that state an amount raised, best first (see boosts.boosted)."""
        return boosted(fused, rows, lambda row: states_amount(row.text), self.span[1])
