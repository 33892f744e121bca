"""SIGKILL the real service mid-write (also mid-replacement): documents stay whole at one revision, acks survive."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bench.reliability_crash import NS, Ledger, check_store, doc_text, run_trials, title
from memory import TextInput
from memory.config import Config
from memory.embedding import Embedder
from memory.experience.dense import VectorIndex
from memory.service import Memory


@pytest.mark.slow
def test_sigkill_under_load_leaves_whole_documents_and_keeps_acknowledged_writes(
    tmp_path: Path, embedder: Embedder, seed: int
) -> None:
    report = run_trials(2, tmp_path, embedder, seed=seed, max_delay=0.8)
    assert report.inconsistencies == (), f"seed {seed}: {report.inconsistencies}"
    assert report.kills_during_replacement >= 1  # the second trial waits for a replacement in flight
    assert report.acked_documents > 0 and report.acked_facts > 0 and report.acked_items > 0


def _drop_fts_row(memory: Memory, chunk_id: str) -> None:
    memory.store.db.execute("DELETE FROM chunks_fts WHERE rowid = (SELECT rowid FROM chunks WHERE id = ?)", [chunk_id])


def _drop_vector(memory: Memory, chunk_id: str) -> None:
    VectorIndex(memory.store).delete(NS, [chunk_id])


def _tear_version(memory: Memory, chunk_id: str) -> None:
    memory.store.db.execute("UPDATE chunks SET doc_version = doc_version + 1 WHERE id = ?", [chunk_id])


@pytest.mark.parametrize("damage", [_drop_fts_row, _drop_vector, _tear_version])
def test_the_store_check_sees_a_torn_document(
    config: Config, embedder: Embedder, damage: Callable[[Memory, str], None]
) -> None:
    with Memory(config, embedder=embedder) as memory:
        memory.add_document(NS, TextInput(doc_text("d0", 1), title=title("d0", 1), doc_id="d0"))
        ledger = Ledger(revision={"d0": 1})
        assert check_store(memory, ledger, {"d0"}) == ([], {"d0": 1})
        damage(memory, memory.store.db.execute("SELECT id FROM chunks").fetchone()[0])
        problems, _ = check_store(memory, ledger, {"d0"})
        assert problems
