"""The erase pass (memory.erase): it removes only the segment folders no collection owns (every vector generation
of a live namespace is kept), and a pass a killed process or an older version left owed runs at the next open."""

from __future__ import annotations

import ctypes
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from memory import TextInput
from memory.config import Config
from memory.embedding import Embedder
from memory.erase import zero_fresh_memory
from memory.service import Memory
from memory.store import collection_name
from tests.security.test_disk_trace import BOUND_S, MARKERS, holding, vector_folder


def _folders(root: Path) -> set[str]:
    return {p.name for p in (root / "chroma").iterdir() if p.is_dir()}


def test_only_folders_no_collection_owns_are_removed(memory: Memory) -> None:
    root, store = memory.config.data_path.resolve(), memory.store
    memory.add_document("a", TextInput("The alpha plan.", doc_id="d"))
    memory.add_document("b", TextInput("The beta plan.", doc_id="d"))
    unit = np.full((1, store.identity.dimension), store.identity.dimension ** -0.5, dtype=np.float32)
    following = store.collection("a", create=True, generation=store.generation + 1)  # as a re-embed writes it
    assert following is not None
    following.add(ids=["c-next-1-0"], embeddings=unit)
    stray = store.collection("zqstray", create=True)
    assert stray is not None
    stray.add(ids=["c-stray-1-0"], embeddings=unit)
    names = {"a": collection_name("a"), "a next": collection_name("a", generation=store.generation + 1),
             "b": collection_name("b"), "stray": collection_name("zqstray")}
    folders = {key: vector_folder(root, name).name for key, name in names.items()}
    store.chroma.delete_collection(names["stray"])  # behind the store's back, as a re-embed's clean-up does
    assert set(folders.values()) <= _folders(root), "Chroma leaves a dropped collection's folder"

    memory.delete_namespace("b")
    assert store.eraser.wait(BOUND_S)

    assert _folders(root) == {folders["a"], folders["a next"]}
    assert following.count() == 1 and "alpha" in memory.recall("a", "alpha plan", min_score=0.0).rendered


@pytest.mark.parametrize("history", ["killed", "older-version"])
def test_a_pass_left_owed_runs_at_the_next_open(config: Config, embedder: Embedder, tmp_path: Path,
                                                history: str) -> None:
    marker = MARKERS["en"]
    crashed = tmp_path / "crashed"
    with Memory(config, embedder=embedder) as memory:
        memory.add_document("ns", TextInput(f"The secret note {marker} must vanish. " * 40, doc_id="zqdocgone"))
        memory.add_document("ns", TextInput("The zqxcontrol note stays.", doc_id="kept"))
        gone = [marker, "zqdocgone", *[r[0] for r in memory.store.db.execute(
            "SELECT id FROM chunks WHERE doc_id = 'zqdocgone'").fetchall()]]
        with memory.store.write_lock:  # the pass waits: the copy is the disk as a kill right after the delete left it
            memory.experience.delete_document("ns", "zqdocgone")
            shutil.copytree(config.data_path.resolve(), crashed,
                            ignore=shutil.ignore_patterns("memory.lock", "*-shm"))
    assert set(holding(crashed, gone)) == set(gone), "the kill left the deleted data on disk"
    if history == "older-version":  # a version before erasing recorded nothing
        conn = sqlite3.connect(crashed / "memory.db", isolation_level=None)
        conn.execute("DELETE FROM meta WHERE key IN ('erase_pending', 'erase_format')")
        conn.close()

    with Memory(config.replace("service", data_dir=str(crashed)), embedder=embedder) as again:
        assert again.store.eraser.wait(BOUND_S)
        assert holding(crashed, gone) == {}
        assert "zqxcontrol" in again.recall("ns", "zqxcontrol note", min_score=0.0).rendered


def test_fresh_memory_comes_zeroed_once_a_store_is_open(memory: Memory) -> None:
    """Embedded Chroma writes a new index's buffers to disk whole without zeroing them (memory.erase): with the
    store open, memory malloc hands out holds none of what the process freed before."""
    assert zero_fresh_memory(), "glibc's mallopt(M_PERTURB) is on with an embedded store"
    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    size = 4096  # past glibc's per-thread cache of small chunks, below its mmap threshold: a recycled heap chunk
    secret = MARKERS["zh"].encode("utf-8") * (size // len(MARKERS["zh"].encode("utf-8")))
    freed = []
    for _ in range(8):
        block = libc.malloc(size)
        ctypes.memmove(block, secret, len(secret))
        freed.append(block)
    for block in freed:
        libc.free(block)
    fresh = [libc.malloc(size) for _ in range(8)]
    try:
        assert all(ctypes.string_at(block, size) == bytes(size) for block in fresh)
    finally:
        for block in fresh:
            libc.free(block)


_KILLED_MID_WRITE = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("CREATE TABLE segments (id TEXT)")
conn.execute("INSERT INTO segments VALUES ('0b1c2d3e-0000-4000-8000-000000000001')")
conn.execute("PRAGMA cache_size = 10")  # so the open transaction's pages reach the file before the kill
conn.execute("BEGIN")
conn.execute("INSERT INTO segments SELECT hex(randomblob(400)) FROM (WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL "
             "SELECT n + 1 FROM r WHERE n < 20000) SELECT n FROM r)")
os._exit(9)
"""


def test_orphans_are_found_in_a_chroma_file_a_killed_process_left_mid_write(tmp_path: Path) -> None:
    """A hot journal (Chroma killed mid-write) cannot be read read-only; it is rolled back and read instead."""
    import subprocess
    import sys

    from memory.erase import orphan_folders

    kept, orphan = (tmp_path / "0b1c2d3e-0000-4000-8000-000000000001", tmp_path / "0b1c2d3e-0000-4000-8000-00000000000f")
    kept.mkdir()
    orphan.mkdir()
    subprocess.run([sys.executable, "-c", _KILLED_MID_WRITE, str(tmp_path / "chroma.sqlite3")], check=False)
    assert (tmp_path / "chroma.sqlite3-journal").exists()
    with pytest.raises(sqlite3.OperationalError, match="readonly"):  # what the pass met before
        sqlite3.connect(f"file:{tmp_path / 'chroma.sqlite3'}?mode=ro", uri=True).execute(
            "SELECT id FROM segments").fetchall()
    assert orphan_folders(tmp_path) == [orphan]
    conn = sqlite3.connect(tmp_path / "chroma.sqlite3")
    assert conn.execute("SELECT count(*) FROM segments").fetchone() == (1,)  # the killed write rolled back
    conn.close()
