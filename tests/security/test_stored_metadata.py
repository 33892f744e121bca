"""Metadata limits: what is refused before it is stored (library and API alike), and rows an older version stored
that no reader could write back out, which must not break the listings and recalls of their namespace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from api.app import create_app
from memory import TextInput
from memory.config import METADATA_DEPTH_CEILING, load_config
from memory.embedding import Embedder
from memory.errors import ConfigError, TooLargeError, ValidationError
from memory.experience import MemoryTurn
from memory.limits import UNREADABLE, parse_metadata, readable_json
from memory.service import Memory
from tests import local_client
from tests.security.conftest import make_config


def _nested(depth: int, kind: type = dict) -> Any:
    value: Any = {} if kind is dict else []
    for _ in range(depth - 1):
        value = {"a": value} if kind is dict else [value]
    return value


def test_the_depth_limit_is_capped_by_what_readers_carry() -> None:
    with pytest.raises(ConfigError, match=f"max_metadata_depth must be at most {METADATA_DEPTH_CEILING}"):
        load_config(env={"MEMORY_LIMITS_MAX_METADATA_DEPTH": str(METADATA_DEPTH_CEILING + 1)})
    with pytest.raises(ConfigError, match="max_metadata_bytes must be greater than 0"):
        load_config(env={"MEMORY_LIMITS_MAX_METADATA_BYTES": "0"})


@pytest.mark.parametrize("kind", [dict, list])
def test_configured_metadata_limits_hold_for_documents_and_task_items(tmp_path: Path, embedder: Embedder,
                                                                     kind: type) -> None:
    config = make_config(tmp_path).replace("limits", max_metadata_depth=4, max_metadata_bytes=300)
    with Memory(config, embedder=embedder) as memory:
        fits, deep = {"m": _nested(3, kind)}, {"m": _nested(4, kind)}
        assert memory.add_document("ns", TextInput("Four levels fit. 四层可以。", metadata=fits)).status == "created"
        memory.tasks.add("ns", "t1", "note", "Four levels fit.", metadata=fits)
        with pytest.raises(TooLargeError, match=r"nests deeper than 4 levels \(under document.metadata\['m'\]"):
            memory.add_document("ns", TextInput("Five levels do not. 五层不行。", metadata=deep))
        with pytest.raises(TooLargeError, match=r"limits\.max_metadata_depth"):
            memory.tasks.add("ns", "t1", "note", "Five levels do not.", metadata=deep)
        with pytest.raises(TooLargeError, match=r"over the limit of 300 \(limits\.max_metadata_bytes\)"):
            memory.add_document("ns", TextInput("Too big.", metadata={"blob": "元" * 100}))
        with pytest.raises(TooLargeError, match="max_metadata_bytes"):
            memory.tasks.add("ns", "t1", "note", "Too big.", metadata={"blob": "x" * 300})
        with pytest.raises(ValidationError, match=r"metadata\['n'\]\[1\] is an integer of more than 4,300 digits"):
            memory.tasks.add("ns", "t1", "note", "Long number.", metadata={"n": [1, 10**5000]})
        assert [d.metadata for d in memory.experience.list_documents("ns")] == [fits]


def test_conversation_turns_refuse_what_no_reader_could_take_back(memory: Memory) -> None:
    """Memories are held to the configured metadata limits, and to JSON a reader can parse."""
    depth = memory.config.limits.max_metadata_depth
    assert depth <= METADATA_DEPTH_CEILING
    with pytest.raises(TooLargeError, match=f"nests deeper than {depth} levels"):
        memory.remember("ns", [MemoryTurn("deep", metadata={"a": _nested(300, list)})])
    with pytest.raises(TooLargeError, match="max_metadata_bytes"):
        memory.remember("ns", [MemoryTurn("wide", metadata={"a": "x" * (memory.config.limits.max_metadata_bytes + 1)})])
    with pytest.raises(ValidationError, match="digits"):
        memory.remember("ns", [MemoryTurn("big", metadata={"a": {"b": -(10**4400)}})])
    with pytest.raises(ValidationError, match="speaker holds a NUL character"):
        memory.remember("ns", [MemoryTurn("hi", speaker="An\x00na")])
    assert memory.experience.list_documents("ns") == []
    stored, _ = memory.remember("ns", [MemoryTurn("I moved\x00 to Berlin.", speaker="Anna")])
    text = memory.store.db.execute("SELECT text FROM chunks WHERE doc_id = ?", [stored[0].doc_id]).fetchone()[0]
    assert text == "I moved to Berlin."


# Metadata as older versions could store it (nested past what pydantic writes out), or as no version wrote it: an
# integer json cannot read back, a row cut off part-way.
UNREADABLE_ROWS = {
    "deep": json.dumps({"turn": "D1:1", "x": _nested(300)}),
    "big-int": '{"n": ' + "9" * 5000 + "}",
    "cut-off": '{"turn": "D1:1", "x": [1, 2',
}


@pytest.mark.parametrize("row", sorted(UNREADABLE_ROWS))
def test_a_stored_row_no_reader_can_write_back_does_not_break_its_namespace(tmp_path: Path, embedder: Embedder,
                                                                           row: str) -> None:
    config = make_config(tmp_path)
    stored = UNREADABLE_ROWS[row]
    for attempt in ("written", "after a restart"):
        with Memory(config, embedder=embedder) as memory:
            if attempt == "written":
                memory.remember("old", [MemoryTurn("I moved to Berlin last May.", speaker="Anna")])
                memory.add_document("old", TextInput("The loader reads CSV files. 加载器读取CSV文件。", doc_id="loader"))
                memory.tasks.add("old", "t1", "note", "Read the loader first.")
                with memory.store.transaction() as db:  # as an older version left them
                    db.execute("UPDATE documents SET metadata = ? WHERE namespace = 'old'", [stored])
                    db.execute("UPDATE task_items SET metadata = ? WHERE namespace = 'old'", [stored])
            client = local_client(create_app(config, memory))
            params = {"namespace": "old"}
            listed = client.get("/v1/documents", params=params)
            assert listed.status_code == 200, (attempt, listed.text)
            assert all(set(d["metadata"]) == {UNREADABLE} for d in listed.json()["documents"])
            assert client.get("/v1/documents/loader", params=params).json()["metadata"].keys() == {UNREADABLE}
            items = client.get("/v1/tasks/t1/items", params=params)
            assert items.status_code == 200 and set(items.json()["items"][0]["metadata"]) == {UNREADABLE}
            answer = client.post("/v1/recall", json={**params, "query": "Where did Anna move? loader CSV",
                                                     "task_id": "t1", "budget": 400})
            assert answer.status_code == 200, (attempt, answer.text)
            tiers = {i["tier"] for i in answer.json()["items"]}
            assert tiers == {"experience", "task"}
            assert all(UNREADABLE in i["metadata"] for i in answer.json()["items"])
            # What is new is held to today's limits; the stored row itself is left as it was.
            assert memory.store.db.execute("SELECT metadata FROM documents WHERE doc_id = 'loader'").fetchone()[0] \
                == stored


def test_readable_json_passes_what_readers_carry_unchanged() -> None:
    for fine in ("{}", '{"turn": "D3:4", "tags": ["a"]}', json.dumps({"x": _nested(METADATA_DEPTH_CEILING - 1)}),
                 json.dumps({"text": "{[" * 3000})):
        assert readable_json(fine) is fine
    placeholder = json.loads(readable_json(json.dumps({"x": _nested(METADATA_DEPTH_CEILING)})))
    assert list(placeholder) == [UNREADABLE] and "deeper than 100 levels" in placeholder[UNREADABLE]
    assert "not a JSON object" in readable_json("[" + "1, " * 2000 + "1]")
    assert "is not JSON" in readable_json('{"cut": "off')
    assert parse_metadata("{'a': 1}") == {UNREADABLE: "the stored metadata is not JSON this version can read, so it "
                                                       "is not shown; the record itself is intact"}
