"""Normalise captured phrases (objects, numbers, units, languages, dates) and build stable fact keys."""

from __future__ import annotations

import re
from collections.abc import Mapping

from memory.facts.numbers import format_number, parse_number
from memory.facts.rules import Markers, RuleSet

__all__ = ["agree", "clean_object", "fold", "normalize_date", "normalize_group", "normalize_key", "strip_edges"]

_SUFFIX = re.compile(r"_\d+$")
_EDGE_PUNCT = " \t\n.,;:!?~\"'()[]…-—*。、「」『』《》【】·"
_KEY_ARTICLES = re.compile(r"^(?:(?:the|a|an|my|your|our|their|his|her|its)\s+)+")
_KEY_PARTICLES = re.compile(r"(?<!目)的(?![确话])")
_KEY_TRAILING = re.compile(r"[了吧呢啊呀哦嘛啦哈]+$")
_CJK_SPACE = re.compile(r"\s*([\u3400-\u9fff])\s*")
_LIST_SPLIT = re.compile(r"\s*(?:\band\b|\bor\b|,|、|和|与|及|跟|或|/)\s*", re.IGNORECASE)
_COLUMN_LETTER = re.compile(r"(?<![A-Za-z])([A-Za-z])(?![A-Za-z])")
_ZH_WEEKDAY = re.compile(r"^(下下|下|这|本|上)?个?(?:周|星期|礼拜)(.)$")
_ZH_DATE = re.compile(r"^(?:(\d{4})年)?([\d一二三四五六七八九十]{1,3})月([\d一二三四五六七八九十]{1,3})[日号]?$")
_EN_DAY_MONTH = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([a-z]+)\.?(.*)$")
_ORDINAL = re.compile(r"(?<!the )\b(\d{1,2})(?:st|nd|rd|th)\b")  # "Friday the 14th" keeps its ordinal
_ZH_PREFIX = {"下下": "the week after next ", "下": "next ", "这": "this ", "本": "this ", "上": "last "}
_ONE_PLURAL = re.compile(r"(?<![\d.,])\b1 ([a-z]+?)(ie)?s\b")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")


def fold(text: str) -> str:
    """Lower-case and collapse whitespace."""
    return " ".join(text.lower().split())


def agree(value: str) -> str:
    """Make a unit agree with the number one: '1 pages' becomes '1 page', '1 entries' becomes '1 entry'."""
    return _ONE_PLURAL.sub(lambda m: f"1 {m.group(1)}{'y' if m.group(2) else ''}", value)


def normalize_key(kind: str, subject: str) -> str:
    """Build the stable key 'kind:subject': lower-case, articles and Chinese particles stripped, spaces collapsed."""
    text = fold(subject).strip(_EDGE_PUNCT)
    text = _KEY_ARTICLES.sub("", text)
    text = _KEY_TRAILING.sub("", _KEY_PARTICLES.sub("", text))
    text = _CJK_SPACE.sub(r"\1", text).strip(_EDGE_PUNCT)
    return f"{kind}:{text}"


def strip_edges(text: str, start: int, end: int, markers: Markers) -> tuple[int, int]:
    """Shrink [start, end) past lead-in words ('please', 'actually', '请'), trailers ('now', '吧') and emoji."""
    changed = True
    while changed and start < end:
        changed = False
        while start < end and (text[start] in _EDGE_PUNCT or _EMOJI.match(text[start])):
            start, changed = start + 1, True
        while end > start and (text[end - 1] in _EDGE_PUNCT or _EMOJI.match(text[end - 1])):
            end, changed = end - 1, True
        if markers.lead_in is not None:
            match = markers.lead_in.match(text, start, end)
            if match is not None and match.end() > start:
                start, changed = match.end(), True
        if markers.trailer is not None:
            match = markers.trailer.search(text, start, end)
            if match is not None and match.start() < end and match.start() > start:
                end, changed = match.start(), True
    return start, end


# Emoji and their joiners at a clause's edge say how the user feels, not what they ask ("我超爱宫崎骏的电影🥰").
_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0E\uFE0F\u200D]")
_DATE_LETTERS = re.compile(r"[ymdYMD/.\- ]+")
_DATE_EXAMPLE = re.compile(r"\d{4}(?P<sep>[-/.])\d{1,2}(?P=sep)\d{1,2}")


def normalize_group(name: str, raw: str, rules: RuleSet, lang: str) -> str | None:
    """Normalise one captured group by its base name; None means the capture is unusable."""
    base = _SUFFIX.sub("", name)
    markers = rules.markers[lang]
    vocab = rules.vocab
    # A '<base>_stop' vocabulary table lists captures that only look like values ("no problem", "call me later").
    stop = vocab.get(f"{base}_stop")
    if stop is not None and fold(raw).strip(_EDGE_PUNCT) in stop:
        return None
    if base == "number":
        value = parse_number(raw)
        return format_number(value) if value is not None else None
    if base == "upto":  # the upper end of a range, written after the lower one ("300-400 USD")
        value = parse_number(raw)
        return "-" + format_number(value) if value is not None else None
    if base == "currency":
        return _lookup(vocab, "currency", raw) or fold(raw).upper()
    if base == "unit":
        return _lookup(vocab, "unit", raw) or _plural(fold(raw))
    if base in {"lang", "langs"}:
        names = [_lookup(vocab, "language", part) for part in _LIST_SPLIT.split(raw.strip()) if part]
        return " and ".join(n for n in names if n) if names and all(names) else None
    if base == "date":
        return normalize_date(raw, vocab)
    if base in {"object", "subject"}:
        cleaned = clean_object(raw, markers)
        return None if cleaned is None or (stop is not None and fold(cleaned) in stop) else cleaned
    if base == "columns":
        letters = [str(letter).upper() for letter in _COLUMN_LETTER.findall(raw)]
        if not letters:
            return None
        if len(letters) == 1:
            return f"column {letters[0]}"
        return "columns " + ", ".join(letters[:-1]) + " and " + letters[-1]
    if base == "datefmt":  # "yyyy-mm-dd" is written in capitals whatever the user typed
        found = _lookup(vocab, base, raw)
        example = _DATE_EXAMPLE.fullmatch(raw.strip())  # "like 2024-03-05": year first is unambiguous
        if example is not None:
            return "YYYY{0}MM{0}DD".format(example.group("sep"))
        return found or (raw.strip().upper() if _DATE_LETTERS.fullmatch(raw.strip()) else _clean_phrase(raw, markers))
    if base in vocab:
        return _lookup(vocab, base, raw) or _clean_phrase(raw, markers)
    return _clean_phrase(raw, markers)


def clean_object(raw: str, markers: Markers) -> str | None:
    """Strip light verbs, articles and particles from an object phrase; None if it only points back ('it', '这个')."""
    text = " ".join(raw.split()).strip(_EDGE_PUNCT)
    if markers.deictic is not None and markers.deictic.search(text):
        return None
    previous = None
    while previous != text:
        # Fillers can uncover a light verb ("在回答里加广告链接") and the other way round.
        previous = text
        if markers.light_verb is not None:
            match = markers.light_verb.match(text)
            if match is not None and match.end() < len(text):
                text = text[match.end():]
        text = _clean_phrase(text, markers)
    if not text or (markers.deictic is not None and markers.deictic.search(text)):
        return None
    return text


def normalize_date(raw: str, vocab: Mapping[str, Mapping[str, str]]) -> str:
    """Turn '周五', 'fri', 'March 5th', '3月5日', '明天' into 'Friday', 'March 5', 'tomorrow'."""
    text = fold(raw).strip(_EDGE_PUNCT)
    words = vocab.get("date", {})
    if text not in words:
        text = text.removeprefix("the ")
    weekdays = vocab.get("weekday", {})
    months = vocab.get("month", {})
    if text in words:
        return words[text]
    zh_weekday = _ZH_WEEKDAY.match(text)
    if zh_weekday and zh_weekday.group(2) in weekdays:
        return _ZH_PREFIX.get(zh_weekday.group(1) or "", "") + weekdays[zh_weekday.group(2)]
    zh_date = _ZH_DATE.match(text)
    if zh_date:
        month, day = parse_number(zh_date.group(2)), parse_number(zh_date.group(3))
        if month is not None and day is not None and 1 <= month <= 12:
            year = f", {zh_date.group(1)}" if zh_date.group(1) else ""
            return f"{_MONTHS[int(month) - 1]} {format_number(day)}{year}"
    day_month = _EN_DAY_MONTH.match(text)
    if day_month and day_month.group(2) in months:
        text = f"{day_month.group(2)} {day_month.group(1)}{day_month.group(3)}"
    text = _ORDINAL.sub(r"\1", text)
    # Digits are weekdays only after 周 ("周5"); in "March 5" they stay days of the month.
    tokens = [_named(t, weekdays, months) for t in text.split()]
    return " ".join(tokens).removeprefix("the ")


def _named(token: str, weekdays: Mapping[str, str], months: Mapping[str, str]) -> str:
    """A weekday or month word by its name ("fri," -> "Friday,"), its trailing comma kept; others as they are."""
    word = token.rstrip(".,")
    end = token[len(word):].replace(".", "")
    if word.isalpha() and word in weekdays:
        return weekdays[word] + end
    return months[word] + end if word in months else token


def _clean_phrase(raw: str, markers: Markers) -> str:
    text = " ".join(raw.split()).strip(_EDGE_PUNCT)
    previous = None
    while previous != text:
        previous = text
        for filler in markers.filler:
            text = filler.sub("", text).strip(_EDGE_PUNCT)
    return " ".join(text.split())


def _lookup(vocab: Mapping[str, Mapping[str, str]], table: str, raw: str) -> str | None:
    return vocab.get(table, {}).get(fold(raw).strip(_EDGE_PUNCT))


def _plural(unit: str) -> str:
    if not unit.isascii() or unit.endswith("s"):
        return unit
    if unit.endswith("y") and unit[-2:-1] not in set("aeiou"):
        return unit[:-1] + "ies"
    return unit + "s"
