"""Drop repeated snippets: the same id, the same normalised text, or near-duplicates by word-set overlap."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from memory.snippet import Snippet

__all__ = ["NEAR_DUPLICATE", "dedupe", "features", "normalise", "overlap"]

NEAR_DUPLICATE = 0.8

_WORD = re.compile(r"\w+")
# Han, kana and hangul are written without spaces, so a "word" there is a character bigram.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_PIECES = re.compile(f"[{_CJK}]+|[^\\s{_CJK}]+")
_IS_CJK = re.compile(f"[{_CJK}]")
# Pure ASCII text needs no regex: its word characters are [A-Za-z0-9_] (all \w matches there), so lower-casing
# them and turning every other character into a space gives the same words, faster than the regex.
_ASCII_WORDS = str.maketrans({i: chr(i).lower() if chr(i).isalnum() or chr(i) == "_" else " " for i in range(128)})


def normalise(text: str) -> str:
    """Casefolded NFKC words joined by single spaces: punctuation and spacing do not make text different."""
    if text.isascii():
        return " ".join(text.translate(_ASCII_WORDS).split())
    text = unicodedata.normalize("NFKC", text)  # full-width letters and digits read as their ASCII twins
    return " ".join(_WORD.findall(text.casefold()))


def features(norm: str) -> frozenset[str]:
    """The words of normalised text, with CJK runs split into character bigrams."""
    if norm.isascii() or not _IS_CJK.search(norm):
        return frozenset(norm.split())
    found: set[str] = set()
    for piece in _PIECES.findall(norm):
        if len(piece) > 1 and _IS_CJK.match(piece):
            found.update(piece[i : i + 2] for i in range(len(piece) - 1))
        else:
            found.add(piece)
    return frozenset(found)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two feature sets (0 when either is empty)."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def dedupe(snippets: Sequence[Snippet], threshold: float = NEAR_DUPLICATE) -> tuple[list[Snippet], int]:
    """One snippet per group of duplicates (pinned, then higher score, then newer wins) and how many went."""
    kept: list[Snippet] = []
    kept_features: list[frozenset[str]] = []
    ids: set[str] = set()
    texts: set[str] = set()
    for snippet in sorted(snippets, key=_preference):
        norm = normalise(snippet.text)
        if snippet.id in ids or norm in texts:
            continue
        mine = features(norm)
        # Jaccard can only reach the threshold when the set sizes are close: the size test skips most pairs.
        low, high = threshold * len(mine), len(mine) / threshold
        if any(low <= len(theirs) <= high and overlap(mine, theirs) >= threshold for theirs in kept_features):
            continue
        kept.append(snippet)
        kept_features.append(mine)
        ids.add(snippet.id)
        texts.add(norm)
    return kept, len(snippets) - len(kept)


def _preference(snippet: Snippet) -> tuple[bool, float, bool, float, str]:
    updated = snippet.updated
    return (not snippet.pinned, -snippet.score, updated is None, -updated.timestamp() if updated else 0.0, snippet.id)
