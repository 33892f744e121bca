"""Experience-tier fixtures: a real store under tmp_path, the session's real MiniLM, and texts in two languages."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pytest

from memory.config import Config
from memory.database import Database
from memory.embedding import Embedder, Progress
from memory.experience import ChunkInput, ExperienceMemory, lexical
from memory.store import Store, open_store
from memory.tokens import get_counter
from tests.conftest import ManualClock

ENGLISH = {
    "loader": "The CSV loader streams rows in batches of 500 and retries a failed batch twice before giving up.",
    "deploy": "Deployments run on Fridays only after the staging smoke tests pass and the on-call engineer agrees.",
    "cache": "The embedding cache lives in a SQLite file keyed by model name and the hash of each text.",
    "garden": "Tomatoes need six hours of sun a day and deep watering twice a week in the summer months.",
}
CHINESE = {
    "dumpling": "北方人过年习惯包饺子，饺子馅通常用猪肉和白菜，象征团圆和财富。",
    "railway": "京沪高速铁路全长一千三百多公里，二零一一年开通运营，最高时速三百五十公里。",
    "panda": "大熊猫主要生活在四川的山区竹林里，每天要吃十几公斤竹子。",
    "tea": "龙井茶产于杭州西湖一带，是中国著名的绿茶，清明前采摘的明前茶最为珍贵。",
}

# A short conversation in each language (speaker, text), for the tests of conversation turns.
ENGLISH_TALK = [
    ("Melanie", "Did you end up going to that pottery workshop last weekend?"),
    ("Caroline", "Yes! I made a blue bowl and a small vase for my mom."),
    ("Melanie", "That sounds lovely, how is your dog doing?"),
    ("Caroline", "He is fine, we walk by the river every morning."),
]
CHINESE_TALK = [
    ("小李", "你上周末去参加那个陶艺课了吗？"),
    ("小王", "去了！我做了一个蓝色的碗，还给妈妈做了一个小花瓶。"),
    ("小李", "听起来真不错，你的狗最近怎么样？"),
    ("小王", "它很好，我们每天早上都在河边散步。"),
]


# Unique ids for the rows index_rows writes straight into SQLite.
_ROW_IDS = itertools.count()


class CountingEncoder:
    """The real embedder, counting how many document texts it was asked to embed."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self.identity = embedder.identity
        self.embedded: list[str] = []

    def encode_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Embed and remember the texts."""
        self.embedded.extend(texts)
        return self._embedder.encode_documents(texts, progress)

    def encode_query(self, text: str) -> np.ndarray:
        """Embed a query (not counted)."""
        return self._embedder.encode_query(text)


@pytest.fixture()
def store(config: Config, embedder: Embedder, database: Database | None) -> Iterator[Store]:
    """A real store in a fresh folder: its records on each backend in turn, its vectors in embedded Chroma."""
    opened = open_store(config, embedder.identity, database)
    yield opened
    opened.close()


@pytest.fixture()
def encoder(embedder: Embedder) -> CountingEncoder:
    """The session's MiniLM behind a counter."""
    return CountingEncoder(embedder)


@pytest.fixture()
def experience(store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock) -> ExperienceMemory:
    """Experience memory over the fresh store."""
    return ExperienceMemory(store, encoder, get_counter(), config, clock)


def add(experience: ExperienceMemory, namespace: str, doc_id: str, *texts: str, **fields: object) -> object:
    """Store a document whose chunks are `texts`, hashed by their content."""
    chunks = [ChunkInput(text=t, ordinal=i) for i, t in enumerate(texts)]
    return experience.add_document(namespace, doc_id, chunks, content_hash="|".join(texts), **fields)  # type: ignore[arg-type]


@pytest.fixture()
def corpus(experience: ExperienceMemory) -> ExperienceMemory:
    """Four English and four Chinese one-chunk documents in namespace `ns`."""
    for doc_id, text in {**ENGLISH, **CHINESE}.items():
        add(experience, "ns", doc_id, text)
    return experience


def index_rows(store: Store, namespace: str, texts: Sequence[str]) -> list[int]:
    """Chunk rows and their lexical index entries written straight into the records (no model: the lexical side
    only)."""
    with store.transaction() as db:
        rowids = []
        for text in texts:
            rowids.append(int(db.execute(
                "INSERT INTO chunks (id, namespace, doc_id, doc_version, ordinal, text, text_hash, tokens, "
                "created_at, updated_at) VALUES (?, ?, 'd', 1, 0, ?, 'h', 1, '2026-01-01', '2026-01-01') "
                "RETURNING rowid", [f"{namespace}-{next(_ROW_IDS)}", namespace, text]).fetchone()[0]))
        lexical.index(db, [(r, namespace, lexical.index_terms(t)) for r, t in zip(rowids, texts, strict=True)])
    return rowids


def assert_boosted(
    fused: Callable[[float, str], dict[str, float]], query: str, plain: str | None, favoured: str, other: str
) -> None:
    """A boost of 0.5 raises the `favoured` result's fused score (fused(boost, query) maps results to theirs) by
    exactly half, leaves the `other` one's as it was, and leaves a `plain` query that names nothing unchanged (None
    for a boost that reads no query)."""
    off, on = fused(0.0, query), fused(0.5, query)
    assert on[favoured] == pytest.approx(off[favoured] * 1.5, abs=1e-3)
    assert on[other] == pytest.approx(off[other], abs=1e-4)
    assert max(on, key=on.__getitem__) == favoured
    if plain is not None:
        assert fused(0.5, plain) == fused(0.0, plain)
