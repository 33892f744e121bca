"""The identity rule of add_text: an explicit doc_id names (and updates) a document; without one nothing existing
is overwritten, and content already stored answers unchanged with its id. English and Chinese."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memory.errors import ConflictError, ValidationError
from memory.experience import DocumentResult, MemoryTurn, TextInput
from memory.service import Memory

TEXTS = {
    "en": ("# Loader\n\nThe loader reads CSV files from S3 every night.",
           "# Loader\n\nThe loader reads Parquet files from GCS every hour."),
    "zh": ("# 加载器\n\n加载器每天晚上从S3读取CSV文件。", "# 加载器\n\n加载器每小时从GCS读取Parquet文件。"),
}
LANGUAGES = pytest.mark.parametrize("lang", sorted(TEXTS))


def _texts(memory: Memory, namespace: str = "ns") -> dict[str, list[str]]:
    """Each stored document's chunk texts, by id."""
    rows = memory.store.db.execute(
        "SELECT doc_id, text FROM chunks WHERE namespace = ? ORDER BY doc_id, ordinal", [namespace]).fetchall()
    out: dict[str, list[str]] = {}
    for doc_id, text in rows:
        out.setdefault(doc_id, []).append(text)
    return out


def _adder(memory: Memory) -> Callable[..., DocumentResult]:
    """add_text with the document's fields as keywords."""
    return lambda namespace, text, **fields: memory.experience.add_text(namespace, TextInput(text, **fields))


@LANGUAGES
def test_an_explicit_doc_id_updates_its_document(memory: Memory, lang: str) -> None:
    first, second = TEXTS[lang]
    add = _adder(memory)
    assert add("ns", first, doc_id="notes.md").status == "created"
    assert add("ns", first, doc_id="notes.md").status == "unchanged"
    assert add("ns", second, doc_id="notes.md").status == "updated"
    assert memory.experience.get_document("ns", "notes.md").version == 2
    assert second.split("\n\n")[1] in _texts(memory)["notes.md"][0]


@LANGUAGES
def test_a_derived_name_with_other_content_is_a_conflict_and_keeps_the_stored_version(
    memory: Memory, lang: str
) -> None:
    first, second = TEXTS[lang]
    add = _adder(memory)
    assert add("ns", first, derived_id="notes.md").doc_id == "notes.md"
    before = _texts(memory)
    with pytest.raises(ConflictError) as raised:
        add("ns", second, derived_id="notes.md")
    assert "'notes.md' already exists" in str(raised.value)
    assert "send doc_id='notes.md' to replace it, or another doc_id to keep both" in str(raised.value)
    assert _texts(memory) == before and memory.experience.get_document("ns", "notes.md").version == 1
    # The same content under that name again is unchanged, even when what is stored beside it differs.
    again = add("ns", first, derived_id="notes.md", source="/elsewhere/notes.md", updated_at="2020-01-01T00:00:00Z")
    assert (again.doc_id, again.status) == ("notes.md", "unchanged")


@LANGUAGES
def test_the_same_name_in_another_folder_is_another_document(memory: Memory, lang: str) -> None:
    first, second = TEXTS[lang]
    add = _adder(memory)
    assert add("ns", first, derived_id="notes.md").status == "created"
    other = add("ns", second, derived_id="other/notes.md")
    assert (other.doc_id, other.status) == ("other/notes.md", "created")
    assert sorted(_texts(memory)) == ["notes.md", "other/notes.md"]


@LANGUAGES
def test_the_same_content_under_another_name_answers_the_stored_id(memory: Memory, lang: str) -> None:
    first, _ = TEXTS[lang]
    add = _adder(memory)
    add("ns", first, derived_id="notes.md")
    copy = add("ns", first, derived_id="copy of notes.md", title="another title")
    assert (copy.doc_id, copy.status) == ("notes.md", "unchanged")
    assert list(_texts(memory)) == ["notes.md"]
    # Only a document counts: a conversation turn with that text is no reason to skip it...
    memory.experience.add_memories("ns2", [MemoryTurn(first)])
    assert add("ns2", first, derived_id="notes.md").status == "created"
    # ...and another namespace holds its own copy.
    assert add("ns3", first, derived_id="copy.md").doc_id == "copy.md"


@LANGUAGES
def test_the_same_json_text_twice_is_stored_once(memory: Memory, lang: str) -> None:
    first, second = TEXTS[lang]
    add = _adder(memory)
    created = add("ns", first)
    assert created.doc_id.startswith("d-") and created.status == "created"
    assert add("ns", first) == type(created)(created.doc_id, created.chunks, "unchanged")
    assert add("ns", second).doc_id != created.doc_id  # other text, other id: both kept
    assert len(_texts(memory)) == 2


def test_a_source_names_the_document_it_came_from(memory: Memory) -> None:
    """Without doc_id or derived_id the source derives the id: the same source with other text is a conflict."""
    first, second = TEXTS["en"]
    add = _adder(memory)
    created = add("ns", first, source="https://example.com/loader")
    with pytest.raises(ConflictError, match=created.doc_id):
        add("ns", second, source="https://example.com/loader")
    assert add("ns", second, source="https://example.com/loader", doc_id=created.doc_id).status == "updated"


def test_nul_is_dropped_from_the_text_and_refused_in_names(memory: Memory) -> None:
    add = _adder(memory)
    stored = add("ns", "The loader\x00 reads CSV.\x00", derived_id="nul.md")
    assert _texts(memory)["nul.md"] == ["The loader reads CSV."] and stored.status == "created"
    assert add("ns", "The loader reads CSV.", derived_id="nul.md").status == "unchanged"
    for field in ("doc_id", "derived_id", "title", "source", "project"):
        with pytest.raises(ValidationError, match=f"document.{field} holds a NUL character at 1"):
            add("ns", "Other text.", **{field: "a\x00b"})  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="non-empty"):
        add("ns", "\x00 \x00")
