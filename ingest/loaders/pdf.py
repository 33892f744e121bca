"""PDF files through pypdf: the text layer of every page; scanned pages without one are refused."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from ingest.loaders.base import LoadedDocument, check_text, file_mtime
from memory.errors import TooLargeError, ValidationError

__all__ = ["load_pdf"]


# Text extraction takes time in proportion to the page content, and content compresses up to ~1000:1 (deflate's
# limit), so a small file can inflate into a very long extraction. Content beyond MAX_INFLATION times the file's
# size (a compression bomb), or beyond CONTENT_BYTES_PER_CHAR times max_chars (operators beside the text), is
# refused unread.
MAX_INFLATION = 100
CONTENT_BYTES_PER_CHAR = 16
_CONTENT_FLOOR = 1_000_000
# A Title that only names the file a converter printed from ("pdfsrc.html", "Microsoft Word - notes.docx") says
# nothing of the document: it has none, and the file's own name stands for it.
_FILE_TITLE = re.compile(r"(?:microsoft \w+ - )?[^/\\]*\.(?:html?|pdf|docx?|pptx?|xlsx?|rtf|odt|txt|tex|dvi|ps|md)",
                         re.IGNORECASE)


def load_pdf(path: Path, max_chars: int | None = None, name: str | None = None) -> list[LoadedDocument]:
    """One document: page texts separated by blank lines; the PDF's Title and ModDate when it has them."""
    name = name or str(path)
    allowed = max(_CONTENT_FLOOR, MAX_INFLATION * path.stat().st_size)
    if max_chars is not None:
        allowed = min(allowed, max(_CONTENT_FLOOR, CONTENT_BYTES_PER_CHAR * max_chars))
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ValidationError(f"{name} is an encrypted PDF; decrypt it before ingesting")
        content = 0
        for number, page in enumerate(reader.pages, 1):
            stream = page.get_contents()
            content += len(stream.get_data()) if stream is not None else 0
            if content > allowed:
                raise TooLargeError(
                    f"{name} holds over {allowed:,} bytes of page content by page {number} once decompressed (the "
                    f"file has {path.stat().st_size:,}), more than its text can need (limits.max_text_chars) or a "
                    "likely compression bomb; split the PDF into smaller files"
                )
        pages = [_clean(page.extract_text() or "") for page in reader.pages]
        metadata = reader.metadata
    except PyPdfError as exc:
        raise ValidationError(f"{name} is not a readable PDF ({exc}); expected a PDF with a text layer") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # pypdf's own errors on broken files
        raise ValidationError(
            f"{name} is not a readable PDF ({type(exc).__name__}: {exc}); repair or re-export it"
        ) from None
    text = "\n\n".join(page for page in pages if page)
    if not text.strip():
        raise ValidationError(
            f"{name} has no text layer ({len(pages)} page(s), probably scanned images); run OCR on it first"
        )
    check_text(name, text, max_chars)
    title = _title((metadata.title or "") if metadata else "")
    updated_at = _metadata_date(metadata) or file_mtime(path)
    return [LoadedDocument(path.name, title, str(path), text, "document", updated_at)]


def _clean(page: str) -> str:
    # Extracted lines carry trailing spaces and the odd NUL from broken font maps.
    lines = [line.rstrip() for line in page.replace("\x00", "").splitlines()]
    return "\n".join(lines).strip()


def _metadata_date(metadata: object) -> datetime | None:
    for name in ("modification_date", "creation_date"):
        try:
            moment = getattr(metadata, name, None)
        except (ValueError, TypeError):
            continue  # a malformed date string in the Info dictionary
        if isinstance(moment, datetime):
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None


def _title(title: str) -> str | None:
    title = title.strip()
    return None if not title or _FILE_TITLE.fullmatch(title) else title
