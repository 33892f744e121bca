"""Write and search cost against a store of N chunks: real text for FTS5, synthetic unit vectors for Chroma."""

from __future__ import annotations

import hashlib
import random
import re
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.corpora import load_cmrc, load_scifact
from bench.embed_cache import CachedEmbedder
from memory.clock import utc_now
from memory.config import load_config
from memory.embedding import Progress
from memory.experience import ChunkInput, ExperienceMemory
from memory.experience.dense import VectorIndex
from memory.experience.lexical import search as lexical_search
from memory.experience.writer import DocumentInput, DocumentWriter
from memory.store import open_store
from memory.text.analyze import query_terms
from memory.tokens import get_counter

__all__ = ["SyntheticEncoder", "fill", "measure", "random_chunk", "sentence_pool"]

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")


class SyntheticEncoder:
    """Unit vectors drawn from a text's hash: the cost of Chroma without the cost of the model."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    def _vector(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dimension).astype(np.float32)
        return v / np.linalg.norm(v)

    def encode_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """One pseudo-random unit vector per text."""
        vectors = np.stack([self._vector(t) for t in texts])
        if progress is not None:
            progress(len(texts), len(texts))
        return vectors

    def encode_query(self, text: str) -> np.ndarray:
        """Same for a query."""
        return self._vector(text)


def sentence_pool() -> list[str]:
    """Real sentences (over 20 characters) of the SciFact and CMRC corpora."""
    out = []
    for corpus in (load_scifact(), load_cmrc()):
        for doc in corpus.docs:
            out.extend(s for s in _SENTENCE.split(doc.text) if len(s) > 20)
    return out


def random_chunk(rng: random.Random, pool: Sequence[str]) -> str:
    """A chunk of 3-7 sentences drawn from the pool."""
    return " ".join(rng.sample(pool, rng.randint(3, 7)))


def fill(writer: DocumentWriter, namespace: str, size: int, rng: random.Random, pool: Sequence[str]) -> None:
    """Write `size` chunks as two-chunk documents d0, d1, ... in batches of 1,000 documents."""
    for first in range(0, size // 2, 1000):
        docs = [
            DocumentInput(f"d{n}", (ChunkInput(random_chunk(rng, pool), ordinal=0),
                                    ChunkInput(random_chunk(rng, pool), ordinal=1)), f"h{n}")
            for n in range(first, min(first + 1000, size // 2))
        ]
        writer.write(namespace, docs)


def _ms(samples: Sequence[float]) -> str:
    return f"{statistics.median(samples) * 1000:.1f}"


def measure(sizes: Sequence[int], embedder: CachedEmbedder) -> None:
    """Print, per store size: time to add / replace / delete one 3-chunk document, and query latencies."""
    pool = sentence_pool()
    rng = random.Random(11)
    queries = [" ".join(rng.sample(pool, 1)[0].split()[:8]) for _ in range(50)]
    real = embedder._embedder
    texts = [random_chunk(rng, pool) for _ in range(3)]
    start = time.perf_counter()
    real.encode_documents(texts)
    embed_ms = (time.perf_counter() - start) * 1000
    print(f"\nWrite cost (3-chunk document; embedding it with MiniLM on this machine adds {embed_ms:.0f} ms)")
    print("| chunks in store | build (chunks/s) | add doc ms | replace doc ms | delete doc ms "
          "| FTS5 query ms | dense query ms | search ms |")
    print("|---|---|---|---|---|---|---|---|")
    synthetic = SyntheticEncoder(embedder.dimension)
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="exp-scale-") as tmp:
            config = load_config().replace("service", data_dir=str(Path(tmp)))
            store = open_store(config, embedder.identity)
            writer = DocumentWriter(store, VectorIndex(store), synthetic, get_counter(), utc_now)
            start = time.perf_counter()
            fill(writer, "scale", size, rng, pool)
            build = size / (time.perf_counter() - start)
            memory = ExperienceMemory(store, synthetic, get_counter(), config)
            add, replace, delete, fts, dense, full = [], [], [], [], [], []
            for n in range(10):
                chunks = [ChunkInput(random_chunk(rng, pool), ordinal=i) for i in range(3)]
                t0 = time.perf_counter()
                memory.add_document("scale", f"new{n}", chunks, content_hash=f"n{n}")
                t1 = time.perf_counter()
                memory.add_document("scale", f"new{n}", [*chunks[:2], ChunkInput(random_chunk(rng, pool), ordinal=2)],
                                    content_hash=f"m{n}")
                t2 = time.perf_counter()
                memory.delete_document("scale", f"new{n}")
                t3 = time.perf_counter()
                add.append(t1 - t0)
                replace.append(t2 - t1)
                delete.append(t3 - t2)
            vectors = VectorIndex(store)
            for q in queries:
                t0 = time.perf_counter()
                lexical_search(store.db, "scale", query_terms(q), 100)
                t1 = time.perf_counter()
                vectors.search("scale", synthetic.encode_query(q), 100)
                t2 = time.perf_counter()
                memory.search("scale", q, k=10)
                t3 = time.perf_counter()
                fts.append(t1 - t0)
                dense.append(t2 - t1)
                full.append(t3 - t2)
            print(f"| {size:,} | {build:,.0f} | {_ms(add)} | {_ms(replace)} | {_ms(delete)} | {_ms(fts)} "
                  f"| {_ms(dense)} | {_ms(full)} |")
            store.close()
