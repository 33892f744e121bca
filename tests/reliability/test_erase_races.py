"""Erase passes (memory.erase) running while other threads search, write, delete and drop: nothing fails, and what
the deletes owed is paid once they stop."""

from __future__ import annotations

import time

import numpy as np
import pytest

from memory.config import Config
from memory.embedding import MINILM
from memory.experience.dense import VectorIndex
from memory.store import open_store
from tests.reliability.racing import readers, unit_vectors


@pytest.mark.slow
def test_searches_and_writes_racing_erase_passes_never_fail(config: Config, seed: int) -> None:
    rng = np.random.default_rng(seed)
    query = unit_vectors(rng, 1)[0]
    store = open_store(config, MINILM)
    shared = VectorIndex(store)

    def search() -> None:
        shared.search("ns", query, 10)
        shared.search("other", query, 10)
        store.db.execute("SELECT count(*) FROM meta").fetchone()

    passes = store.eraser.passes
    try:
        with readers(search, 2) as failures:
            deadline = time.monotonic() + 4  # several passes: one starts within a second of a delete
            rounds = 0
            while time.monotonic() < deadline:
                ids = [f"v{rounds}-{i}" for i in range(20)]
                with store.write_lock:  # as the service writes: one writer at a time
                    shared.add("ns", ids, unit_vectors(rng, 20))
                    shared.add("other", ids, unit_vectors(rng, 20))
                with store.transaction() as tx:
                    store.erase_later(tx, vectors_of="ns")
                    shared.delete("ns", ids[:10], scrub=True)
                if rounds % 5 == 4:
                    with store.transaction() as tx:
                        store.erase_later(tx, dropped="other")
                        shared.drop("other")
                rounds += 1
                time.sleep(0.05)
        assert store.eraser.wait(30.0)
        assert rounds > 10 and failures == [] and store.eraser.passes >= passes + 2
        assert store.db.execute("SELECT count(*) FROM meta WHERE key = 'erase_pending'").fetchone()[0] == 0
    finally:
        store.close()
