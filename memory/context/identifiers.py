"""Identifiers in conversation text, verbatim: what a summary of compacted turns must never paraphrase.

File paths, URLs, e-mail addresses, ids (hex digests, UUIDs, keys like `t-42/r3`, issue and ticket numbers),
versions, numbers with their unit or currency, dates and times, and quoted or back-ticked names, in English and
Chinese. Deterministic and model-free: compaction's *Key data* section (issue 19) is built from it, and its
benchmark checks that every identifier of a compacted span survives in the summary or behind a reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Identifier", "identifiers"]


@dataclass(frozen=True)
class Identifier:
    """One identifier: its kind and its text exactly as written."""

    kind: str
    text: str


# Tried in this order; a span one pattern took is not read again by a later one (a URL's path is not a path).
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url", re.compile(r"\bhttps?://[^\s<>\"'）)\]，。；]+[^\s<>\"'）)\]，。；.,;:!?]")),
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
    ("path", re.compile(r"(?<![\w/])(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?|\b[\w.-]+(?:/[\w.@+-]+)+\.\w{1,8}\b"
                        r"|\b[A-Za-z]:\\(?:[\w .-]+\\)*[\w .-]+")),
    ("uuid", re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")),
    ("digest", re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b")),
    ("code", re.compile(r"`([^`\n]{1,120})`")),
    ("quoted", re.compile(r"\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”|「([^」\n]{1,80})」|《([^》\n]{1,80})》")),
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
                        r"|\d{4}年\d{1,2}月(?:\d{1,2}日)?|\d{1,2}月\d{1,2}日")),
    ("time", re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\s?(?:[ap]\.?m\.?)?\b", re.IGNORECASE)),
    ("amount", re.compile(r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?(?:\s?[kKmM]\b)?|\d[\d,]*(?:\.\d+)?\s?(?:元|块|美元|欧元|"
                          r"万|亿|%|％|(?:percent|dollars?|euros?|yuan|USD|EUR|CNY|RMB|GB|MB|KB|TB|ms|s|km|kg|mg)\b)")),
    ("version", re.compile(r"\bv?\d+\.\d+(?:\.\d+)*(?:[-+][\w.]+)?\b")),
    ("id", re.compile(r"\b(?=[A-Za-z0-9_-]*\d)[A-Za-z][A-Za-z0-9]*(?:[-_/][A-Za-z0-9]+)+\b|#\d+\b"
                      r"|\b[A-Z]{2,}-\d+\b")),
    ("number", re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w.])")),
)


# A pattern cannot match a text holding none of its characters: skipping it there is most of the speed on prose.
_NEEDS: dict[str, tuple[str, ...]] = {
    "url": ("://",), "email": ("@",), "path": ("/", "\\"), "uuid": ("-",), "code": ("`",),
    "quoted": ("\"", "“", "「", "《"), "date": ("-", "年", "月"), "time": (":",), "version": (".",),
    "id": ("-", "_", "/", "#"),
}


def identifiers(text: str) -> tuple[Identifier, ...]:
    """The identifiers of `text` in order of appearance, each once (the first kind that claims it wins)."""
    claimed = bytearray(len(text))  # 1 where an earlier pattern took the character
    found: list[tuple[int, Identifier]] = []
    for kind, pattern in _PATTERNS:
        needs = _NEEDS.get(kind)
        if needs is not None and not any(n in text for n in needs):
            continue
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(claimed[start:end]):
                continue
            value = next((g for g in match.groups() if g), None) if match.groups() else None
            shown = (value or match.group(0)).strip()
            if not shown or (kind == "number" and len(shown) < 2):
                continue  # a lone digit ("step 2") says too little to be worth keeping verbatim
            claimed[start:end] = b"\x01" * (end - start)
            found.append((start, Identifier(kind, shown)))
    seen: set[str] = set()
    out = []
    for _, ident in sorted(found, key=lambda f: f[0]):
        if ident.text not in seen:
            seen.add(ident.text)
            out.append(ident)
    return tuple(out)
