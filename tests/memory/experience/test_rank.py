"""Ranking reads only the rows that can reach the result, and ranks exactly as with every row read (EN + ZH)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from memory.config import Config, RetrievalConfig
from memory.embedding.queries import QueryVectors
from memory.experience import ExperienceMemory, MemoryTurn, SearchFilters, catalog
from memory.experience.boosts import Boosts
from memory.experience.dense import VectorIndex
from memory.experience.fuse import Fused
from memory.experience.model import RetrieverHit
from memory.experience.periods import DateBoost
from memory.experience.rank import Reach
from memory.experience.rerank import Span, most_window, span
from memory.experience.retrieve import Retrieved
from memory.experience.rows import Rows
from memory.experience.search import Search
from memory.experience.speakers import FirstPersonBoost, SpeakerBoost
from memory.store import Store
from tests.conftest import ManualClock
from tests.memory.experience.conftest import CHINESE, ENGLISH, CountingEncoder, add


def _search(store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, **retrieval: object) -> Search:
    return Search(store, VectorIndex(store), QueryVectors(encoder), config.replace("retrieval", **retrieval).retrieval,
                  clock)


def _reader(store: Store, retrieved: Retrieved) -> Rows:
    """A fresh row reader for the search's namespace and filters, nothing read yet."""
    return Rows(lambda ids: catalog.chunk_rows(store.db, retrieved.namespace, ids, retrieved.filters))


def _lexical_only(store: Store, retrieved: Retrieved) -> Retrieved:
    """`retrieved` with only the lexical hits' rows read, as when FTS5 answers before the dense side."""
    rows = _reader(store, retrieved)
    rows.read(h.chunk_id for h in retrieved.lexical)
    return dataclasses.replace(retrieved, rows=rows)


def _all_read(store: Store, retrieved: Retrieved) -> Retrieved:
    """`retrieved` with the row of every hit of both retrievers read."""
    rows = _reader(store, retrieved)
    rows.read(h.chunk_id for h in (*retrieved.dense, *retrieved.lexical))
    return dataclasses.replace(retrieved, rows=rows)


def _ranks(search: Search, retrieved: Retrieved, k: int, reach: int | None) -> list[tuple[str, float]]:
    return [(r.chunk_id, r.score) for r in search.rank(retrieved, k, reach_tokens=reach).ranked]


@pytest.mark.parametrize("coverage_weight", [0.0, 0.3])
def test_the_lazily_read_ranking_is_the_ranking_with_every_row_read(
    experience: ExperienceMemory, store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
    coverage_weight: float,
) -> None:
    # 60 one-line chunks, English and Chinese: more candidates than a small reach can use, so ranking reads the
    # rows of only some of the chunks that the dense side alone found. Coverage blends in a term the bound must
    # also allow for.
    add(experience, "ns", "many", *[f"Note {i}: the loader retried batch {i} twice, then gave up." for i in range(30)])
    add(experience, "ns", "more", *[f"笔记{i}：加载器把第{i}批重试了两次。" for i in range(30)])
    search = _search(store, encoder, config, clock, coverage_weight=coverage_weight)
    for query in ("loader retried batch 7", "加载器 重试 第7批"):
        retrieved = search.retrieve("ns", query, SearchFilters())
        everything = _all_read(store, retrieved)
        assert len(everything.rows) == 60
        for k, reach in ((3, 20), (5, 60), (10, 10_000), (4, None)):
            lazy = _lexical_only(store, retrieved)
            assert _ranks(search, lazy, k, reach) == _ranks(search, everything, k, reach), (query, k, reach)
            if reach is not None and reach < 10_000:
                assert len(lazy.rows) < len(everything.rows)  # the window's candidates and the k after them


def test_with_a_named_speaker_or_date_the_lazy_ranking_is_the_whole_one(
    experience: ExperienceMemory, store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
) -> None:
    # The speaker and date boosts apply after the reach is cut; their spans keep every candidate they could lift
    # inside it.
    turns = [MemoryTurn(text=f"I fixed the loader retry bug number {i} today.", speaker="Anna" if i % 2 else "Ben",
                        timestamp=f"2023-0{1 + i % 9}-1{i % 10}T09:00:00Z") for i in range(30)]
    turns += [MemoryTurn(text=f"我今天修好了第{i}个加载器重试的问题。", speaker="小王" if i % 2 else "小李",
                         timestamp=f"2023-0{1 + i % 9}-0{1 + i % 9}T1{i % 10}:00:00Z") for i in range(30)]
    experience.add_memories("ns", turns)
    search = _search(store, encoder, config, clock)
    # The last two find nothing lexically: the turns from the named month are known only to the dense side.
    for query in ("Which loader bug did Anna fix in May 2023?", "小王2023年5月修好了哪个加载器问题？",
                  "loader retry bug fixed on 2023-03-12", "What got repaired in May 2023?", "2023年5月解决了什么？"):
        retrieved = search.retrieve("ns", query, SearchFilters())
        everything = _all_read(store, retrieved)
        for k, reach in ((3, 20), (6, 80)):
            assert _ranks(search, _lexical_only(store, retrieved), k, reach) == _ranks(search, everything, k, reach)
            shortlist = experience.shortlist("ns", query, k, reach_tokens=reach)
            ordered = sorted(experience.search("ns", query, k, reach_tokens=reach), key=lambda s: (-s.score, s.id))
            assert list(shortlist.snippets) == ordered[: len(shortlist.snippets)]
            assert list(shortlist.beyond) == [s.score for s in ordered[len(shortlist.snippets):]]


@pytest.mark.parametrize("query", ["What got repaired in May 2023?", "2023年5月修好了什么？"], ids=["en", "zh"])
def test_a_boost_reaches_a_dense_only_candidate_that_ranking_would_not_read_without_it(
    experience: ExperienceMemory, store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
    query: str,
) -> None:
    # Dense cosines set by hand, falling 0.01 a place: the one turn from May 2023 sits at place 30, far past what
    # a 3-result, 20-token ranking reads unboosted; doubled by date_boost 1.0 it is the best. Ranking from the
    # dense side alone, nothing read beforehand, must find it as the ranking with every row read does.
    turns = [MemoryTurn(text=f"Note {i}: fixed thing {i}.", timestamp=f"2023-0{1 + i % 4}-0{1 + i % 9}T10:00:00Z")
             for i in range(59)]
    experience.add_memories("ns", [*turns, MemoryTurn(text="修好了。", timestamp="2023-05-08T10:00:00Z")])
    search = _search(store, encoder, config, clock, date_boost=1.0, speaker_boost=0.0, neighbour_weight=0.0)
    retrieved = _all_read(store, search.retrieve("ns", query, SearchFilters()))
    rows = catalog.chunk_rows(store.db, "ns", [r[0] for r in store.db.execute("SELECT id FROM chunks")])
    may = next(c for c, r in rows.items() if r.updated_at.startswith("2023-05"))
    order = [c for c in sorted(rows) if c != may]
    order.insert(30, may)
    dense = tuple(RetrieverHit(c, place, 0.8 - 0.01 * place) for place, c in enumerate(order, 1))
    everything = _all_read(store, dataclasses.replace(retrieved, dense=dense, lexical=()))
    nothing = dataclasses.replace(everything, rows=_reader(store, retrieved))
    expected = _ranks(search, everything, 3, 20)
    assert expected[0][0] == may
    assert _ranks(search, nothing, 3, 20) == expected
    assert len(nothing.rows) < len(everything.rows)


def test_a_chunk_deleted_between_retrieval_and_ranking_is_left_out(
    experience: ExperienceMemory, store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
) -> None:
    add(experience, "ns", "keep", ENGLISH["loader"], CHINESE["railway"])
    add(experience, "ns", "gone", ENGLISH["deploy"], CHINESE["tea"])
    search = _search(store, encoder, config, clock)
    for query in ("deployments on Fridays", "龙井茶 杭州"):
        retrieved = _lexical_only(store, search.retrieve("ns", query, SearchFilters()))
        unread = {h.chunk_id for h in retrieved.dense} - set(retrieved.rows)  # to be read by ranking
        experience.delete_document("ns", "gone")  # its vectors were among the dense hits
        assert unread
        kept = {c for c, _ in _ranks(search, retrieved, 5, 1000)}
        # The deleted chunks that ranking had to read are gone; the rows read before the delete are what any
        # search in flight sees.
        assert kept and kept <= set(retrieved.rows)
        assert all(retrieved.rows[c].doc_id == "keep" for c in kept & unread)
        assert {c for c in unread if c not in retrieved.rows}  # the deleted document's chunks have no row
        add(experience, "ns", "gone", ENGLISH["deploy"], CHINESE["tea"])


def test_rows_are_read_once_and_an_id_without_a_row_is_remembered_as_absent(
    experience: ExperienceMemory, store: Store,
) -> None:
    add(experience, "ns", "etl", ENGLISH["loader"], CHINESE["tea"], project="etl")
    add(experience, "ns", "ops", ENGLISH["deploy"], CHINESE["panda"], project="ops")
    ids = [r[0] for r in store.db.execute("SELECT id FROM chunks ORDER BY id").fetchall()]
    asked: list[list[str]] = []

    def reader(chunk_ids: object) -> dict[str, catalog.ChunkRow]:
        asked.append(list(chunk_ids))  # type: ignore[call-overload]
        return catalog.chunk_rows(store.db, "ns", list(chunk_ids), SearchFilters(project="etl"))  # type: ignore[call-overload]

    rows = Rows(reader)
    absent = rows.read([*ids, "c-does-not-exist"])
    assert {rows[c].doc_id for c in rows} == {"etl"} and len(rows) == 2  # the filter applies to what is read
    assert len(absent) == 3 and "c-does-not-exist" in absent
    assert rows.read(ids) == absent - {"c-does-not-exist"}  # nothing asked twice: the reader is not called again
    assert len(asked) == 1


@pytest.mark.parametrize("temporal", [False, True])
@pytest.mark.parametrize(("coverage_weight", "boost"), [(0.0, 0.0), (0.0, 0.5), (0.3, 0.0), (0.2, 1.0)])
def test_the_reach_holds_every_candidate_that_can_be_among_the_first_places(
    seed: int, temporal: bool, coverage_weight: float, boost: float
) -> None:
    """Scores drawn at random inside each factor's span: the first `places` always lie within the reach."""
    rng = random.Random(seed)
    config = RetrievalConfig(recency_weight=0.1, coverage_weight=coverage_weight)
    reach = Reach((1.0, 1.0 + boost), span(config, temporal))
    for trial in range(200):
        fused = sorted((Fused(f"c{i:03}", rng.random() ** 3, 0.0, 0.0) for i in range(rng.randint(5, 300))),
                       key=lambda f: (-f.score, f.chunk_id))
        places = rng.choice([3, 12, most_window(12) + 12])
        upto = reach.reachable(fused, places)

        def scored(f: Fused) -> float:
            factor = 1.0 + boost if rng.random() < 0.3 else 1.0
            base = (1.0 - coverage_weight) * f.score * factor + coverage_weight * rng.random()
            least = 1.0 if temporal else 1.0 - config.recency_weight
            return base * rng.uniform(least, 1.0)

        final = sorted(((scored(f), f.chunk_id) for f in fused), key=lambda p: (-p[0], p[1]))
        within = {f.chunk_id for f in fused[:upto]}
        assert {c for _, c in final[:places]} <= within, f"trial {trial}: seed {seed}"
        if coverage_weight == 0.0 and boost == 0.0 and temporal:
            assert upto == min(places, len(fused)) or fused[upto - 1].score == fused[places - 1].score


def test_the_boosts_declare_how_far_they_move_a_score() -> None:
    assert SpeakerBoost("what did Anna say", 0.1).span == (1.0, 1.1)
    assert SpeakerBoost("what did Anna say", 0.0).span == (1.0, 1.0)
    assert FirstPersonBoost("what did I buy", 0.5, ("user",)).span == (1.0, 1.5)
    assert FirstPersonBoost("我买了什么", 0.5, ("user",)).span == (1.0, 1.5)
    assert FirstPersonBoost("what did Anna buy", 0.5, ("user",)).span == (1.0, 1.0)  # not in the first person
    assert FirstPersonBoost("what did I buy", 0.5, ()).span == (1.0, 1.0)  # nobody is the user
    assert DateBoost("what happened on 8 May 2023", 0.3).span == (1.0, 1.3)
    assert DateBoost("what happened in May", 0.3).span == (1.0, 1.0)  # no year: no period, no boost
    assert DateBoost("2023年5月发生了什么", 0.5).span == (1.0, 1.5)
    both = Boosts(SpeakerBoost("小王2023年5月说了什么", 0.1), DateBoost("小王2023年5月说了什么", 0.3))
    assert both.span == pytest.approx((1.0, 1.1 * 1.3))
    assert Reach(both.span, Span(0.0, 0.9, 1.0)).highest(0.5) == pytest.approx(0.5 * 1.1 * 1.3)
    assert Reach(both.span, Span(0.2, 0.9, 1.0)).lowest(0.5) == pytest.approx(0.8 * 0.5 * 0.9)


def test_an_unreranked_ranking_is_fusion_order_with_the_boosts(
    experience: ExperienceMemory, store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
) -> None:
    for doc_id, text in {**ENGLISH, **CHINESE}.items():
        add(experience, "ns", doc_id, text)
    search = _search(store, encoder, config, clock)
    for query in ("loader batches", "熊猫 竹子"):
        retrieved = search.retrieve("ns", query, SearchFilters())
        ranking = search.rank(_lexical_only(store, retrieved), 3, reranked=False)
        whole = search.rank(_all_read(store, retrieved), 3, reranked=False)
        assert [(r.chunk_id, r.score) for r in ranking.ranked] == [(r.chunk_id, r.score) for r in whole.ranked]
        assert ranking.ranked and ranking.weights == whole.weights
        assert [r.score for r in ranking.ranked] == sorted((r.score for r in ranking.ranked), reverse=True)
        assert all(r.coverage is None and r.recency == 1.0 for r in ranking.ranked)
