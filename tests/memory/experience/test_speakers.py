"""A query naming a speaker favours that speaker's turns (speaker_boost), and a query in the first person the
user's turns (first_person_boost), in both languages."""

from __future__ import annotations

import pytest

from memory.config import Config
from memory.experience import ExperienceMemory, MemoryTurn
from memory.experience.speakers import in_first_person, names
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock
from tests.memory.experience.conftest import CountingEncoder, assert_boosted

# Two speakers saying much the same, on different days (no neighbour rings between them).
ENGLISH_SAID = [("Anna", "We adopted a small grey cat from the animal shelter."),
                ("Ben", "My sister adopted a grey kitten from the shelter downtown.")]
CHINESE_SAID = [("小王", "我们从动物收容所领养了一只灰色的小猫。"),
                ("小李", "我姐姐从市中心的收容所领养了一只灰色小猫。")]


@pytest.mark.parametrize(
    ("query", "speaker", "expected"),
    [
        ("What did Caroline's mom say?", "Caroline", True),
        ("what did caroline say", "Caroline", True),
        ("Where does Benjamin live?", "Ben", False),
        ("What did the user ask about trains?", "user", True),
        ("小王上周做了什么？", "小王", True),
        ("小王上周做了什么？", "小李", False),
        ("What did Anna say?", "  ", False),
        ("", "Anna", False),
    ],
)
def test_a_speaker_is_named_by_the_whole_name_in_either_language(query: str, speaker: str, expected: bool) -> None:
    assert names(query)(speaker) is expected


def _memory(store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock, boost: float
            ) -> ExperienceMemory:
    settings = config.replace("retrieval", speaker_boost=boost, neighbour_weight=0.0)
    return ExperienceMemory(store, encoder, get_counter(), settings, clock)


@pytest.mark.parametrize(
    ("said", "query", "plain"),
    [
        (ENGLISH_SAID, "Which grey cat did Ben adopt from the shelter?", "Which grey cat was adopted from the shelter?"),
        (CHINESE_SAID, "小李领养了什么样的猫？", "谁领养了什么样的猫？"),
    ],
    ids=["en", "zh"],
)
def test_the_named_speakers_turns_score_more_and_others_stay(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
    said: list[tuple[str, str]], query: str, plain: str,
) -> None:
    _memory(store, encoder, config, clock, 0.0).add_memories("ns", [
        MemoryTurn(text=text, speaker=speaker, timestamp=f"2026-05-0{day}T09:00:00Z")
        for day, (speaker, text) in enumerate(said, 1)
    ])
    named = said[1][0]

    def fused(boost: float, asked: str) -> dict[str, float]:
        found = _memory(store, encoder, config, clock, boost).search("ns", asked, k=5)
        return {h.text.split(":")[0]: float(h.why["fused"]) for h in found}  # a turn reads "speaker: text"

    assert_boosted(fused, query, plain, named, said[0][0])  # a plain query names nobody


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How many Instagram followers do I currently have?", True),
        ("What did you tell me about the hotel?", True),
        ("Where is my passport?", True),
        ("I'd like the trains again", True),
        ("What did Caroline say about the trip?", False),
        ("Which item is mine, the red one?", True),
        ("Is it in the mind or the IMF report?", False),  # "i" inside words is not "I"
        ("我上个月买了什么？", True),
        ("我们去过哪些城市？", True),
        ("小王上周做了什么？", False),
        ("", False),
    ],
)
def test_a_query_in_the_first_person_is_told_apart_in_either_language(query: str, expected: bool) -> None:
    assert in_first_person(query) is expected


# The user and the assistant saying much the same, on different days (no neighbour rings between them).
ENGLISH_TOLD = [("assistant", "Adopting a grey cat from the animal shelter is a lovely choice."),
                ("user", "I adopted a grey kitten from the shelter downtown last week.")]
CHINESE_TOLD = [("assistant", "从动物收容所领养一只灰色的小猫是很好的选择。"),
                ("user", "我上周从市中心的收容所领养了一只灰色小猫。")]


@pytest.mark.parametrize(
    ("told", "query", "plain", "users"),
    [
        (ENGLISH_TOLD, "Which grey cat did I adopt from the shelter?", "Which grey cat was adopted from the shelter?",
         ("user",)),
        (ENGLISH_TOLD, "Which grey cat did I adopt from the shelter?", "Which grey cat was adopted from the shelter?",
         (" USER ",)),  # names compare with case and spacing folded
        (CHINESE_TOLD, "我领养了什么样的猫？", "谁领养了什么样的猫？", ("user",)),
    ],
    ids=["en", "en-folded", "zh"],
)
def test_a_first_person_query_raises_the_users_turns_and_leaves_the_rest(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
    told: list[tuple[str, str]], query: str, plain: str, users: tuple[str, ...],
) -> None:
    def memory(boost: float) -> ExperienceMemory:
        settings = config.replace("retrieval", first_person_boost=boost, user_speakers=users, speaker_boost=0.0,
                                  neighbour_weight=0.0)
        return ExperienceMemory(store, encoder, get_counter(), settings, clock)

    memory(0.0).add_memories("ns", [
        MemoryTurn(text=text, speaker=speaker, timestamp=f"2026-05-0{day}T09:00:00Z")
        for day, (speaker, text) in enumerate(told, 1)
    ])

    def fused(boost: float, asked: str) -> dict[str, float]:
        found = memory(boost).search("ns", asked, k=5)
        return {h.text.split(":")[0]: float(h.why["fused"]) for h in found}

    assert_boosted(fused, query, plain, "user", "assistant")  # a plain query is not in the first person


def test_without_user_speakers_a_first_person_query_raises_nothing(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
) -> None:
    def found(**retrieval: object) -> dict[str, float]:
        settings = config.replace("retrieval", speaker_boost=0.0, neighbour_weight=0.0, **retrieval)
        hits = ExperienceMemory(store, encoder, get_counter(), settings, clock).search("ns", "Which cat did I adopt?", k=5)
        return {h.text.split(":")[0]: float(h.why["fused"]) for h in hits}

    ExperienceMemory(store, encoder, get_counter(), config, clock).add_memories("ns", [
        MemoryTurn(text=text, speaker=speaker, timestamp=f"2026-05-0{day}T09:00:00Z")
        for day, (speaker, text) in enumerate(ENGLISH_TOLD, 1)
    ])
    plain = found(first_person_boost=0.0)
    assert found(first_person_boost=0.5, user_speakers=()) == plain
    assert found(first_person_boost=0.5, user_speakers=("customer",)) == plain
    assert found(first_person_boost=0.5)["user"] > plain["user"]
