"""A conversation turn anchored in recent time ("yesterday", "last week", "昨天") is favoured (anchor_boost), in both
languages; documents are not."""

from __future__ import annotations

import pytest

from memory.config import Config
from memory.experience import ExperienceMemory, MemoryTurn, TextInput
from memory.experience.anchors import anchored
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock
from tests.memory.experience.conftest import CountingEncoder, assert_boosted


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I finally went to the dentist yesterday.", True),
        ("Last week I sold my old bike.", True),
        ("We moved here three years ago.", True),
        ("I have been learning Spanish recently.", True),
        ("Today I ran my first 5K.", True),
        ("I just wanted to ask about bikes.", False),  # "just" says little: most turns that use it report nothing
        ("Where can I buy a road bike?", False),
        ("The agony of choice.", False),  # "ago" inside a word is not "ago"
        ("我昨天去看了牙医。", True),
        ("上周我把旧自行车卖了。", True),
        ("我们三年前搬到这里。", True),
        ("我最近在学西班牙语。", True),
        ("哪里能买到公路自行车？", False),
    ],
)
def test_a_turn_anchored_in_recent_time_is_told_apart_in_either_language(text: str, expected: bool) -> None:
    assert anchored(text) is expected


# Two turns about the same thing on different days (no neighbour rings between them): one anchors what was done in
# time, the other talks about it at more length.
ENGLISH_SAID = ["My road bike needs a new chain and new brake pads, and the road bike gears need tuning soon.",
                "I took my road bike to the shop yesterday."]
CHINESE_SAID = ["我的公路自行车需要换新链条和刹车片，公路自行车的变速也要调一调了。",
                "我昨天把公路自行车送去店里了。"]


@pytest.mark.parametrize(
    ("said", "query"),
    [(ENGLISH_SAID, "What did I do with my road bike?"), (CHINESE_SAID, "我的公路自行车怎么了？")],
    ids=["en", "zh"],
)
def test_the_anchored_turn_is_raised_and_the_other_left(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, said: list[str], query: str,
) -> None:
    def memory(boost: float) -> ExperienceMemory:
        settings = config.replace("retrieval", anchor_boost=boost, first_person_boost=0.0, neighbour_weight=0.0,
                                  spread=0.0)
        return ExperienceMemory(store, encoder, get_counter(), settings, clock)

    memory(0.0).add_memories("ns", [
        MemoryTurn(text=text, speaker="user", timestamp=f"2026-05-0{day}T09:00:00Z") for day, text in enumerate(said, 1)
    ])

    def fused(boost: float, asked: str) -> dict[str, float]:
        found = memory(boost).search("ns", asked, k=5)
        return {("anchored" if anchored(h.text) else "other"): float(h.why["fused"]) for h in found}

    assert_boosted(fused, query, None, "anchored", "other")  # whatever the question: no plain one to compare


def test_a_document_is_not_raised(store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock) -> None:
    def found(boost: float) -> dict[str, float]:
        settings = config.replace("retrieval", anchor_boost=boost)
        hits = ExperienceMemory(store, encoder, get_counter(), settings, clock).search("ns", "museum opening", k=5)
        return {h.doc_id: float(h.why["fused"]) for h in hits}

    ExperienceMemory(store, encoder, get_counter(), config, clock).add_text(
        "ns", TextInput("The museum opened a new wing yesterday.", doc_id="news"))
    assert found(0.5) == found(0.0)
