"""Hybrid search end to end: both languages, filters, scores, freshness, duplicates, edge cases."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from memory.config import Config
from memory.experience import ExperienceMemory, MemoryTurn, SearchFilters, catalog
from memory.experience.model import RetrieverHit
from memory.store import Store
from memory.tokens import get_counter
from tests.memory.experience.conftest import CHINESE, ENGLISH, CountingEncoder, HandClock, add


@pytest.mark.parametrize(
    ("query", "doc_id"),
    [
        ("How many times does the CSV loader retry a batch?", "loader"),
        ("when do we deploy to production", "deploy"),
        ("watering tomatoes", "garden"),
        ("过年吃什么馅的饺子", "dumpling"),
        ("京沪高铁的最高时速是多少", "railway"),
        ("熊猫吃竹子", "panda"),
        ("明前茶 龙井", "tea"),
    ],
)
def test_the_right_chunk_comes_first_in_either_language(corpus: ExperienceMemory, query: str, doc_id: str) -> None:
    hits = corpus.search("ns", query, k=3)
    assert hits[0].doc_id == doc_id
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].tier == "experience" and hits[0].tokens > 0 and hits[0].updated_at


@pytest.mark.parametrize(
    ("relevant", "unrelated"),
    [("CSV loader retries failed batch", "quantum chromodynamics of gluons"), ("龙井绿茶", "量子色动力学胶子")],
    ids=["en", "zh"],
)
def test_scores_say_how_relevant_not_just_which_is_first(
    corpus: ExperienceMemory, relevant: str, unrelated: str
) -> None:
    good = corpus.search("ns", relevant, k=1)[0].score
    noise = corpus.search("ns", unrelated, k=1)
    assert good >= 0.4
    assert not noise or noise[0].score < 0.3


def test_explain_shows_each_retrievers_ranks(corpus: ExperienceMemory) -> None:
    english = corpus.explain("ns", "embedding cache keyed by model", k=2)
    assert english.dense[0].rank == 1 and english.lexical and english.results[0].doc_id == "cache"
    assert english.cjk_share == 0.0 and english.dense_weight == pytest.approx(0.5)
    chinese = corpus.explain("ns", "大熊猫生活在哪里", k=2)
    # MiniLM barely reads Chinese: the all-Chinese query trusts the lexical side most.
    assert chinese.cjk_share == 1.0 and chinese.lexical_weight > 0.8
    why = chinese.results[0].why
    assert why["lexical"]["rank"] == 1 and "fused" in why


@pytest.mark.parametrize(
    ("filters", "query", "expected"),
    [
        (SearchFilters(project="ops"), "loader deploy cache", {"deploy", "cache"}),
        (SearchFilters(tags=("food",)), "饺子 龙井", {"dumpling", "tea"}),
        (SearchFilters(tags=("food", "zh")), "饺子 龙井 loader", {"dumpling", "tea"}),
        (SearchFilters(source="wiki"), "熊猫 铁路 loader", {"panda", "railway"}),
        (SearchFilters(updated_from="2026-01-01"), "loader deploy 熊猫 饺子", {"deploy", "dumpling"}),
        (SearchFilters(updated_to="2025-12-31T23:59:59Z"), "loader cache deploy 熊猫 龙井 铁路 饺子",
         {"loader", "cache", "panda", "tea", "railway"}),
        (SearchFilters(kind="memory"), "loader", set()),
    ],
)
def test_filters_restrict_both_retrievers(
    experience: ExperienceMemory, filters: SearchFilters, query: str, expected: set[str]
) -> None:
    fields: dict[str, dict[str, object]] = {
        "loader": {"project": "etl", "updated_at": "2025-03-01T00:00:00Z"},
        "deploy": {"project": "ops", "updated_at": "2026-03-01T00:00:00Z"},
        "cache": {"project": "ops", "updated_at": "2024-03-01T00:00:00Z"},
        "dumpling": {"tags": ("food", "zh"), "updated_at": "2026-02-01T00:00:00Z"},
        "tea": {"tags": ("food", "zh"), "source": "blog", "updated_at": "2024-01-01T00:00:00Z"},
        "panda": {"source": "wiki", "updated_at": "2025-01-01T00:00:00Z"},
        "railway": {"source": "wiki", "tags": ("zh",), "updated_at": "2023-01-01T00:00:00Z"},
    }
    for doc_id, extra in fields.items():
        add(experience, "ns", doc_id, {**ENGLISH, **CHINESE}[doc_id], **extra)
    found = {h.doc_id for h in experience.search("ns", query, k=10, filters=filters)}
    # `expected` is exactly what passes the filter; the query names a term of each of them.
    assert found == expected


def test_an_empty_namespace_or_query_is_an_empty_result(corpus: ExperienceMemory) -> None:
    assert corpus.search("nobody", "loader") == []
    assert corpus.search("ns", "") == []
    assert corpus.search("ns", "   ？！") == []
    assert corpus.search("ns", "loader", k=0) == []


def test_k_larger_than_the_store_returns_what_there_is(corpus: ExperienceMemory) -> None:
    hits = corpus.search("ns", "loader tomatoes 饺子 熊猫 cache deploy 铁路 龙井", k=100)
    assert len({h.id for h in hits}) == len(hits) == 8


@pytest.mark.parametrize(
    "query", ['"AND OR NOT *', "NEAR(loader, 2) col:x", "loader AND -deploy ^", "熊猫\" OR \"竹子"]
)
def test_query_syntax_characters_are_plain_text(corpus: ExperienceMemory, query: str) -> None:
    corpus.search("ns", query)


def test_recency_ranks_the_newer_of_two_similar_memories_first_unless_asked_about_time(
    experience: ExperienceMemory, clock: HandClock
) -> None:
    experience.add_memories("chat", [
        MemoryTurn("My favourite editor is Vim for all my Python work.", speaker="Anna",
                   timestamp="2021-01-10T09:00:00Z"),
        MemoryTurn("My favourite editor is now VS Code for all my Python work.", speaker="Anna",
                   timestamp="2026-11-01T09:00:00Z"),
        MemoryTurn("我最喜欢的编辑器是记事本。", speaker="小王", timestamp="2020-01-01T09:00:00Z"),
        MemoryTurn("我最喜欢的编辑器现在是记事本加加。", speaker="小王", timestamp="2026-10-01T09:00:00Z"),
    ])
    assert "VS Code" in experience.search("chat", "Which editor does Anna like?", k=1)[0].text
    assert "记事本加加" in experience.search("chat", "小王最喜欢的编辑器", k=1)[0].text
    temporal = experience.explain("chat", "Which editor did Anna like in 2021?", k=2)
    assert temporal.temporal and all(r.why["recency"] == 1.0 for r in temporal.results)


@pytest.mark.parametrize("text", [ENGLISH["cache"], CHINESE["tea"]], ids=["en", "zh"])
def test_near_duplicates_sink_and_the_newest_copy_is_kept(
    experience: ExperienceMemory, clock: HandClock, text: str
) -> None:
    add(experience, "ns", "old", text, updated_at="2024-01-01T00:00:00Z")
    add(experience, "ns", "new", text + " ", updated_at="2026-01-01T00:00:00Z")
    add(experience, "ns", "other", ENGLISH["garden"] + CHINESE["panda"])
    hits = experience.search("ns", text[:30], k=3)
    assert hits[0].doc_id == "new"
    old = next(h for h in hits if h.doc_id == "old")
    assert old.why["duplicate_of"] == hits[0].id and old.score < hits[0].score


def test_namespaces_never_see_each_other(experience: ExperienceMemory) -> None:
    add(experience, "alice", "d", ENGLISH["loader"])
    add(experience, "bob", "d", CHINESE["tea"])
    assert {h.doc_id for h in experience.search("alice", "loader 龙井")} == {"d"}
    assert all("龙井" not in h.text for h in experience.search("alice", "loader 龙井"))


def test_a_long_row_list_read_by_two_threads_is_the_same_rows(experience: ExperienceMemory) -> None:
    from memory.experience import catalog
    from memory.experience.search import _SPLIT_ROWS

    add(experience, "ns", "many", *[f"Note {i}: the loader retried batch {i} twice." for i in range(30)],
        project="ops")
    add(experience, "ns", "more", *[f"笔记{i}：加载器重试了第{i}批。" for i in range(30)])
    ids = [r[0] for r in experience._store.db.execute("SELECT id FROM chunks ORDER BY id DESC").fetchall()]
    ids.append("c-does-not-exist")
    assert len(ids) >= _SPLIT_ROWS
    for filters in (SearchFilters(), SearchFilters(project="ops")):
        split = experience._searcher._rows("ns", ids, filters)
        whole = catalog.chunk_rows(experience._store.db, "ns", ids, filters)
        assert split == whole and len(whole) == (60 if filters.empty else 30)


@pytest.mark.parametrize("reach", ["many", 2.5, True])
def test_reach_tokens_must_be_a_whole_number(corpus: ExperienceMemory, reach: object) -> None:
    from memory.errors import ValidationError

    with pytest.raises(ValidationError, match="reach_tokens"):
        corpus.search("ns", "loader", 5, reach_tokens=reach)  # type: ignore[arg-type]
    assert corpus.search("ns", "loader", 5, reach_tokens=0)[0].doc_id == "loader"  # 0: one candidate's reach


@pytest.mark.parametrize("turns", [False, True], ids=["documents", "turns"])
@pytest.mark.parametrize("reach", [0, 30, 60, 10_000])
def test_a_shortlist_is_the_search_cut_where_its_tokens_reach(
    corpus: ExperienceMemory, turns: bool, reach: int
) -> None:
    if turns:  # conversation turns bring their neighbours along: the shortlist must see them too
        corpus.add_memories("ns", [
            MemoryTurn(text=text, speaker="anna" if i % 2 else "ben", timestamp=f"2026-05-01T09:00:{i:02d}Z")
            for i, text in enumerate([*ENGLISH.values(), *CHINESE.values()])
        ])
    for query in ("loader retries failed batches", "大熊猫 竹子", "deployments on Fridays"):
        found = sorted(corpus.search("ns", query, 6, reach_tokens=reach), key=lambda s: (-s.score, s.id))
        shortlist = corpus.shortlist("ns", query, 6, reach_tokens=reach)
        spent, usable = 0, len(found)
        for index, snippet in enumerate(found):
            spent += min(snippet.tokens, reach)
            if spent > reach and index > 0:
                usable = index
                break
        assert list(shortlist.snippets) == found[:usable]
        assert list(shortlist.beyond) == [s.score for s in found[usable:]]


def test_a_shortlist_reads_only_the_rows_that_can_reach_it_and_finds_what_search_finds(
    experience: ExperienceMemory,
) -> None:
    # 60 one-line chunks, English and Chinese: more candidates than a small shortlist's reach, so ranking reads the
    # rows of only some of the chunks that the dense side alone found, and still ranks as with every row read.
    add(experience, "ns", "many", *[f"Note {i}: the loader retried batch {i} twice, then gave up." for i in range(30)])
    add(experience, "ns", "more", *[f"笔记{i}：加载器把第{i}批重试了两次。" for i in range(30)])
    searcher = experience._searcher
    for query in ("loader retried batch 7", "加载器 重试 第7批"):
        eager = searcher.retrieve(query, "ns", SearchFilters())
        assert len(eager.rows) == len({h.chunk_id for h in (*eager.dense, *eager.lexical)}) == 60
        # What retrieve(read_dense=False) leaves when the lexical side finishes first: the lexical hits' rows.
        found = {h.chunk_id for h in eager.lexical}
        lazy = dataclasses.replace(eager, rows=MappingProxyType({c: r for c, r in eager.rows.items() if c in found}))
        for k, reach in ((3, 20), (5, 60), (10, 10_000)):
            _, ranked, rows = searcher._ranked(lazy, k, True, reach)
            _, everything, _ = searcher._ranked(eager, k, True, reach)
            assert [(r.candidate.fused.chunk_id, r.score) for r in ranked] == [
                (r.candidate.fused.chunk_id, r.score) for r in everything]
            if reach < 10_000:
                assert len(rows) < len(eager.rows)  # the window's candidates and the k after them, not all 60
            shortlist = experience.shortlist("ns", query, k, reach_tokens=reach)
            ordered = sorted(experience.search("ns", query, k, reach_tokens=reach), key=lambda s: (-s.score, s.id))
            assert list(shortlist.snippets) == ordered[: len(shortlist.snippets)]
            assert list(shortlist.beyond) == [s.score for s in ordered[len(shortlist.snippets):]]


def test_a_shortlist_of_turns_with_a_named_speaker_or_date_finds_what_search_finds(
    experience: ExperienceMemory,
) -> None:
    # The speaker and date boosts apply after the reach is cut; their ceiling keeps every candidate they could
    # lift inside it, so the lazily read ranking is still search's.
    turns = [MemoryTurn(text=f"I fixed the loader retry bug number {i} today.", speaker="Anna" if i % 2 else "Ben",
                        timestamp=f"2023-0{1 + i % 9}-1{i % 10}T09:00:00Z") for i in range(30)]
    turns += [MemoryTurn(text=f"我今天修好了第{i}个加载器重试的问题。", speaker="小王" if i % 2 else "小李",
                         timestamp=f"2023-0{1 + i % 9}-0{1 + i % 9}T1{i % 10}:00:00Z") for i in range(30)]
    experience.add_memories("ns", turns)
    searcher = experience._searcher
    # The last two find nothing lexically: the turns from the named month are known only to the dense side.
    for query in ("Which loader bug did Anna fix in May 2023?", "小王2023年5月修好了哪个加载器问题？",
                  "loader retry bug fixed on 2023-03-12", "What got repaired in May 2023?", "2023年5月解决了什么？"):
        eager = searcher.retrieve(query, "ns", SearchFilters())
        found = {h.chunk_id for h in eager.lexical}
        lazy = dataclasses.replace(
            eager, rows=MappingProxyType({c: r for c, r in eager.rows.items() if c in found}))
        for k, reach in ((3, 20), (6, 80)):
            _, ranked, _ = searcher._ranked(lazy, k, True, reach)
            _, everything, _ = searcher._ranked(eager, k, True, reach)
            assert [(r.candidate.fused, r.score) for r in ranked] == [(r.candidate.fused, r.score) for r in everything]
            shortlist = experience.shortlist("ns", query, k, reach_tokens=reach)
            ordered = sorted(experience.search("ns", query, k, reach_tokens=reach), key=lambda s: (-s.score, s.id))
            assert list(shortlist.snippets) == ordered[: len(shortlist.snippets)]
            assert list(shortlist.beyond) == [s.score for s in ordered[len(shortlist.snippets):]]


@pytest.mark.parametrize("query", ["What got repaired in May 2023?", "2023年5月修好了什么？"], ids=["en", "zh"])
def test_a_boost_reaches_a_dense_only_candidate_that_ranking_would_not_read_without_it(
    store: Store, encoder: CountingEncoder, config: Config, clock: HandClock, query: str
) -> None:
    # Dense cosines set by hand, falling 0.01 a place: the one turn from May 2023 sits at place 30, far past
    # what a 3-result, 20-token shortlist reads unboosted; doubled by date_boost 1.0 it is the best. Ranking
    # from the dense side alone, nothing read beforehand, must find it as the ranking with every row read does.
    settings = config.replace("retrieval", date_boost=1.0, speaker_boost=0.0, neighbour_weight=0.0)
    experience = ExperienceMemory(store, encoder, get_counter(), settings, clock)
    turns = [MemoryTurn(text=f"Note {i}: fixed thing {i}.", timestamp=f"2023-0{1 + i % 4}-0{1 + i % 9}T10:00:00Z")
             for i in range(59)]
    experience.add_memories("ns", [*turns, MemoryTurn(text="修好了。", timestamp="2023-05-08T10:00:00Z")])
    searcher = experience._searcher
    eager = searcher.retrieve(query, "ns", SearchFilters())
    rows = dict(eager.rows)
    rows.update(catalog.chunk_rows(store.db, "ns", [h.chunk_id for h in eager.dense]))
    may = next(c for c, r in rows.items() if r.updated_at.startswith("2023-05"))
    order = [c for c in sorted(rows) if c != may]
    order.insert(30, may)
    dense = tuple(RetrieverHit(c, place, 0.8 - 0.01 * place) for place, c in enumerate(order, 1))
    everything = dataclasses.replace(eager, dense=dense, lexical=(), rows=MappingProxyType(rows))
    nothing = dataclasses.replace(everything, rows=MappingProxyType({}))
    _, ranked, read = searcher._ranked(nothing, 3, True, 20)
    _, expected, _ = searcher._ranked(everything, 3, True, 20)
    assert expected[0].candidate.fused.chunk_id == may
    assert [(r.candidate.fused, r.score) for r in ranked] == [(r.candidate.fused, r.score) for r in expected]
    assert len(read) < len(rows)


def test_a_chunk_deleted_between_retrieval_and_ranking_is_left_out(experience: ExperienceMemory) -> None:
    add(experience, "ns", "keep", ENGLISH["loader"], CHINESE["railway"])
    add(experience, "ns", "gone", ENGLISH["deploy"], CHINESE["tea"])
    searcher = experience._searcher
    for query in ("deployments on Fridays", "龙井茶 杭州"):
        eager = searcher.retrieve(query, "ns", SearchFilters())
        found = {h.chunk_id for h in eager.lexical}  # as retrieve(read_dense=False) leaves it: lexical rows only
        retrieved = dataclasses.replace(
            eager, rows=MappingProxyType({c: r for c, r in eager.rows.items() if c in found}))
        experience.delete_document("ns", "gone")  # its vectors were among the dense hits
        assert any(h.chunk_id not in retrieved.rows for h in retrieved.dense)
        _, ranked, rows = searcher._ranked(retrieved, 5, True, 1000)
        kept = {r.candidate.fused.chunk_id for r in ranked}
        unread = {h.chunk_id for h in retrieved.dense} - set(retrieved.rows)  # to be read by ranking
        # The deleted chunks that ranking had to read are gone; the rows read before the delete are what any
        # search in flight sees, the eager one too.
        assert kept and kept <= set(rows)
        assert all(rows[c].doc_id == "keep" for c in kept & unread)
        assert {c for c in unread if c not in rows}  # some of the deleted document's chunks were never read
        add(experience, "ns", "gone", ENGLISH["deploy"], CHINESE["tea"])
