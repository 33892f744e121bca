"""Hybrid search end to end: both languages, filters, scores, freshness, duplicates, edge cases."""

from __future__ import annotations

import pytest

from memory.experience import ExperienceMemory, MemoryTurn, SearchFilters
from tests.conftest import ManualClock
from tests.memory.experience.conftest import CHINESE, ENGLISH, add


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
    ("query", "found"),
    [('"AND OR NOT *', None), ("NEAR(loader, 2) col:x", "loader"), ("loader AND -deploy ^", "loader"),
     ("熊猫\" OR \"竹子", "panda")],
)
def test_query_syntax_characters_are_plain_text(corpus: ExperienceMemory, query: str, found: str | None) -> None:
    """FTS5 operators in a query are words, not syntax: no error, and the words still find their chunk."""
    explained = corpus.explain("ns", query, k=3)
    assert all(term.isalnum() or not term.isascii() for term in explained.terms), explained.terms
    if found is None:
        assert not explained.lexical  # "and", "or", "not" are stop words: nothing left to match
    else:
        assert explained.results[0].doc_id == found
        assert any(h.rank == 1 for h in explained.lexical)


def test_recency_ranks_the_newer_of_two_similar_memories_first_unless_asked_about_time(
    experience: ExperienceMemory, clock: ManualClock
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
    experience: ExperienceMemory, clock: ManualClock, text: str
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


@pytest.mark.parametrize("reach", ["many", 2.5, True])
def test_reach_tokens_must_be_a_whole_number(corpus: ExperienceMemory, reach: object) -> None:
    from memory.errors import ValidationError

    with pytest.raises(ValidationError, match="reach_tokens"):
        corpus.search("ns", "loader", 5, reach_tokens=reach)  # type: ignore[arg-type]
    assert corpus.search("ns", "loader", 5, reach_tokens=0)[0].doc_id == "loader"  # 0: one candidate's reach


@pytest.mark.parametrize("item_tokens", ["many", 2.5, True, 0])
def test_item_tokens_must_be_a_whole_number_above_zero(corpus: ExperienceMemory, item_tokens: object) -> None:
    from memory.errors import ValidationError

    with pytest.raises(ValidationError, match="item_tokens must be a whole number of tokens"):
        corpus.shortlist("ns", "loader", 5, reach_tokens=100, item_tokens=item_tokens)  # type: ignore[arg-type]


@pytest.mark.parametrize("turns", [False, True], ids=["documents", "turns"])
@pytest.mark.parametrize("reach", [0, 30, 60, 10_000])
@pytest.mark.parametrize("item_tokens", [None, 6])
def test_a_shortlist_is_the_search_cut_where_its_tokens_reach(
    corpus: ExperienceMemory, turns: bool, reach: int, item_tokens: int | None
) -> None:
    if turns:  # conversation turns bring their neighbours along: the shortlist must see them too
        corpus.add_memories("ns", [
            MemoryTurn(text=text, speaker="anna" if i % 2 else "ben", timestamp=f"2026-05-01T09:00:{i:02d}Z")
            for i, text in enumerate([*ENGLISH.values(), *CHINESE.values()])
        ])
    for query in ("loader retries failed batches", "大熊猫 竹子", "deployments on Fridays"):
        found = sorted(corpus.search("ns", query, 6, reach_tokens=reach), key=lambda s: (-s.score, s.id))
        shortlist = corpus.shortlist("ns", query, 6, reach_tokens=reach, item_tokens=item_tokens)
        spent, usable = 0, len(found)
        for index, snippet in enumerate(found):
            spent += min(snippet.tokens, reach, item_tokens or reach)  # a snippet counts what the caller shows
            if spent > reach and index > 0:
                usable = index
                break
        assert list(shortlist.snippets) == found[:usable]
        assert list(shortlist.beyond) == [s.score for s in found[usable:]]


