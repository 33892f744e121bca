"""Recency: does a query ask about time, and how much an older snippet's score decays."""

from __future__ import annotations

import math
import re
from datetime import datetime

from memory.clock import parse_iso

__all__ = ["age_days", "asks_about_time", "decay"]

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
# Years, dates and time words in English and Chinese; a query with any of them wants old snippets as much as new.
# A number before 年/月/日 is read from where its digits begin only, so a long run of digits is read once.
_TIME_QUERY = re.compile(
    r"\b(1[5-9]\d\d|20\d\d)\b|\b\d{4}-\d{1,2}(-\d{1,2})?\b|\b\d{1,2}/\d{1,2}(/\d{2,4})?\b"
    r"|\b(when|what time|what date|which year|which month|which day|how long ago|ago|yesterday|"
    r"last (year|month|week|time|night|summer|winter|spring|autumn|fall)|"
    r"(first|earliest|latest|most recent) time|in (the )?(past|early|late) \d+s?)\b"
    rf"|\b({_MONTHS})\b"
    r"|什么时候|何时|哪年|哪一年|哪个月|几月|几号|哪天|哪一天|多久|多少年|去年|前年|今年|明年|上个月|上月|"
    r"上周|上星期|昨天|前天|日期|年份|年代|什么时间|(?<!\d)\d+[年月日]",
    re.IGNORECASE,
)


def asks_about_time(query: str) -> bool:
    """True when the query names a date or year or asks when something happened (then no recency decay)."""
    return _TIME_QUERY.search(query) is not None


def age_days(updated_at: str, now: datetime) -> float:
    """Days from `updated_at` to `now` (0 for times in the future)."""
    return max(0.0, (now - parse_iso(updated_at, "updated_at")).total_seconds() / 86400.0)


def decay(updated_at: str, now: datetime, half_life_days: float) -> float:
    """Exponential recency factor in (0, 1]: 1 for now, 0.5 after one half-life."""
    return math.pow(0.5, age_days(updated_at, now) / half_life_days)
