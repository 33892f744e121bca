"""A row set (CSV, TSV or a JSON list of flat objects): its header, every column with a value, the rows that fit."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from memory.context.processors.base import Processed
from memory.context.processors.fit import fits, fitting
from memory.tokens import TokenCounter

__all__ = ["RowSet"]

_NAME_CHARS = 64  # a column name is at most this long


class RowSet:
    """Rows under a header line → the header and the first rows that fit; a column goes only when empty in all."""

    name = "rows"

    def reduce(self, text: str, room: int, counter: TokenCounter) -> Processed | None:
        """The rows that fit `room` as CSV; None when `text` is no row set or already fits."""
        table = _table(text)
        if table is None or fits(text, room, counter):
            return None
        header, *body = table
        used = [c for c in range(len(header)) if any(row[c].strip() for row in body)]
        empty = [header[c] for c in range(len(header)) if c not in used]

        def line(row: list[str]) -> str:
            return _line([row[c] for c in used])

        def write(shown: int) -> tuple[str, str]:
            """The text showing the first `shown` rows, and what it leaves out."""
            notes, left = [], []
            if shown < len(body):
                notes.append(f"showing rows 1-{shown:,} of {len(body):,}" if shown else
                             f"showing none of the {len(body):,} rows")
                left.append(f"rows {shown + 1:,}-{len(body):,} of {len(body):,}")
            if empty:
                notes.append(f"columns empty in every row left out: {', '.join(empty)}")
                left.append(f"the columns {', '.join(empty)}, empty in every row")
            head = [f"[{'; '.join(notes)}]"] if notes else []
            return "\n".join([*head, line(header), *map(line, body[:shown])]), "; ".join(left)

        widest, _ = write(0)
        shown = fitting(map(line, body), room - counter.count(widest) - 1, counter)
        reduced, left_out = write(shown)
        while shown and counter.count(reduced) > room:  # the running count is close; the exact one decides
            shown -= 1
            reduced, left_out = write(shown)
        return Processed(self.name, reduced, left_out)


def _line(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(cells)
    return out.getvalue()


def _table(text: str) -> list[list[str]] | None:
    """The header and rows of `text`, each as wide as the header."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            return None
        if not data or not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            return None
        if any(isinstance(v, dict | list) for d in data for v in d.values()):
            return None
        keys = list(dict.fromkeys(k for d in data for k in d))
        return [keys] + [[_cell(d.get(k)) for k in keys] for d in data]
    lines = stripped.splitlines()
    if len(lines) < 3:
        return None
    delimiter = "\t" if "\t" in lines[0] else ","
    if delimiter not in lines[0]:
        return None
    rows = list(csv.reader(io.StringIO(stripped), delimiter=delimiter))
    if not _header(rows[0]) or any(len(row) != len(rows[0]) for row in rows):
        return None
    return rows


def _header(cells: list[str]) -> bool:
    """Whether `cells` read as column names: distinct and short, none ending a sentence (prose with a comma a line
    would otherwise pass for a table)."""
    named = [c.strip() for c in cells if c.strip()]
    return (len(set(named)) == len(named) and all(len(c) <= _NAME_CHARS for c in named)
            and not any(c.endswith((".", "!", "?", "。", "！", "？")) for c in named))


def _cell(value: Any) -> str:
    """A JSON scalar as a CSV cell: strings as they are, null empty, numbers and booleans as JSON writes them."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)
