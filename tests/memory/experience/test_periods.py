"""A query naming a date favours the memories from then (date_boost), in both languages."""

from __future__ import annotations

import pytest

from memory.config import Config
from memory.experience import ExperienceMemory, MemoryTurn
from memory.experience.periods import periods
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock
from tests.memory.experience.conftest import CountingEncoder, assert_boosted


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What book did Tim finish reading on 8th December, 2023?", {"2023-12-08"}),
        ("Who did Maria have dinner with on May 3, 2023?", {"2023-05-03"}),
        ("What happened in October 2023 and in Sept. 2021?", {"2023-10", "2021-09"}),
        ("What did we decide on 2024-02-29?", {"2024-02-29"}),
        ("Where did we go in 2022?", {"2022"}),
        ("on 31 February 2023", {"2023-02"}),  # no such day: the month is still named
        ("May I ask about the 8th?", set()),  # no year: nothing to go on
        ("小王在2023年5月8日做了什么？", {"2023-05-08"}),
        ("我们2023年5月去了哪里？", {"2023-05"}),
        ("2022年发生了什么？", {"2022"}),
        ("五月去了哪里？", set()),
    ],
)
def test_the_periods_a_query_names(query: str, expected: set[str]) -> None:
    assert periods(query) == expected


# The same thing said in two months, far apart (no neighbour rings between them).
ENGLISH_SAID = [("2023-05-08T10:00:00Z", "Anna: I finished reading a long fantasy novel about dragons."),
                ("2023-09-20T10:00:00Z", "Anna: I just finished a long fantasy novel with dragons in it.")]
CHINESE_SAID = [("2023-05-08T10:00:00Z", "我读完了一本关于龙的长篇奇幻小说。"),
                ("2023-09-20T10:00:00Z", "我刚读完一本有龙的长篇奇幻小说。")]


@pytest.mark.parametrize(
    ("said", "query", "plain"),
    [
        (ENGLISH_SAID, "Which fantasy novel did Anna finish on 8 May 2023?", "Which fantasy novel did Anna finish?"),
        (CHINESE_SAID, "2023年5月读完了什么奇幻小说？", "读完了什么奇幻小说？"),
    ],
    ids=["en", "zh"],
)
def test_the_memory_from_the_named_date_scores_more_and_others_stay(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
    said: list[tuple[str, str]], query: str, plain: str,
) -> None:
    def memory(boost: float) -> ExperienceMemory:
        settings = config.replace("retrieval", date_boost=boost, neighbour_weight=0.0)
        return ExperienceMemory(store, encoder, get_counter(), settings, clock)

    memory(0.0).add_memories("ns", [MemoryTurn(text=text, timestamp=when) for when, text in said])

    def fused(boost: float, asked: str) -> dict[str, float]:
        return {h.updated_at[:7]: float(h.why["fused"]) for h in memory(boost).search("ns", asked, k=5)}

    assert_boosted(fused, query, plain, "2023-05", "2023-09")  # a plain query names no date
