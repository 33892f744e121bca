"""Parse numerals written in digits, English words or Chinese characters into plain decimal strings."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["format_number", "parse_number"]

_ZH_DIGITS = {
    "零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "贰": 2, "两": 2, "俩": 2, "三": 3, "叁": 3,
    "四": 4, "肆": 4, "五": 5, "伍": 5, "六": 6, "陆": 6, "七": 7, "柒": 7, "八": 8, "捌": 8,
    "九": 9, "玖": 9,
}
_ZH_SMALL_UNITS = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1000, "仟": 1000}
_ZH_BIG_UNITS = {"万": 10_000, "萬": 10_000, "亿": 100_000_000}

_MULTIPLIERS = {
    "k": 1_000, "thousand": 1_000, "grand": 1_000, "m": 1_000_000, "million": 1_000_000,
    "mm": 1_000_000, "bn": 1_000_000_000, "billion": 1_000_000_000, "w": 10_000,
    **_ZH_SMALL_UNITS, **_ZH_BIG_UNITS,
}

_EN_ONES = {
    "zero": 0, "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "couple": 2, "dozen": 12,
}
_EN_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}

_DIGITS_HEAD = re.compile(r"^(\d[\d,]*(?:\.\d+)?)\s*([a-z]+|[十拾百佰千仟万萬亿])?\s*(.*)$", re.IGNORECASE)


def parse_number(text: str) -> Decimal | None:
    """Parse '2,000', '1.5k', '3万', '两千五', 'five hundred' into a Decimal, or None if it is no number."""
    cleaned = text.strip().lower()
    if not cleaned:
        return None
    if cleaned[0].isdigit():
        return _parse_digits(cleaned)
    if all(ch in _ZH_DIGITS or ch in _ZH_SMALL_UNITS or ch in _ZH_BIG_UNITS for ch in cleaned):
        return _parse_chinese(cleaned)
    return _parse_english(cleaned)


def format_number(value: Decimal) -> str:
    """Render a Decimal without exponent or trailing zeros: 30000, 1.5."""
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def _parse_digits(text: str) -> Decimal | None:
    match = _DIGITS_HEAD.match(text)
    if match is None:
        return None
    head, suffix, rest = match.groups()
    try:
        value = Decimal(head.replace(",", ""))
    except InvalidOperation:
        return None
    if not suffix:
        return value if not rest else None
    multiplier = _MULTIPLIERS.get(suffix)
    if multiplier is None:
        return None
    total = value * multiplier
    if not rest:
        return total
    # Colloquial Chinese: "3万5" means 35000 and "3万5千" means 35000 too.
    tail = _parse_digits(rest) if rest[0].isdigit() else _parse_chinese(rest)
    if tail is None:
        return None
    if len(rest) == 1 and (rest.isdigit() or rest in _ZH_DIGITS) and multiplier >= 100:
        return total + tail * multiplier // 10
    return total + tail


def _parse_chinese(text: str) -> Decimal | None:
    total, section, number = 0, 0, 0
    last_unit, after_zero = 0, False
    for ch in text:
        if ch in _ZH_DIGITS:
            number = _ZH_DIGITS[ch]
            after_zero = ch in "零〇"
            continue
        if ch in _ZH_SMALL_UNITS:
            unit = _ZH_SMALL_UNITS[ch]
            section += (number or 1) * unit
        elif ch in _ZH_BIG_UNITS:
            unit = _ZH_BIG_UNITS[ch]
            total += (section + number) * unit
            section = 0
        else:
            return None
        number, last_unit, after_zero = 0, unit, False
    if number and last_unit >= 100 and not after_zero and text[-2] not in "零〇":
        # A trailing digit after a unit is shorthand for the next lower unit: 两千五 = 2500.
        number *= last_unit // 10
    return Decimal(total + section + number)


def _parse_english(text: str) -> Decimal | None:
    words = [w for w in re.split(r"[\s-]+", text) if w and w != "and"]
    if not words or (words[0] in {"a", "an"} and len(words) == 1):
        return None
    total, current, seen = 0, 0, False
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else ""
        if word in {"a", "an"} and following not in _EN_SCALES:
            continue
        if word in _EN_ONES:
            current += _EN_ONES[word]
        elif word == "hundred":
            current = (current or 1) * 100
        elif word in _EN_SCALES:
            total += (current or 1) * _EN_SCALES[word]
            current = 0
        elif word == "of" and seen:
            continue
        else:
            return None
        seen = True
    return Decimal(total + current)
