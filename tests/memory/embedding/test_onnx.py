"""The onnx backends: built from the bundled model, cached, checked against torch, no torch at run time; "auto"
keeps an existing store on its own backend and `memory reembed` moves it over."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cli.main import main
from memory.config import Config, EmbeddingConfig
from memory.embedding import Embedder, load_embedder, onnx_minilm
from memory.errors import ConfigError, StoreMismatchError
from memory.experience import ChunkInput
from memory.service import Memory
from memory.store import stored_identity
from tests import ROOT

TEXTS = {
    "en": ["Never use Python 2 syntax in the examples.",
           "The tidal power plant at La Rance has run since 1966; its 24 turbines give 240 MW at peak.",
           "Anna moved to Berlin last May and started a job at a bakery in Kreuzberg. " * 4],
    "zh": ["预算不超过500元，只分析A列和B列。",
           "大熊猫主要生活在四川的山区竹林里，每天要吃十几公斤竹子。",
           "京沪高速铁路全长一千三百多公里，二零一一年开通运营，最高时速三百五十公里。" * 4],
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_int8_vectors_agree_with_torch_fp32(embedder: Embedder, torch_embedder: Embedder, lang: str) -> None:
    got = embedder.encode_documents(TEXTS[lang])
    expected = torch_embedder.encode_documents(TEXTS[lang])
    cosines = (got * expected).sum(axis=1)
    assert cosines.min() >= 0.97 and cosines.mean() >= 0.98, cosines


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_fp32_graph_gives_the_torch_vectors(torch_embedder: Embedder, lang: str) -> None:
    fp32 = load_embedder(EmbeddingConfig(backend="onnx"))
    assert fp32.identity.backend == "onnx"
    assert np.allclose(fp32.encode_documents(TEXTS[lang]), torch_embedder.encode_documents(TEXTS[lang]), atol=1e-4)


def test_the_runtime_path_imports_no_torch() -> None:
    code = ("import sys; from memory.config import load_config; from memory.embedding import load_embedder; "
            "e = load_embedder(load_config().embedding); e.encode_query('x'); e.encode_documents(['a', '预算']); "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_graph_is_built_once_into_cache_dir_and_a_damaged_one_is_rebuilt(tmp_path: Path) -> None:
    config = EmbeddingConfig(backend="onnx-int8", cache_dir=str(tmp_path / "models"))
    path = onnx_minilm.graph_path(config)
    assert path.parent == tmp_path / "models" and not path.exists()
    stale = path.with_name("all-MiniLM-L6-v2-int8-000000000000.onnx")  # an earlier recipe's graph
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    first = onnx_minilm.load(config)
    assert path.exists() and not stale.exists()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no build leftovers beside it
    vector = first.encode_query("预算不超过500元")
    path.write_bytes(b"not a graph")  # a disk error, or a copy cut short
    again = onnx_minilm.load(config)
    assert np.allclose(again.encode_query("预算不超过500元"), vector, atol=1e-6)


def test_only_the_bundled_model_on_the_cpu() -> None:
    with pytest.raises(ConfigError, match="runs the bundled all-MiniLM-L6-v2 only"):
        onnx_minilm.load(EmbeddingConfig(backend="onnx-int8", model="/models/other"))
    with pytest.raises(ConfigError, match="on the CPU only"):
        onnx_minilm.load(EmbeddingConfig(backend="onnx", device="cuda"))


def _fill(config: Config, embedder: Embedder) -> None:
    with Memory(config, embedder=embedder) as memory:
        memory.experience.add_document("ns", "loader", [ChunkInput(text=TEXTS["en"][1])], content_hash="a")
        memory.experience.add_document("ns", "panda", [ChunkInput(text=TEXTS["zh"][1])], content_hash="b")


def test_auto_opens_a_torch_built_store_with_torch_and_refuses_to_mix(config: Config,
                                                                       torch_embedder: Embedder) -> None:
    _fill(config, torch_embedder)
    with Memory(config) as memory:  # backend "auto": the store's own
        assert memory.embedder is torch_embedder
        assert memory.health().backend == "sentence-transformers"
        assert memory.experience.search("ns", "大熊猫吃什么", 1)[0].doc_id == "panda"
    with pytest.raises(StoreMismatchError, match="embedding_backend is 'sentence-transformers' in the store"):
        Memory(config.replace("embedding", backend="onnx-int8"))


def test_reembed_moves_a_torch_built_store_to_the_default(config: Config, torch_embedder: Embedder,
                                                          embedder: Embedder,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    _fill(config, torch_embedder)
    assert main(["reembed", "--data", config.service.data_dir]) == 0
    assert "sentence-transformers/all-MiniLM-L6-v2 (384) -> onnx-int8/all-MiniLM-L6-v2 (384)" in capsys.readouterr().out
    identity = stored_identity(config)
    assert identity is not None and identity.embedding_backend == "onnx-int8"
    with Memory(config) as memory:
        assert memory.embedder is embedder
        assert memory.experience.search("ns", "tidal turbines at La Rance", 1)[0].doc_id == "loader"


def test_a_cache_dir_that_cannot_be_written_says_which_setting_to_change(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder should be")
    with pytest.raises(ConfigError, match=r"could not be written to .*set embedding\.cache_dir"):
        onnx_minilm.load(EmbeddingConfig(backend="onnx-int8", cache_dir=str(blocked / "models")))
