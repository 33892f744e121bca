"""A writer killed with SIGKILL half-way leaves the previous (or the new) version whole; repair cleans Chroma."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory import TextInput
from memory.config import Config
from memory.embedding import Embedder
from memory.experience import ExperienceMemory
from memory.experience.dense import VectorIndex
from memory.store import collection_name, open_store
from memory.tokens import get_counter
from tests import ROOT
from tests.memory.experience.crash_writer import version_texts


def kill_mid_write(data_dir: Path, commits: int, extra_delay: float) -> int:
    """Start the writer, let it commit `commits` versions, kill it a moment later; returns the last version seen."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.memory.experience.crash_writer", str(data_dir)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    assert child.stdout is not None
    seen = 0
    try:
        while seen < commits:
            line = child.stdout.readline()
            assert line, "the writer stopped before it was killed"
            seen = int(line)
        time.sleep(extra_delay)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    return seen


@pytest.mark.slow
def test_sigkill_during_rewrites_leaves_one_whole_version(config: Config, embedder: Embedder, seed: int) -> None:
    # The kill lands at a random point of the write cycle (embed, vectors in, SQLite swap, old vectors out).
    delay = random.Random(seed).uniform(0.0, 0.15)
    seen = kill_mid_write(Path(config.service.data_dir), commits=3, extra_delay=delay)
    store = open_store(config, embedder.identity)
    try:
        memory = ExperienceMemory(store, embedder, get_counter(), config)
        memory.repair()
        doc = memory.get_document("ns", "doc")
        assert doc.version >= seen  # a version committed (and printed) is never lost
        rows = store.db.execute(
            "SELECT doc_version, ordinal, text FROM chunks WHERE doc_id = 'doc' ORDER BY ordinal"
        ).fetchall()
        assert [r[2] for r in rows] == version_texts(int(doc.content_hash))
        assert {r[0] for r in rows} == {doc.version} and doc.chunks == 3
        assert store.db.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == 3
        ids = {r[0] for r in store.db.execute("SELECT id FROM chunks").fetchall()}
        assert VectorIndex(store).ids("ns") == ids
        hits = memory.search("ns", f"第{doc.content_hash}版 加载器", k=1)
        assert hits and hits[0].text == version_texts(int(doc.content_hash))[1]
    finally:
        store.close()


def test_repair_drops_a_collection_whose_namespace_has_no_row(config: Config, embedder: Embedder) -> None:
    # What a kill between a new namespace's vector write and its SQLite commit leaves: vectors, no rows. Collections
    # record no namespace name (memory.store), so repair finds this one by its name matching no namespace's.
    store = open_store(config, embedder.identity)
    try:
        memory = ExperienceMemory(store, embedder, get_counter(), config)
        memory.add_text("kept", TextInput("The loader streams rows. 加载器按行读取。", doc_id="doc"))
        vectors = VectorIndex(store)
        vectors.add("zqorphan", ["c1", "c2"], embedder.encode_documents(["one", "二"]))
        before = set(store.collection_names())
        assert all(not (store.chroma.get_collection(n, embedding_function=None).metadata or {}).get("namespace")
                   for n in before)
        report = memory.repair()
        assert report.removed_vectors == 2
        assert set(store.collection_names()) == before - {collection_name("zqorphan")}
        assert VectorIndex(store).ids("kept") == {r[0] for r in store.db.execute("SELECT id FROM chunks")}
    finally:
        store.close()
