"""Deleted text does not stay in the SQLite file's free pages (PRAGMA secure_delete), in either language."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.service import Memory


@pytest.mark.parametrize("marker", ["zqxmarkerwordvtk", "独一无二的标记词语"], ids=["en", "zh"])
def test_a_deleted_document_leaves_no_bytes_in_the_database_file(memory: Memory, marker: str) -> None:
    text = f"The secret note {marker} must vanish. " * 40
    result = memory.add_document("ns", text, doc_id="secret")
    assert result.status == "created"
    memory.experience.delete_document("ns", "secret")
    memory.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = b"".join(path.read_bytes() for path in Path(memory.store.db_path).parent.glob("*.db*"))
    assert marker.encode("utf-8") not in raw
