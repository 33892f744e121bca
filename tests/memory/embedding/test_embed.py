"""The embedder: bundled model, offline, normalised vectors, batched, nothing encoded twice."""

from __future__ import annotations

import os

import numpy as np
import pytest

from memory.config import EmbeddingConfig
from memory.embedding import MINILM, Embedder, load_embedder
from memory.errors import ConfigError


def test_loads_offline_from_the_installed_package(embedder: Embedder) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert (embedder.identity.model, embedder.identity.dimension) == (MINILM.model, MINILM.dimension)
    assert embedder.dimension == 384


def test_vectors_are_unit_length_and_ordered(embedder: Embedder) -> None:
    texts = ["The cat sat on the mat.", "预算不超过500元", "The cat sat on the mat."]
    vectors = embedder.encode_documents(texts)
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], vectors[2])


def test_related_texts_are_closer(embedder: Embedder) -> None:
    query = embedder.encode_query("Where does Anna live?")
    docs = embedder.encode_documents(["Anna moved to Berlin last May.", "The recipe needs two eggs."])
    assert float(docs[0] @ query) > float(docs[1] @ query)


def test_empty_inputs_give_empty_arrays(embedder: Embedder) -> None:
    assert embedder.encode_documents([]).shape == (0, 384)
    assert embedder.encode_queries([]).shape == (0, 384)


def test_loaded_once_per_process(embedder: Embedder) -> None:
    assert load_embedder(EmbeddingConfig()) is embedder


def test_unknown_model_is_refused_not_downloaded() -> None:
    with pytest.raises(ConfigError, match="never downloaded"):
        load_embedder(EmbeddingConfig(model="sentence-transformers/all-mpnet-base-v2"))


def test_lone_surrogates_do_not_crash_the_model(embedder: Embedder) -> None:
    vectors = embedder.encode_queries(["broken \ud800 text", "预算\udfff"])
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
