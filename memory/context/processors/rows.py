"""A row set (CSV, TSV or a JSON list of flat objects): all-empty columns dropped, the first rows, a count line."""

from __future__ import annotations

import csv
import io
import json

__all__ = ["RowSet"]


class RowSet:
    """Rows with a header line → the header without columns empty in every row, and the first `shown` rows."""

    name = "rows"

    def __init__(self, shown: int = 10) -> None:
        self.shown = shown

    def reduce(self, text: str) -> str | None:
        rows = _rows(text)
        if rows is None or len(rows) < 3:
            return None
        header, body = rows[0], rows[1:]
        width = len(header)
        if any(len(r) != width for r in body):
            return None
        used = [c for c in range(width) if any(r[c].strip() for r in body)]
        shown = body[:self.shown]
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([header[c] for c in used])
        writer.writerows([[r[c] for c in used] for r in shown])
        dropped = width - len(used)
        note = f"{len(body)} rows, {len(shown)} shown" + (f"; {dropped} empty columns left out" if dropped else "")
        return note + ":\n" + out.getvalue().rstrip("\n")


def _rows(text: str) -> list[list[str]] | None:
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except ValueError:
            return None
        if not data or not all(isinstance(d, dict) for d in data):
            return None
        keys = list(dict.fromkeys(k for d in data for k in d))
        if any(isinstance(v, dict | list) for d in data for v in d.values()):
            return None
        return [keys] + [["" if d.get(k) is None else str(d.get(k)) for k in keys] for d in data]
    lines = stripped.splitlines()
    if len(lines) < 3:
        return None
    delimiter = "\t" if "\t" in lines[0] else ","
    if delimiter not in lines[0]:
        return None
    return list(csv.reader(io.StringIO(stripped), delimiter=delimiter))
