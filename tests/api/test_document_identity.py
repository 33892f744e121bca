"""POST /v1/documents without doc_id overwrites nothing: an upload is named by its file name as sent (folders
included), content already stored answers unchanged, other content under a taken name answers 409."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ingest.identity import derived_id
from ingest.pipeline import ingest_paths
from memory.service import Memory

NOTES = {
    "en": ("# Notes\n\nThe loader reads CSV files from S3.", "# Notes\n\nThe loader reads Parquet files from GCS."),
    "zh": ("# 笔记\n\n加载器从S3读取CSV文件。", "# 笔记\n\n加载器从GCS读取Parquet文件。"),
}
LANGUAGES = pytest.mark.parametrize("lang", sorted(NOTES))


def _upload(client: TestClient, name: str, text: str, **fields: str) -> Any:
    return client.post("/v1/documents", files={"file": (name, text.encode())}, data={"namespace": "u1", **fields})


def _ids(client: TestClient) -> list[str]:
    return sorted(d["doc_id"] for d in client.get("/v1/documents", params={"namespace": "u1"}).json()["documents"])


@LANGUAGES
def test_a_file_of_the_same_name_in_another_folder_replaces_nothing(client: TestClient, lang: str) -> None:
    """The reported reproduction: `other/notes.md` silently replaced `notes.md`."""
    first, second = NOTES[lang]
    assert _upload(client, "notes.md", first).json()["doc_id"] == "notes.md"
    other = _upload(client, "other/notes.md", second).json()
    assert (other["doc_id"], other["status"]) == ("other/notes.md", "created")
    assert _ids(client) == ["notes.md", "other/notes.md"]
    shown = client.get("/v1/documents/notes.md", params={"namespace": "u1"}).json()
    assert shown["version"] == 1 and shown["source"] == "notes.md"


@LANGUAGES
def test_other_content_under_a_taken_name_is_409_until_doc_id_says_replace(client: TestClient, lang: str) -> None:
    first, second = NOTES[lang]
    _upload(client, "notes.md", first)
    assert _upload(client, "notes.md", first).json()["status"] == "unchanged"
    refused = _upload(client, "notes.md", second)
    assert refused.status_code == 409
    assert refused.json() == {"error": "Conflict", "detail": (
        "document 'notes.md' already exists in namespace 'u1' with other content, and nothing was overwritten; "
        "send doc_id='notes.md' to replace it, or another doc_id to keep both")}
    assert client.get("/v1/documents/notes.md", params={"namespace": "u1"}).json()["version"] == 1
    replaced = _upload(client, "notes.md", second, doc_id="notes.md").json()
    assert (replaced["doc_id"], replaced["status"]) == ("notes.md", "updated")
    kept = _upload(client, "notes.md", first, doc_id="notes-v1.md").json()
    assert (kept["doc_id"], kept["status"]) == ("notes-v1.md", "created")
    assert _ids(client) == ["notes-v1.md", "notes.md"]


@LANGUAGES
def test_the_same_content_under_another_name_is_stored_once(client: TestClient, lang: str) -> None:
    first, _ = NOTES[lang]
    _upload(client, "notes.md", first)
    copy = _upload(client, "backup/copy of notes.md", first).json()
    assert (copy["doc_id"], copy["status"]) == ("notes.md", "unchanged")
    as_json = client.post("/v1/documents", json={"namespace": "u1", "text": first, "source": "clipboard"}).json()
    assert (as_json["doc_id"], as_json["status"]) == ("notes.md", "unchanged")
    assert _ids(client) == ["notes.md"]


@LANGUAGES
def test_json_text_without_id_twice_is_unchanged_and_a_source_is_a_name(client: TestClient, lang: str) -> None:
    first, second = NOTES[lang]
    body = {"namespace": "u1", "text": first}
    created = client.post("/v1/documents", json=body).json()
    assert created["status"] == "created"
    assert client.post("/v1/documents", json=body).json() == {**created, "status": "unchanged"}
    named = {"namespace": "u1", "text": second, "source": "wiki/loader"}
    assert client.post("/v1/documents", json=named).json()["status"] == "created"
    edited = client.post("/v1/documents", json={**named, "text": second + "\n\nMore."})
    assert edited.status_code == 409 and "send doc_id=" in edited.json()["detail"]
    assert len(_ids(client)) == 2


@LANGUAGES
def test_an_upload_then_the_cli_path_ingest_of_the_same_file_is_unchanged(client: TestClient, memory: Memory,
                                                                          tmp_path: Path, lang: str) -> None:
    """Once through REST, once through `memory ingest` (file and folder arguments): one document."""
    first, _ = NOTES[lang]
    folder = tmp_path / "docs"
    folder.mkdir()
    path = folder / "notes.md"
    path.write_text(first, encoding="utf-8")
    uploaded = _upload(client, derived_id(path, path), first).json()
    assert (uploaded["doc_id"], uploaded["status"]) == ("notes.md", "created")
    for argument in (path, folder):
        outcome = ingest_paths(memory, "u1", [argument])
        assert [(r.doc_id, r.status) for o in outcome for r in o.results] == [("notes.md", "unchanged")]
    assert _ids(client) == ["notes.md"]
    # And the other way round: a folder ingested first, then a client sending the CLI's name for the file.
    ingest_paths(memory, "u2", [folder])
    sent = client.post("/v1/documents", files={"file": (derived_id(path, folder), first.encode())},
                       data={"namespace": "u2"}).json()
    assert (sent["doc_id"], sent["status"]) == ("docs/notes.md", "unchanged")


@pytest.mark.parametrize(("name", "text", "says"), [
    ("notes/day 1.json", '[{"role": "user", "content": "hi"},', "notes/day 1.json is not valid JSON"),
    ("会议/记录.jsonl", '{"role": "user", "content": "你好"}\n{"role": ', "会议/记录.jsonl line 2 is not valid JSON"),
    ("empty.md", "   \n", "empty.md is empty"),
], ids=["en", "zh", "empty"])
def test_an_upload_s_error_calls_the_file_by_the_name_it_was_sent_with(client: TestClient, name: str, text: str,
                                                                       says: str) -> None:
    answer = _upload(client, name, text)
    assert answer.status_code == 422 and answer.json()["error"] == "ValidationError"
    detail = answer.json()["detail"]
    assert detail.startswith(says) and "/tmp" not in detail and tempfile.gettempdir() not in detail
    assert _ids(client) == []  # nothing stored
