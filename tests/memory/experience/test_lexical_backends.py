"""The lexical retriever ranks the same on both backends: the same rows indexed in the SQLite file (FTS5) and in
PostgreSQL (its postings table) give every query the same ids in the same order with the same scores, on random
English and Chinese text and on the real benchmark text (SciFact, CMRC 2018) when ../shared is beside the repo."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from bench.corpora import DATA, BenchDoc, BenchQuery, Corpus, load_cmrc, load_scifact
from bench.lexical_backends import compare
from bench.postgres_cluster import PostgresCluster

_WORDS = {
    "en": ["loader", "rows", "batch", "retry", "deploy", "friday", "staging", "cache", "model", "hash", "tomato",
           "sun", "water", "river", "walk", "dog", "pottery", "bowl", "vase", "café", "naïve"],
    "zh": ["加载器", "批量", "重试", "部署", "周五", "缓存", "模型", "番茄", "阳光", "浇水", "河边", "散步", "陶艺",
           "饺子", "熊猫", "铁路", "龙井", "茶"],
}


def _random_corpus(rng: random.Random, lang: str) -> Corpus:
    words = _WORDS[lang]
    glue = " " if lang == "en" else ""
    docs = tuple(BenchDoc(f"{lang}-{i}", "", glue.join(rng.choices(words, k=rng.randint(1, 30)))) for i in range(300))
    queries = tuple(BenchQuery(f"q{i}", glue.join(rng.sample(words, rng.randint(1, 5))), frozenset())
                    for i in range(80))
    return Corpus(f"random_{lang}", docs, queries)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_random_text_ranks_the_same_on_both_backends(postgres: PostgresCluster, tmp_path: Path, seed: int,
                                                    lang: str) -> None:
    found = compare(_random_corpus(random.Random(seed), lang), 300, 80, postgres, tmp_path)
    assert found.queries == 80 and found.identical == 80
    assert found.max_score_gap <= 1e-9


@pytest.mark.skipif(not (DATA / "beir_scifact").is_dir() or not (DATA / "zh_cmrc2018").is_dir(),
                    reason="SciFact and CMRC 2018 are read from ../shared/benchdata beside the repository (see its "
                           "README.md), which is not there")
@pytest.mark.parametrize("load", [load_scifact, load_cmrc], ids=["scifact-en", "cmrc-zh"])
def test_benchmark_text_ranks_the_same_on_both_backends(postgres: PostgresCluster, tmp_path: Path,
                                                       load: object) -> None:
    corpus = load()  # type: ignore[operator]
    found = compare(corpus, 1000, 200, postgres, tmp_path)
    assert found.queries == 200 and found.identical == 200
    assert found.max_score_gap <= 1e-9
