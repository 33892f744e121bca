"""Shared fixtures: the real MiniLM model and tokenizer, loaded once per session, and a tiny PDF writer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def _to_unicode_cmap() -> bytes:
    """A ToUnicode map sending every two-byte code to the same Unicode code point."""
    ranges = [f"<{hi:02X}00> <{hi:02X}FF> <{hi:02X}00>" for hi in range(256)]
    body = [
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Identity-UCS def",
        "1 begincodespacerange <0000> <FFFF> endcodespacerange",
    ]
    for first in range(0, 256, 100):  # a bfrange section may list at most 100 ranges
        chunk = ranges[first : first + 100]
        body += [f"{len(chunk)} beginbfrange", *chunk, "endbfrange"]
    body.append("endcmap CMapName currentdict /CMap defineresource pop end end")
    return "\n".join(body).encode()


def _stream(data: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def write_pdf(path: Path, pages: list[list[str]], title: str | None = None, mod_date: str | None = None) -> Path:
    """A PDF with one text line per entry of each page, written byte by byte; `mod_date` like "D:20240301120000Z".

    The font is a Type0 font whose codes are Unicode code points, so Chinese text extracts back as well.
    """
    first_page = 7
    kids = " ".join(f"{first_page + 2 * n} 0 R" for n in range(len(pages)))
    info = "".join(f"/{key} ({value})" for key, value in (("Title", title), ("ModDate", mod_date)) if value)
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        (
            b"<< /Type /Font /Subtype /Type0 /BaseFont /TestUnicode /Encoding /Identity-H "
            b"/DescendantFonts [4 0 R] /ToUnicode 5 0 R >>"
        ),
        (
            b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /TestUnicode "
            b"/CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> >>"
        ),
        _stream(_to_unicode_cmap()),
        f"<< {info} >>".encode(),
    ]
    for number, lines in enumerate(pages):
        ops = ["BT", "/F1 12 Tf", "14 TL", "50 800 Td"]
        ops += ["<" + "".join(f"{ord(ch):04X}" for ch in line) + "> Tj T*" for line in lines]
        ops.append("ET")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
            f"/Contents {first_page + 2 * number + 1} 0 R >>".encode()
        )
        objects.append(_stream("\n".join(ops).encode()))
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


@pytest.fixture
def make_pdf() -> Callable[..., Path]:
    """The tiny PDF writer, as a fixture."""
    return write_pdf
