"""Hostile input: each case is a clear 4xx whose detail a person understands, and the store is left as it was."""

from __future__ import annotations

import gzip
import io
import logging
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.schemas.base import NAMESPACE_RULE
from ingest.pipeline import ingest_paths
from memory.embedding import Embedder
from memory.errors import ValidationError
from memory.experience import SearchFilters
from memory.namespaces import check_namespace
from memory.service import Memory
from tests import local_client
from tests.security.conftest import LIMITS, make_config, snapshot

JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module", autouse=True)
def stocked(module_client: TestClient) -> None:
    """Before the module's first test, its store is given a document, a pinned fact and a task item."""
    for method, path, body in [
        ("post", "/v1/documents", {"namespace": "u1", "text": "The loader reads CSV files from S3.", "doc_id": "etl"}),
        ("post", "/v1/facts/pin", {"namespace": "u1", "text": "Never use Python 2 syntax."}),
        ("post", "/v1/tasks/t-1/items", {"namespace": "u1", "kind": "plan", "text": "Read the loader first."}),
    ]:
        assert getattr(module_client, method)(path, json=body).status_code == 200


def _upload(name: str, data: bytes, namespace: str | None = "u1", **fields: str) -> dict[str, Any]:
    return {"files": {"file": (name, data)}, "data": ({} if namespace is None else {"namespace": namespace}) | fields}


def _raw_multipart(filename: bytes, *chunks: bytes) -> dict[str, Any]:
    """A multipart upload written by hand (any bytes in the name), its file sent in `chunks` as they come."""
    head = (b'--XyZ\r\nContent-Disposition: form-data; name="namespace"\r\n\r\nu1\r\n'
            b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="' + filename + b'"\r\n\r\n')
    body = (head, *chunks, b"\r\n--XyZ--\r\n")
    return {"chunks": body, "headers": {"content-type": "multipart/form-data; boundary=XyZ"}}


def _zip(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, data)
    return buffer.getvalue()


def _pdf(content: bytes, pages: int = 1) -> bytes:
    """A valid PDF whose pages all show one Flate-compressed content stream."""
    stream = zlib.compress(content, 9)
    kids = " ".join(f"{4 + i} 0 R" for i in range(pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
               b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream"]
    font = f"{4 + pages} 0 R".encode()
    objects += [b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
                b"/Resources << /Font << /F1 " + font + b" >> >> >>"] * pages
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _json(body: bytes) -> dict[str, Any]:
    return {"content": body, "headers": JSON}


def _nested(depth: int, kind: type) -> Any:
    """A JSON value nested `depth` levels deep (the outermost counts as one)."""
    value: Any = {} if kind is dict else []
    for _ in range(depth - 1):
        value = {"a": value} if kind is dict else [value]
    return value


_BIG = b"7" * 5000
_DEEP = b'{"namespace": "u1", "text": "deep", "metadata": {"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
_GZIP_BOMB = gzip.compress(b'{"namespace": "u1", "text": "' + b" " * 50_000_000 + b'"}', 9)  # ~50 KB -> 50 MB
_PDF_BOMB = _pdf((b"BT /F1 12 Tf 72 712 Td (" + b"A" * 60 + b") Tj ET\n") * 60_000)  # ~20 KB -> 5 MB of content
_TEXT_OVER = "word " * (LIMITS["max_text_chars"] // 5 + 1)

# (case id, method, path, request keywords, status, words the detail must contain)
CASES: list[tuple[str, str, str, dict[str, Any], int, str]] = [
    # documents as JSON
    ("doc-empty", "post", "/v1/documents", {"json": {"namespace": "u1", "text": ""}}, 422, "text"),
    ("doc-blank", "post", "/v1/documents", {"json": {"namespace": "u1", "text": " \n\t "}}, 422, "non-empty"),
    ("doc-over-limit", "post", "/v1/documents", {"json": {"namespace": "u1", "text": _TEXT_OVER}}, 413,
     "max_text_chars"),
    ("doc-binary", "post", "/v1/documents", {"json": {"namespace": "u1", "text": "PK\x03\x04\x00\x00\x08"}}, 422,
     "binary"),
    ("doc-invalid-utf8", "post", "/v1/documents",
     {"content": b'{"namespace": "u1", "text": "\xff\xfe\xc0\xaf"}', "headers": JSON}, 422, "JSON"),
    ("doc-lone-surrogate", "post", "/v1/documents",
     {"content": b'{"namespace": "u1", "text": "ok", "metadata": {"k": "\\ud800"}}', "headers": JSON}, 422,
     "surrogate"),
    ("doc-nan-metadata", "post", "/v1/documents",
     {"content": b'{"namespace": "u1", "text": "nan", "metadata": {"k": NaN}}', "headers": JSON}, 422,
     "JSON values"),
    ("doc-deep-json", "post", "/v1/documents", {"content": _DEEP, "headers": JSON}, 422, "too deeply"),
    ("doc-time-overflow", "post", "/v1/documents",
     {"json": {"namespace": "u1", "text": "late", "updated_at": "9999-12-31T23:00:00-05:00"}}, 422, "9999"),
    ("doc-gzip-bomb", "post", "/v1/documents",
     {"content": _GZIP_BOMB, "headers": {**JSON, "content-encoding": "gzip"}}, 422, "must be JSON"),
    ("doc-text-plain", "post", "/v1/documents", {"content": b"just text", "headers": {"content-type": "text/plain"}},
     422, "must be JSON"),
    ("doc-octet-stream", "post", "/v1/documents",
     {"content": _PDF_BOMB, "headers": {"content-type": "application/octet-stream"}}, 422, "must be JSON"),
    ("body-over-limit", "post", "/v1/documents",
     {"content": b"x" * (LIMITS["max_request_bytes"] + 1), "headers": JSON}, 413, "max_request_bytes"),
    # A body sent in chunks declares no Content-Length: it is counted as it streams in, for every way of reading it.
    ("chunked-json-over-limit", "post", "/v1/facts",
     {"chunks": (b'{"namespace": "u1", "text": "', *[b"w" * 100_000] * 25, b'"}'), "headers": JSON},
     413, "send less"),
    ("chunked-document-over-limit", "post", "/v1/documents",
     {"chunks": (b'{"namespace": "u1", "text": "', *[b"w" * 100_000] * 25, b'"}'), "headers": JSON},
     413, "send less"),
    ("chunked-upload-over-limit", "post", "/v1/documents", _raw_multipart(b"big.txt", *[b"w" * 100_000] * 25), 413,
     "send less"),
    # documents as multipart uploads
    ("upload-empty", "post", "/v1/documents", _upload("empty.txt", b""), 422, "empty"),
    ("upload-binary", "post", "/v1/documents", _upload("tool.txt", bytes(range(256))), 422, "not UTF-8"),
    ("upload-invalid-utf8", "post", "/v1/documents", _upload("notes.md", b"caf\xe9 cr\xe8me"), 422, "not UTF-8"),
    ("upload-nul-bytes", "post", "/v1/documents", _upload("notes.txt", b"abc\x00def"), 422, "binary"),
    ("upload-over-limit", "post", "/v1/documents", _upload("big.txt", _TEXT_OVER.encode()), 413, "max_text_chars"),
    ("upload-gzip", "post", "/v1/documents", _upload("notes.txt.gz", gzip.compress(b"x" * 1_000_000)), 422,
     "not supported"),
    ("upload-zip", "post", "/v1/documents", _upload("notes.zip", _zip("a.txt", b"x" * 1_000_000)), 422,
     "not supported"),
    ("upload-gzip-named-txt", "post", "/v1/documents", _upload("notes.txt", gzip.compress(b"x" * 1_000_000)), 422,
     "not UTF-8"),
    ("upload-pdf-bomb", "post", "/v1/documents", _upload("bomb.pdf", _PDF_BOMB), 413, "compression bomb"),
    ("upload-broken-pdf", "post", "/v1/documents", _upload("broken.pdf", b"%PDF-1.4 garbage"), 422, "PDF"),
    ("upload-deep-json", "post", "/v1/documents", _upload("chat.json", b"[" * 1900 + b"]" * 1900), 422,
     "too deeply"),
    ("upload-surrogate-json", "post", "/v1/documents",
     _upload("chat.json", b'[{"role": "user", "content": "hi \\ud800"}]'), 422, "surrogate"),
    ("upload-epoch-overflow", "post", "/v1/documents",
     _upload("chat.jsonl", b'{"role": "user", "content": "hi", "timestamp": 1e300}\n'), 422, "timestamp"),
    ("upload-nul-name", "post", "/v1/documents", _raw_multipart(b"a\x00b.txt", b"hello"), 422, "file name"),
    ("upload-long-name", "post", "/v1/documents", _upload("a" * 300 + ".txt", b"hello"), 422, "file name"),
    ("upload-no-file", "post", "/v1/documents", {"files": {"other": ("a.txt", b"x")}, "data": {"namespace": "u1"}},
     422, "'file' part"),
    ("upload-no-namespace", "post", "/v1/documents", _upload("a.txt", b"hello", namespace=None), 422, "namespace"),
    ("upload-no-boundary", "post", "/v1/documents",
     {"content": b"--XyZ\r\ngarbage", "headers": {"content-type": "multipart/form-data"}}, 422, "parsed"),
    # recall
    ("budget-negative", "post", "/v1/recall", {"json": {"namespace": "u1", "query": "csv", "budget": -1}}, 422,
     "budget"),
    ("budget-enormous", "post", "/v1/recall", {"json": {"namespace": "u1", "query": "csv", "budget": 10**40}}, 422,
     "budget"),
    ("budget-fraction", "post", "/v1/recall", {"json": {"namespace": "u1", "query": "csv", "budget": 1.5}}, 422,
     "integer"),
    ("budget-string", "post", "/v1/recall", {"json": {"namespace": "u1", "query": "csv", "budget": "800"}}, 422,
     "integer"),
    ("budget-bool", "post", "/v1/recall", {"json": {"namespace": "u1", "query": "csv", "budget": True}}, 422,
     "integer"),
    ("budget-nan", "post", "/v1/recall",
     {"content": b'{"namespace": "u1", "query": "csv", "budget": NaN}', "headers": JSON}, 422, "budget"),
    ("query-1mb", "post", "/v1/recall", {"json": {"namespace": "u1", "query": "q" * 1_000_000}}, 413,
     "max_query_chars"),
    ("filter-unknown", "post", "/v1/recall", {"json": {"namespace": "u1", "query": "x", "filters": {"colour": 1}}},
     422, "filters.colour"),
    ("filter-tags-number", "post", "/v1/recall", {"json": {"namespace": "u1", "query": "x", "filters": {"tags": 5}}},
     422, "filters.tags"),
    ("filter-kind", "post", "/v1/recall", {"json": {"namespace": "u1", "query": "x", "filters": {"kind": "x"}}},
     422, "filters.kind"),
    ("filter-date", "post", "/v1/recall",
     {"json": {"namespace": "u1", "query": "x", "filters": {"updated_from": "yesterday"}}}, 422, "ISO 8601"),
    ("filter-date-overflow", "post", "/v1/recall",
     {"json": {"namespace": "u1", "query": "x", "filters": {"updated_to": "0001-01-01T00:00:00+05:00"}}}, 422,
     "years"),
    ("filter-surrogate", "post", "/v1/recall",
     {"content": b'{"namespace": "u1", "query": "x", "filters": {"project": "\\udfff"}}', "headers": JSON}, 422,
     "surrogate"),
    ("min-score", "post", "/v1/recall", {"json": {"namespace": "u1", "query": "x", "min_score": 2}}, 422,
     "min_score"),
    ("filter-many-tags", "post", "/v1/recall",
     {"json": {"namespace": "u1", "query": "x", "filters": {"tags": [f"t{i}" for i in range(300)]}}}, 422,
     "filters.tags"),
    ("recall-task-id", "post", "/v1/recall", {"json": {"namespace": "u1", "query": "x", "task_id": "../t-1"}}, 422,
     "task_id"),
    ("recall-xml", "post", "/v1/recall", {"content": b"<recall/>", "headers": {"content-type": "application/xml"}},
     422, "sent as application/xml"),
    ("recall-form", "post", "/v1/recall", {"data": {"namespace": "u1", "query": "csv"}}, 422,
     "must be a JSON object (content-type application/json), and it was sent as application/x-www-form-urlencoded"),
    ("recall-array", "post", "/v1/recall", {"content": b'["u1", "csv"]', "headers": JSON}, 422,
     "must be a JSON object of the fields, and it is a JSON array"),
    # facts, memories, tasks
    ("fact-over-limit", "post", "/v1/facts", {"json": {"namespace": "u1", "text": _TEXT_OVER}}, 413,
     "max_text_chars"),
    ("fact-form-encoded", "post", "/v1/facts", {"data": {"namespace": "u1", "text": "Never use tabs."}}, 422,
     "sent as application/x-www-form-urlencoded"),
    ("fact-text-plain", "post", "/v1/facts",
     {"content": b'{"namespace": "u1", "text": "Never use tabs."}', "headers": {"content-type": "text/plain"}},
     422, "it was sent as text/plain"),
    ("pin-surrogate", "post", "/v1/facts/pin",
     {"content": b'{"namespace": "u1", "text": "never \\ud800 tabs"}', "headers": JSON}, 422, "surrogate"),
    ("pin-both", "post", "/v1/facts/pin", {"json": {"namespace": "u1", "text": "x", "key": "k", "value": "v"}}, 422,
     "not both"),
    ("fact-scope", "post", "/v1/facts", {"json": {"namespace": "u1", "text": "Never use tabs.", "scope": "x"}}, 422,
     "scope"),
    ("memories-over-batch", "post", "/v1/memories",
     {"json": {"namespace": "u1", "messages": [{"text": "hi"}] * (LIMITS["max_batch"] + 1)}}, 413, "max_batch"),
    ("memories-none", "post", "/v1/memories", {"json": {"namespace": "u1", "messages": []}}, 422, "messages"),
    ("memories-time-overflow", "post", "/v1/memories",
     {"json": {"namespace": "u1", "messages": [{"text": "hi", "timestamp": "0001-01-01T00:00:00+05:00"}]}}, 422,
     "years"),
    ("memories-tag-surrogate", "post", "/v1/memories",
     {"content": b'{"namespace": "u1", "messages": [{"text": "hi", "tags": ["\\ud800"]}]}', "headers": JSON}, 422,
     "surrogate"),
    ("task-ttl-huge", "post", "/v1/tasks/t-1/items",
     {"json": {"namespace": "u1", "kind": "note", "text": "x", "ttl_s": 10**12}}, 422, "ttl_s"),
    ("promote-over-batch", "post", "/v1/tasks/t-1/promote",
     {"json": {"namespace": "u1", "keys": [f"t-1/r{i}" for i in range(LIMITS["max_batch"] + 1)]}}, 413, "max_batch"),
    ("task-kind", "post", "/v1/tasks/t-1/items", {"json": {"namespace": "u1", "kind": "virus", "text": "x"}}, 422,
     "kind"),
    ("task-over-limit", "post", "/v1/tasks/t-1/items",
     {"json": {"namespace": "u1", "kind": "note", "text": _TEXT_OVER}}, 413, "max_text_chars"),
    ("task-metadata-nan", "post", "/v1/tasks/t-1/items",
     {"content": b'{"namespace": "u1", "kind": "note", "text": "x", "metadata": {"a": NaN}}', "headers": JSON}, 422,
     "JSON values"),
    ("task-parent-traversal", "post", "/v1/tasks/t-2/items",
     {"json": {"namespace": "u1", "kind": "note", "text": "x", "parent_task_id": "../t-1"}}, 422, "parent_task_id"),
    ("task-page-beyond", "get", "/v1/tasks/t-1/items/t-1/r1", {"params": {"namespace": "u1", "page": 10**30}}, 422,
     "page"),
    ("task-page-tokens-zero", "get", "/v1/tasks/t-1/items/t-1/r1", {"params": {"namespace": "u1", "page_tokens": 0}},
     422, "page_tokens"),
    # unknown namespaces, tasks, ids and routes
    ("namespace-traversal", "get", "/v1/facts", {"params": {"namespace": "../u1"}}, 422, "namespace must be"),
    ("namespace-empty", "get", "/v1/documents", {"params": {"namespace": ""}}, 422, "namespace must be"),
    ("namespace-too-long", "delete", "/v1/namespaces/" + "n" * 129, {}, 422, "namespace must be"),
    ("namespace-missing", "get", "/v1/facts", {}, 422, "namespace"),
    ("fact-unknown-history", "get", "/v1/facts/f-000000000000/history", {"params": {"namespace": "u1"}}, 404,
     "does not exist"),
    ("fact-unknown-unpin", "post", "/v1/facts/f-000000000000/unpin", {"params": {"namespace": "u1"}}, 404,
     "does not exist"),
    ("fact-unknown-delete", "delete", "/v1/facts/f-000000000000", {"params": {"namespace": "u1"}}, 404,
     "does not exist"),
    ("fact-unknown-namespace", "delete", "/v1/facts/f-000000000000", {"params": {"namespace": "nobody"}}, 404,
     "does not exist"),
    ("doc-unknown-get", "get", "/v1/documents/nope", {"params": {"namespace": "u1"}}, 404, "no document"),
    ("doc-unknown-delete", "delete", "/v1/documents/nope", {"params": {"namespace": "u1"}}, 404, "no document"),
    ("doc-other-namespace", "delete", "/v1/documents/etl", {"params": {"namespace": "u2"}}, 404, "no document"),
    ("task-unknown-list", "get", "/v1/tasks/t-404/items", {"params": {"namespace": "u1"}}, 404, "does not exist"),
    ("task-unknown-end", "delete", "/v1/tasks/t-404", {"params": {"namespace": "u1"}}, 404, "does not exist"),
    ("task-unknown-promote", "post", "/v1/tasks/t-404/promote", {"json": {"namespace": "u1", "keys": ["t-404/r1"]}},
     404, "does not exist"),
    ("task-unknown-key", "get", "/v1/tasks/t-1/items/t-1/r99", {"params": {"namespace": "u1"}}, 404, "no live item"),
    ("task-key-traversal", "get", "/v1/tasks/t-1/items/..%2F..%2Fetc%2Fpasswd", {"params": {"namespace": "u1"}},
     404, "no live item"),
    ("task-other-namespace", "get", "/v1/tasks/t-1/items", {"params": {"namespace": "u2"}}, 404, "does not exist"),
    ("route-unknown", "get", "/v1/secrets", {}, 404, "Not Found"),
    ("method-not-allowed", "put", "/v1/facts", {"json": {}}, 405, "Method Not Allowed"),
    # integer literals over Python's int-conversion limit (4,300 digits), wherever JSON is read
    ("doc-metadata-bigint", "post", "/v1/documents", _json(b'{"namespace": "u1", "text": "big", "metadata": {"n": '
                                                          + _BIG + b"}}"), 422, "4,300 digits"),
    ("doc-metadata-bigint-nested", "post", "/v1/documents",
     _json(b'{"namespace": "u1", "text": "big", "metadata": {"a": {"b": [1, -' + _BIG + b"]}}}"), 422, "digits"),
    ("memories-metadata-bigint", "post", "/v1/memories",
     _json(b'{"namespace": "u1", "messages": [{"text": "hi", "metadata": {"n": ' + _BIG + b"}}]}"), 422, "digits"),
    ("task-metadata-bigint", "post", "/v1/tasks/t-1/items",
     _json(b'{"namespace": "u1", "kind": "note", "text": "x", "metadata": {"n": [' + _BIG + b"]}}"), 422, "digits"),
    ("recall-bigint", "post", "/v1/recall", _json(b'{"namespace": "u1", "query": "x", "budget": ' + _BIG + b"}"),
     422, "digits"),
    # metadata nested past limits.max_metadata_depth (32 by default) or the ceiling every reader can carry (100)
    ("doc-metadata-deep-dict", "post", "/v1/documents",
     {"json": {"namespace": "u1", "text": "deep", "metadata": _nested(40, dict)}}, 413, "max_metadata_depth"),
    ("doc-metadata-deep-list", "post", "/v1/documents",
     {"json": {"namespace": "u1", "text": "deep", "metadata": {"a": _nested(40, list)}}}, 413, "max_metadata_depth"),
    ("doc-metadata-300", "post", "/v1/documents",
     {"json": {"namespace": "u1", "text": "deep", "metadata": _nested(300, dict)}}, 413, "nests deeper than 32"),
    ("memories-metadata-300", "post", "/v1/memories",
     {"json": {"namespace": "u1", "messages": [{"text": "deep", "metadata": {"a": _nested(300, list)}}]}}, 413,
     "nests deeper than"),
    ("task-metadata-deep", "post", "/v1/tasks/t-1/items",
     {"json": {"namespace": "u1", "kind": "note", "text": "x", "metadata": _nested(40, dict)}}, 413,
     "max_metadata_depth"),
    ("upload-json-deep-metadata", "post", "/v1/documents",
     _upload("chat.json", b'[{"role": "user", "content": "hi", "extra": ' + b"[" * 300 + b"]" * 300 + b"}]"), 413,
     "nests deeper than"),
    ("doc-metadata-bytes", "post", "/v1/documents",
     {"json": {"namespace": "u1", "text": "big", "metadata": {"blob": "x" * 150_000}}}, 413, "max_metadata_bytes"),
    ("task-metadata-bytes", "post", "/v1/tasks/t-1/items",
     {"json": {"namespace": "u1", "kind": "note", "text": "x", "metadata": {"blob": ["元" * 40_000]}}}, 413,
     "max_metadata_bytes"),
    # NUL: refused in ids, names, speakers, keys and tags (it is dropped from free text, tested below)
    ("memories-speaker-nul", "post", "/v1/memories",
     {"json": {"namespace": "u1", "messages": [{"text": "hi", "speaker": "An\x00na"}]}}, 422, "speaker holds a NUL"),
    ("memories-tag-nul", "post", "/v1/memories",
     {"json": {"namespace": "u1", "messages": [{"text": "hi", "tags": ["ok", "b\x00d"]}]}}, 422, "tags[1] holds a NUL"),
    ("doc-id-nul", "post", "/v1/documents", {"json": {"namespace": "u1", "text": "x", "doc_id": "a\x00b"}}, 422,
     "doc_id holds a NUL"),
    ("doc-title-nul", "post", "/v1/documents", {"json": {"namespace": "u1", "text": "x", "title": "\x00"}}, 422,
     "title holds a NUL"),
    ("pin-key-nul", "post", "/v1/facts/pin", {"json": {"namespace": "u1", "key": "k\x00", "value": "v"}}, 422,
     "key holds a NUL"),
    ("fact-only-nul", "post", "/v1/facts", {"json": {"namespace": "u1", "text": "\x00 \x00"}}, 422,
     "nothing but NUL"),
    ("task-kind-nul", "post", "/v1/tasks/t-1/items", {"json": {"namespace": "u1", "kind": "note\x00", "text": "x"}},
     422, "kind"),
    ("promote-key-nul", "post", "/v1/tasks/t-1/promote", {"json": {"namespace": "u1", "keys": ["t-1/r1\x00"]}}, 422,
     "keys[0] holds a NUL"),
    ("recall-filter-nul", "post", "/v1/recall",
     {"json": {"namespace": "u1", "query": "x", "filters": {"project": "p\x00"}}}, 422, "project holds a NUL"),
    ("upload-speaker-nul", "post", "/v1/documents",
     _upload("chat.json", b'[{"role": "us\\u0000er", "content": "hi"}]'), 422, "speaker holds a NUL"),
    # the multipart fields beside the file follow the JSON body's rules
    ("upload-doc-id-nul", "post", "/v1/documents", _upload("a.txt", b"hello", doc_id="a\x00b"), 422,
     "doc_id holds a NUL"),
    ("upload-project-nul", "post", "/v1/documents", _upload("a.txt", b"hello", project="p\x00"), 422,
     "project holds a NUL"),
    ("upload-doc-id-long", "post", "/v1/documents", _upload("a.txt", b"hello", doc_id="d" * 201), 422,
     "doc_id: String should have at most 200 characters"),
    ("upload-doc-id-empty", "post", "/v1/documents", _upload("a.txt", b"hello", doc_id=""), 422,
     "doc_id: String should have at least 1 character"),
    ("upload-unknown-field", "post", "/v1/documents", _upload("a.txt", b"hello", title="T"), 422,
     "title: Extra inputs are not permitted"),
    ("upload-long-folders", "post", "/v1/documents", _upload("d/" * 600 + "a.txt", b"hello"), 422, "file name"),
    # a file's conversations are one batch: limits.max_batch (5 here) counts them all
    ("upload-jsonl-over-batch", "post", "/v1/documents",
     _upload("chats.jsonl", b"\n".join(b'{"id": "c%d", "messages": [{"role": "user", "content": "hi %d"}]}'
                                       % (i, i) for i in range(6))), 413, "max_batch"),
    ("upload-json-over-batch", "post", "/v1/documents",
     _upload("chats.json", b"[" + b", ".join(b'{"messages": [{"role": "user", "content": "hi %d"}]}' % i
                                            for i in range(6)) + b"]"), 413, "max_batch"),
    # ttl_s is a JSON whole number: true is not 1 s, false not 0, "5" and 1.5 not numbers of seconds
    *[(f"task-ttl-{name}", "post", "/v1/tasks/t-1/items",
       {"json": {"namespace": "u1", "kind": "note", "text": "x", "ttl_s": value}}, 422, "ttl_s: Input should be")
      for name, value in (("true", True), ("false", False), ("string", "5"), ("fraction", 1.5))],
    # what an error says: the field, and where a body stopped parsing
    ("recall-query-missing", "post", "/v1/recall", {"json": {"namespace": "u1"}}, 422, "query: Field required"),
    ("recall-json-decode", "post", "/v1/recall", _json(b'{"namespace": "u1", "query": "x",, }'), 422,
     "not valid JSON: Expecting property name enclosed in double quotes at line 1, column 34 (character 33)"),
    ("doc-json-decode", "post", "/v1/documents", _json(b'{"namespace": "u1",\n "text": }'), 422,
     "Expecting value at line 2, column 10 (character 29)"),
]


@pytest.mark.parametrize(("method", "path", "kwargs", "status", "words"),
                         [pytest.param(*case[1:], id=case[0]) for case in CASES])
def test_hostile_request_is_a_clear_4xx_and_changes_nothing(
    module_client: TestClient, module_memory: Memory, method: str, path: str, kwargs: dict[str, Any], status: int,
    words: str,
) -> None:
    before = snapshot(module_memory)
    if "chunks" in kwargs:  # a body sent in pieces as they come, made anew for each backend's run
        kwargs = {**{k: v for k, v in kwargs.items() if k != "chunks"}, "content": iter(kwargs["chunks"])}
    response = module_client.request(method.upper(), path, **kwargs)
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error", "detail"}, body
    assert words.lower() in body["detail"].lower(), body["detail"]
    assert len(body["detail"]) >= 9 and "Traceback" not in body["detail"]
    assert snapshot(module_memory) == before


def test_unknown_but_valid_namespaces_read_as_empty(module_client: TestClient, module_memory: Memory) -> None:
    """A namespace exists from its first write: reading one never written to is an empty answer, not an error."""
    before = snapshot(module_memory)
    assert module_client.get("/v1/facts", params={"namespace": "nobody"}).json() == {"facts": []}
    assert module_client.get("/v1/documents", params={"namespace": "nobody"}).json() == {"documents": [], "total": 0}
    recalled = module_client.post("/v1/recall", json={"namespace": "nobody", "query": "CSV loader"}).json()
    assert recalled["items"] == [] and recalled["used_tokens"] == 0
    assert module_client.delete("/v1/namespaces/nobody").json() == {"facts": 0, "task_items": 0, "documents": 0}
    assert snapshot(module_memory) == before


def test_budget_zero_is_an_empty_answer(module_client: TestClient, module_memory: Memory) -> None:
    """Budget 0 is a normal edge case: nothing fits, and the pinned fact that did not is named."""
    before = snapshot(module_memory)
    answer = module_client.post("/v1/recall", json={"namespace": "u1", "query": "CSV loader", "budget": 0}).json()
    assert answer["items"] == [] and answer["used_tokens"] == 0 and answer["rendered"] == ""
    assert answer["omitted"]["pinned_over_budget"] and answer["warnings"]
    assert snapshot(module_memory) == before


def test_an_uploaded_name_cannot_leave_the_upload_folder(module_client: TestClient, module_memory: Memory,
                                                                tmp_path: Path) -> None:
    """A traversal in the name writes nothing outside; the id keeps the name's folders, its `..` parts dropped."""
    target = tmp_path / "escaped.txt"
    name = "../" * 12 + str(target).lstrip("/")
    response = module_client.post("/v1/documents", **_upload(name, b"Uploaded through a hostile name."))
    assert response.status_code == 200 and response.json()["doc_id"] == str(target).lstrip("/")
    assert not target.exists()
    deleted = module_client.delete("/v1/documents/" + str(target).lstrip("/"), params={"namespace": "u1"})
    assert deleted.json() == {"deleted": str(target).lstrip("/")}


def test_file_ingest_refuses_paths_outside_its_root(module_memory: Memory, tmp_path: Path) -> None:
    """ingest_paths with a root: traversal and home paths are refused, links out are skipped, nothing is stored."""
    root = tmp_path / "root"
    root.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("The vault code is 4711.", encoding="utf-8")
    (root / "link.txt").symlink_to(secret)
    (root / "loop").symlink_to(root, target_is_directory=True)
    before = snapshot(module_memory)
    for escape in ["../secret.txt", str(secret), "~/secret.txt", "link/../../secret.txt", "a\x00.txt"]:
        with pytest.raises(ValidationError):
            ingest_paths(module_memory, "u1", [escape], root=root)
    outcomes = ingest_paths(module_memory, "u1", ["."], root=root)
    assert {Path(o.path).name: o.skipped for o in outcomes} == {
        "link.txt": f"links outside the allowed folder {root.resolve()}",
        "loop": "symbolic link to a folder (not followed)",
    }
    assert snapshot(module_memory) == before


@pytest.mark.parametrize("namespace", ["u1", "a-b_c.d:e@f", "x" * 128, "", "x" * 129, "a b", "../x", "a/b", "ü"])
def test_the_documented_namespace_rule_is_the_enforced_one(namespace: str) -> None:
    import re

    documented = re.fullmatch(NAMESPACE_RULE["pattern"].strip("^$"), namespace) is not None
    try:
        check_namespace(namespace)
        enforced = True
    except ValidationError:
        enforced = False
    assert documented == enforced


def test_a_thousand_tag_filter_is_answered(module_memory: Memory) -> None:
    """Library callers have no cap on filter tags: the filter stays one SQL clause however many there are."""
    unfiltered = module_memory.recall("u1", "CSV loader", 200)
    assert [i for i in unfiltered.items if i.snippet.tier == "experience"]  # the untagged document is found...
    tags = [f"t{i}" for i in range(1500)]
    result = module_memory.recall("u1", "CSV loader", 200, filters={"tags": tags})
    assert not [i for i in result.items if i.snippet.tier == "experience"]  # ...and filtered out by any tag
    found = module_memory.experience.search("u1", "CSV loader", filters=SearchFilters(tags=("x",)))
    assert found == []


def test_nul_in_free_text_is_dropped_before_it_is_stored(module_client: TestClient, module_memory: Memory) -> None:
    """Facts, turns and task items keep their text without the NUL; nothing stored or rendered holds one."""
    ns = {"namespace": "nul-text"}
    fact = module_client.post("/v1/facts", json={**ns, "text": "Never use\x00 tabs. 以后不要\x00用制表符。"}).json()
    assert fact["stored"] and all("\x00" not in f["text"] + f["value"] + f["key"] for f in fact["stored"])
    module_client.post("/v1/memories", json={**ns, "messages": [
        {"text": "I moved\x00 to Berlin last May.", "speaker": "Anna"}, {"text": "我搬到\x00柏林了。", "speaker": "小王"}]})
    module_client.post("/v1/tasks/t-nul/items", json={**ns, "kind": "note", "text": "Read\x00 the loader."})
    db = module_memory.store.db
    stored = [r[0] for sql in ("SELECT text || value || key FROM facts WHERE namespace = 'nul-text'",
                               "SELECT text FROM chunks WHERE namespace = 'nul-text'",
                               "SELECT coalesce(speaker, '') FROM documents WHERE namespace = 'nul-text'",
                               "SELECT text FROM task_items WHERE namespace = 'nul-text'")
              for r in db.execute(sql).fetchall()]
    assert len(stored) == len(fact["stored"]) + 5 and not [t for t in stored if "\x00" in t]
    assert "I moved to Berlin last May." in stored and "我搬到柏林了。" in stored
    answer = module_client.post("/v1/recall", json={**ns, "query": "Where did Anna move? 柏林", "task_id": "t-nul"})
    rendered = answer.json()["rendered"]
    assert "Berlin" in rendered and "\x00" not in rendered
    assert module_client.delete("/v1/namespaces/nul-text").status_code == 200


def test_a_long_integer_in_an_uploaded_conversation_is_refused(tmp_path: Path, embedder: Embedder) -> None:
    config = make_config(tmp_path).replace("limits", max_text_chars=20_000)
    with Memory(config, embedder=embedder) as memory:
        client = local_client(create_app(config, memory))
        for name, data, words in [
            ("chat.json", b'[{"role": "user", "content": "hi", "n": ' + _BIG + b"}]", "chat.json holds an integer"),
            ("chat.jsonl", b'{"role": "user", "content": "hi"}\n{"role": "user", "content": "x", "n": ' + _BIG + b"}",
             "chat.jsonl line 2 holds an integer of more than 4,300 digits"),
        ]:
            answer = client.post("/v1/documents", **_upload(name, data))
            assert answer.status_code == 422 and words in answer.json()["detail"], answer.text
        assert memory.experience.list_documents("u1") == []


def test_an_unexpected_failure_answers_the_json_error_body(tmp_path: Path, embedder: Embedder,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    """A 5xx is a bug, and still the API.md body: InternalError, no traceback to the caller, one in the log."""
    config = make_config(tmp_path)
    with Memory(config, embedder=embedder) as memory:
        app = create_app(config, memory)

        def fails() -> None:
            raise ZeroDivisionError("a secret 4711 in the message")

        app.add_api_route("/v1/fails", fails)
        client = local_client(app, raise_server_exceptions=False)
        with caplog.at_level(logging.ERROR, logger="api.errors"):
            answer = client.get("/v1/fails")
        assert answer.status_code == 500 and answer.headers["content-type"] == "application/json"
        body = answer.json()
        assert body["error"] == "InternalError" and "ZeroDivisionError" in body["detail"]
        assert "4711" not in body["detail"] and "Traceback" not in body["detail"]
        assert any(r.exc_info and r.exc_info[0] is ZeroDivisionError for r in caplog.records)
        # A store broken under the service (a table dropped by hand) is answered the same way.
        memory.store.db.execute("DROP TABLE facts")
        broken = client.get("/v1/facts", params={"namespace": "u1"})
        assert broken.status_code >= 500 and set(broken.json()) == {"error", "detail"}
        metrics = client.get("/metrics").text
        assert 'memory_requests_total{method="GET",route="/v1/fails",status="500"} 1.0' in metrics


@pytest.mark.parametrize("query", [b"x \\ud800 y", b"\\udfff\\u4e2d\\u6587"])
def test_a_search_echoes_a_lone_surrogate_as_a_replacement_character(module_client: TestClient, query: bytes) -> None:
    # A query is read, never stored, so a lone surrogate in it is not refused; the answer repeats the query,
    # which JSON can only carry once the surrogate is replaced.
    answer = module_client.post("/v1/search", **_json(b'{"namespace": "u1", "query": "' + query + b'"}'))
    assert answer.status_code == 200 and "\ufffd" in answer.json()["query"]
