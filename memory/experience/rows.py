"""The chunk rows of one search: those the retrievers already read, the rest read when ranking first needs them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from memory.experience.catalog import ChunkRow

__all__ = ["RowReader", "Rows"]

RowReader = Callable[[Sequence[str]], dict[str, ChunkRow]]


class Rows(Mapping[str, ChunkRow]):
    """A search's chunk rows by id, read on demand through one reader, each id at most once.

    Ranking needs the row (text, time, speaker, terms) of a candidate only when the candidate can still reach the
    result; most of what the dense side over-fetches never can, so its rows are never read. An id that was read and
    has no row (deleted meanwhile, or outside the search's filters) is remembered as absent. Used by one thread.
    """

    def __init__(self, reader: RowReader, known: Mapping[str, ChunkRow] | None = None) -> None:
        self._reader = reader
        self._rows: dict[str, ChunkRow] = dict(known or {})
        self._absent: set[str] = set()

    def __getitem__(self, chunk_id: str) -> ChunkRow:
        return self._rows[chunk_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    # Ranking asks these once or twice per candidate: the dict's own, not Mapping's generic ones over __getitem__.
    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._rows

    def get(self, chunk_id: str, default: ChunkRow | None = None) -> ChunkRow | None:  # type: ignore[override]
        """The row of `chunk_id` if it has been read, else `default`."""
        return self._rows.get(chunk_id, default)

    def read(self, chunk_ids: Iterable[str]) -> set[str]:
        """Read the rows of the ids not read yet; returns the ids asked for that have no row (absent)."""
        asked = list(dict.fromkeys(chunk_ids))
        missing = [c for c in asked if c not in self._rows and c not in self._absent]
        if missing:
            found = self._reader(missing)
            self._rows.update(found)
            self._absent.update(c for c in missing if c not in found)
        return {c for c in asked if c in self._absent}
