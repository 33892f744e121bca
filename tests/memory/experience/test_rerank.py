"""Freshness detection, recency decay, the similarity join and reranking rules."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime

import pytest

from memory.config import RetrievalConfig
from memory.experience.freshness import asks_about_time, decay
from memory.experience.fuse import Fused
from memory.experience.rank import Reach
from memory.experience.rerank import Candidate, most_window, rerank, span
from memory.experience.similarity import jaccard, similar_pairs

NOW = datetime(2026, 11, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "temporal"),
    [
        ("When did Anna move to Berlin?", True), ("what happened in 2023", True), ("notes from last year", True),
        ("meeting on 2026-05-01", True), ("how long ago was the launch", True),
        ("他什么时候去的北京", True), ("去年的预算是多少", True), ("2019年的会议", True), ("哪一年开通的", True),
        ("How do I configure the loader?", False), ("after the loader fails, what next", False),
        ("加载器怎么配置", False), ("花了很多时间调试", False),
    ],
)
def test_time_questions_are_recognised_in_both_languages(query: str, temporal: bool) -> None:
    assert asks_about_time(query) is temporal


def test_decay_halves_every_half_life() -> None:
    assert decay("2026-11-30T00:00:00Z", NOW, 365.0) == pytest.approx(1.0)
    assert decay("2025-11-30T00:00:00Z", NOW, 365.0) == pytest.approx(0.5)
    assert decay("2030-01-01T00:00:00Z", NOW, 365.0) == 1.0  # future times do not count as fresher


def test_similar_pairs_finds_exactly_what_brute_force_finds(seed: int) -> None:
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(60)] + ["熊猫", "竹子", "四川"]
    sets = [frozenset(rng.sample(vocabulary, rng.randint(1, 12))) for _ in range(80)]
    sets += [frozenset(s | {"extra"}) for s in sets[:10]] + [frozenset()]
    for some in (sets[:3], sets[75:83], sets[75:84], sets):  # a few sets are compared pairwise, more by prefix
        for threshold in (0.3, 0.5, 0.9, 1.0):
            brute = [(i, j) for i, j in itertools.combinations(range(len(some)), 2)
                     if jaccard(some[i], some[j]) >= threshold]
            assert similar_pairs(some, threshold) == brute


def candidate(cid: str, score: float, terms: str, updated: str, group: str = "g") -> Candidate:
    return Candidate(Fused(cid, score, score, 0.0), group, terms, updated)


def test_newer_of_two_similar_snippets_of_one_group_takes_the_better_place() -> None:
    old = candidate("old", 0.9, "editor vim python work anna", "2021-01-01T00:00:00Z")
    new = candidate("new", 0.8, "editor code python work anna", "2026-01-01T00:00:00Z")
    other = candidate("other", 0.85, "garden tomato sun", "2020-01-01T00:00:00Z", group="h")
    ranked = rerank([old, new, other], {}, NOW, False, RetrievalConfig(recency_weight=0.0), k=5)
    assert [r.candidate.fused.chunk_id for r in ranked] == ["new", "other", "old"]
    assert ranked[2].superseded_by == "new"
    asked = rerank([old, new, other], {}, NOW, True, RetrievalConfig(recency_weight=0.0), k=5)
    assert asked[0].candidate.fused.chunk_id == "old"


def test_coverage_weight_blends_in_the_share_of_query_idf_held() -> None:
    config = RetrievalConfig(coverage_weight=0.5, recency_weight=0.0)
    covered = candidate("a", 0.4, "loader retry", "2026-01-01T00:00:00Z", group="a")
    bare = candidate("b", 0.5, "unrelated", "2026-01-01T00:00:00Z", group="b")
    ranked = rerank([covered, bare], {"loader": 2.0, "retry": 2.0}, NOW, False, config, k=2)
    assert [r.candidate.fused.chunk_id for r in ranked] == ["a", "b"] and ranked[0].coverage == 1.0


def test_duplicates_are_looked_for_only_as_far_as_the_caller_can_use() -> None:
    config = RetrievalConfig(recency_weight=0.0)
    # 40 distinct chunks of 100 tokens, then two copies of one text at places 41 and 42.
    distinct = [Candidate(Fused(f"c{i:02}", 1.0 - i / 100, 0.0, 0.0), f"g{i}", f"word{i} other{i} more{i}",
                          "2026-01-01T00:00:00Z", 100) for i in range(40)]
    copies = [Candidate(Fused(f"d{i}", 0.5 - i / 100, 0.0, 0.0), f"h{i}", "same words in both copies",
                        "2026-01-01T00:00:00Z", 100) for i in range(2)]
    whole = rerank(distinct + copies, {}, NOW, False, config, k=50)
    assert whole[-1].duplicate_of == "d0"  # inside the window of 2k+10
    # The caller uses 500 tokens: 5 chunks reach it, so the window is 2 × 5 + 10 = 20 and the copies lie beyond.
    near = rerank(distinct + copies, {}, NOW, False, config, k=50, reach_tokens=500)
    assert all(r.duplicate_of is None for r in near)
    assert [r.candidate.fused.chunk_id for r in near[:20]] == [r.candidate.fused.chunk_id for r in whole[:20]]


@pytest.mark.parametrize("temporal", [False, True])
@pytest.mark.parametrize("k", [3, 12, 50])
def test_candidates_beyond_reach_never_change_the_k_best(k: int, temporal: bool, seed: int) -> None:
    rng = random.Random(f"{seed}/{k}")
    config = RetrievalConfig(recency_weight=0.1)
    words = [f"w{i}" for i in range(7)]  # few distinct term sets: duplicates in the window sink, others rise
    fused = sorted((Fused(f"c{i:03}", rng.random() ** 3, 0.0, 0.0) for i in range(300)),
                   key=lambda f: (-f.score, f.chunk_id))
    candidates = [Candidate(f, f"g{rng.randint(0, 40)}", " ".join(rng.sample(words, 6)),
                            f"20{rng.randint(10, 26)}-01-01T00:00:00Z", rng.randint(20, 300)) for f in fused]
    kept = Reach((1.0, 1.0), span(config, temporal)).reachable(fused, most_window(k) + k)
    assert kept < len(fused)  # the test means something only when some are cut
    for reach_tokens in (None, 500):
        whole = rerank(candidates, {}, NOW, temporal, config, k, reach_tokens)[:k]
        cut = rerank(candidates[:kept], {}, NOW, temporal, config, k, reach_tokens)[:k]
        assert cut == whole
