"""What compaction reads of a message (its sentences, terms, identifiers), kept in the Memory's caches per
namespace: the messages after one compaction's span are the next one's, and every compaction reads every covered
message again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from memory.caches import BoundedCache

__all__ = ["Memo", "MemoCache"]

T = TypeVar("T")

# (what was read, the text) -> what reading gave
MemoCache = BoundedCache[tuple[str, str], Any]


class Memo:
    """Readings of texts of one namespace; without a cache (a summary made outside a Memory) nothing is kept."""

    def __init__(self, cache: MemoCache | None = None, namespace: str = "") -> None:
        self._cache = cache
        self._namespace = namespace

    def of(self, reading: str, text: str, read: Callable[[str], T]) -> T:
        """`read(text)`, kept under the name `reading`."""
        if self._cache is None:
            return read(text)
        return cast(T, self._cache.get_or_compute(self._namespace, (reading, text), lambda: read(text)))


def weigh(key: tuple[str, str], value: Any) -> int:
    """A reading weighs its text's characters (what it holds of it is never more than that, twice)."""
    return 2 * len(key[1])
