"""How files are named without a doc_id (ingest.identity), and what ingest_paths does with an edited file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ingest.identity import derived_id, upload_id
from ingest.loaders import iter_paths
from ingest.pipeline import ingest_file, ingest_paths
from memory.config import Config
from memory.embedding import Embedder
from memory.errors import TooLargeError
from memory.service import Memory


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """docs/a/notes.md (English), docs/文档/会议.md (Chinese) and docs/notes.md, each with its own text."""
    root = tmp_path / "docs"
    (root / "a").mkdir(parents=True)
    (root / "文档").mkdir()
    (root / "a" / "notes.md").write_text("# Notes\n\nThe loader reads CSV files from S3.", encoding="utf-8")
    (root / "文档" / "会议.md").write_text("# 会议\n\n周五下午三点开会，讨论加载器。", encoding="utf-8")
    (root / "notes.md").write_text("# Top\n\nDeployments run on Fridays.", encoding="utf-8")
    return root


@pytest.mark.parametrize(("found", "given", "expected"), [
    ("docs/a/notes.md", "docs", "docs/a/notes.md"),
    ("docs/a/notes.md", "docs/", "docs/a/notes.md"),
    ("docs/a/notes.md", "docs/a/notes.md", "notes.md"),
    ("docs/文档/会议.md", "docs", "docs/文档/会议.md"),
    ("docs/a/notes.md", "docs/a", "a/notes.md"),
    ("docs/a/notes.md", "./docs/../docs", "docs/a/notes.md"),
    ("elsewhere/x.md", "docs", "x.md"),  # not under the argument: only its own name is known
])
def test_derived_id_is_relative_to_the_arguments_parent(tmp_path: Path, found: str, given: str,
                                                       expected: str) -> None:
    assert derived_id(tmp_path / found, tmp_path / given) == expected
    assert upload_id(expected) == expected  # sent as an upload's file name, it derives the same id


def test_a_folder_given_as_dot_is_named_after_itself(docs: Path) -> None:
    here = Path.cwd()
    os.chdir(docs)
    try:
        assert derived_id(Path("a/notes.md"), Path(".")) == "docs/a/notes.md"
    finally:
        os.chdir(here)


@pytest.mark.parametrize(("sent", "expected"), [
    ("notes.md", "notes.md"),
    ("other/notes.md", "other/notes.md"),
    ("other\\notes.md", "other/notes.md"),
    ("/home/anna/notes.md", "home/anna/notes.md"),
    ("../../etc/passwd.txt", "etc/passwd.txt"),
    ("./a//b/./c.md", "a/b/c.md"),
    ("笔记/会议.md", "笔记/会议.md"),
    ("../", ""),
])
def test_upload_id_keeps_folders_and_drops_what_names_none(sent: str, expected: str) -> None:
    assert upload_id(sent) == expected


def test_iter_paths_names_every_file_it_finds(docs: Path) -> None:
    assert sorted(f.name for f in iter_paths([docs]) if f.name) == [
        "docs/a/notes.md", "docs/notes.md", "docs/文档/会议.md"]
    assert [f.name for f in iter_paths([docs / "a" / "notes.md"])] == ["notes.md"]


def test_ingest_names_documents_by_relative_path_never_absolute(memory: Memory, docs: Path) -> None:
    outcomes = ingest_paths(memory, "ns", [docs])
    assert sorted(r.doc_id for o in outcomes for r in o.results) == [
        "docs/a/notes.md", "docs/notes.md", "docs/文档/会议.md"]
    assert all(not d.doc_id.startswith("/") for d in memory.experience.list_documents("ns"))
    again = ingest_paths(memory, "ns", [docs])
    assert [r.status for o in again for r in o.results] == ["unchanged"] * 3


def test_an_edited_file_is_kept_without_replace_and_updated_with_it(memory: Memory, docs: Path) -> None:
    ingest_paths(memory, "ns", [docs])
    (docs / "文档" / "会议.md").write_text("# 会议\n\n会议改到周六上午十点。", encoding="utf-8")
    kept = {Path(o.path).name: o for o in ingest_paths(memory, "ns", [docs])}
    meeting = kept["会议.md"]
    assert meeting.results == () and meeting.error is not None
    assert "'docs/文档/会议.md' already exists" in meeting.error and "memory ingest --replace" in meeting.error
    assert kept["notes.md"].error is None  # the other files are not held up by it
    assert memory.experience.get_document("ns", "docs/文档/会议.md").version == 1
    replaced = {Path(o.path).name: o for o in ingest_paths(memory, "ns", [docs], replace=True)}
    assert [(r.doc_id, r.status) for r in replaced["会议.md"].results] == [("docs/文档/会议.md", "updated")]
    document = memory.experience.get_document("ns", "docs/文档/会议.md")
    assert document.version == 2
    rows = memory.store.db.execute("SELECT text FROM chunks WHERE namespace = 'ns' AND doc_id = ?",
                                   [document.doc_id]).fetchall()
    assert any("周六" in r[0] for r in rows)


def test_a_file_named_alone_is_named_by_its_name_and_found_again_inside_its_folder(memory: Memory,
                                                                                  docs: Path) -> None:
    """`memory ingest docs/a/notes.md` then `memory ingest docs/`: one document, not two."""
    single = ingest_paths(memory, "ns", [docs / "a" / "notes.md"])
    assert [(r.doc_id, r.status) for r in single[0].results] == [("notes.md", "created")]
    folder = {o.path: o.results for o in ingest_paths(memory, "ns", [docs])}
    assert [(r.doc_id, r.status) for r in folder[str(docs / "a" / "notes.md")]] == [("notes.md", "unchanged")]
    assert sorted(d.doc_id for d in memory.experience.list_documents("ns")) == [
        "docs/notes.md", "docs/文档/会议.md", "notes.md"]


def test_a_files_conversations_count_together_against_max_batch(tmp_path: Path, config: Config,
                                                                embedder: Embedder) -> None:
    """Twelve one-message conversations in one .jsonl are twelve turns of one batch, not twelve batches."""
    chat = tmp_path / "chats.jsonl"
    chat.write_text("\n".join(json.dumps({"id": f"c{i}", "messages": [{"role": "user", "content": f"hello {i}"}]})
                              for i in range(12)), encoding="utf-8")
    with Memory(config.replace("limits", max_batch=10), embedder=embedder) as memory:
        with pytest.raises(TooLargeError, match=r"12 messages in one request, over limits\.max_batch"):
            ingest_file(memory, "ns", chat)
        assert memory.experience.list_documents("ns") == []
    with Memory(config.replace("limits", max_batch=12), embedder=embedder) as memory:
        assert len(ingest_file(memory, "ns", chat)) == 12
