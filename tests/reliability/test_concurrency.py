"""Concurrent clients against the real server (no 5xx, no locked database, no lost write), and vector handles that
survive their namespace being forgotten by another thread."""

from __future__ import annotations

import time

import httpx
import numpy as np
import pytest

from bench.reliability_concurrency import KINDS, Ledger, run_load, store_problems, verify
from bench.server_process import ServerProcess
from memory.config import Config
from memory.embedding import MINILM
from memory.experience.dense import VectorIndex
from memory.store import open_store
from tests.reliability.racing import readers, unit_vectors


@pytest.mark.slow
def test_mixed_concurrent_requests_lose_nothing(server: ServerProcess, seed: int) -> None:
    report = run_load(server.url, threads=8, requests=40, seed=seed, server_log=server.log_text)
    assert set(report.kinds) == set(KINDS) and report.requests == 320
    assert report.server_errors == 0 and report.problems == (), report.problems
    assert report.locked == 0
    assert report.lost == ()
    # The check itself can fail: a write the ledger holds but the service never stored is reported.
    with httpx.Client(base_url=server.url) as client:
        missing = Ledger("load-0", docs={"never-stored": "t"}, pins={"f-000000000000": "k"})
        assert len(verify(client, [missing])) == 2
    server.stop()
    assert store_problems(server.data_dir) == []


def test_a_cached_handle_outlives_the_drop_of_its_namespace(config: Config, seed: int) -> None:
    rng = np.random.default_rng(seed)
    store = open_store(config, MINILM)
    try:
        vectors = VectorIndex(store)  # caches the handle, as the service's searches and writes do
        vectors.add("ns", ["a", "b"], unit_vectors(rng, 2))
        store.drop_collection("ns")  # another thread forgets the namespace underneath the cache
        assert vectors.search("ns", unit_vectors(rng, 1)[0], 5) == [] and vectors.ids("ns") == set()
        vectors.add("ns", ["c"], unit_vectors(rng, 1))  # a new write creates the collection again
        assert vectors.ids("ns") == {"c"} and VectorIndex(store).ids("ns") == {"c"}
    finally:
        store.close()


@pytest.mark.slow
def test_searches_racing_namespace_drops_never_fail(config: Config, seed: int) -> None:
    rng = np.random.default_rng(seed)
    query = unit_vectors(rng, 1)[0]
    store = open_store(config, MINILM)
    shared = VectorIndex(store)

    def search() -> None:
        shared.search("ns", query, 10)
        shared.ids("ns")

    try:
        with readers(search, 3) as failures:
            deadline = time.monotonic() + 3
            rounds = 0
            while time.monotonic() < deadline:
                with store.write_lock:  # as the service writes: one writer at a time
                    shared.add("ns", [f"v{rounds}-{i}" for i in range(20)], unit_vectors(rng, 20))
                with store.write_lock:
                    shared.drop("ns")
                rounds += 1
    finally:
        store.close()
    assert rounds > 5 and failures == []
