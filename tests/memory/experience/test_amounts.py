"""A question that asks for an amount of money favours the chunks that state one (amount_boost), in both languages."""

from __future__ import annotations

import pytest

from memory.config import Config
from memory.experience import ExperienceMemory, MemoryTurn, TextInput
from memory.experience.amounts import asks_amount, states_amount
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock
from tests.memory.experience.conftest import CountingEncoder, assert_boosted


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How much money did I spend on bike repairs this year?", True),
        ("How much did I earn at the farmers market?", True),
        ("What is the total amount I spent on gifts?", True),
        ("What was the price of the concert tickets?", True),
        ("How many dollars did the repair cost?", True),
        ("How much time did I spend hiking?", False),  # an amount, but of time
        ("Where did I spend my holiday?", False),  # spend, but no amount asked
        ("How much do I like jazz?", False),
        ("我上个月在健身房一共花了多少钱？", True),
        ("机票的价格是多少？", True),
        ("我给慈善活动捐了多少？", True),
        ("申请费用由谁承担？", False),  # the noun of cost alone asks who, not how much
        ("波斯黇鹿现存多少头？", False),  # 多少 of a count, not of money
        ("", False),
    ],
)
def test_a_question_for_an_amount_of_money_is_told_apart_in_either_language(query: str, expected: bool) -> None:
    assert asks_amount(query) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The mechanic replaced the chain, which cost me $25.", True),
        ("I paid 450 dollars for the flight.", True),
        ("The tickets were €30 each.", True),
        ("I rode 347 miles since January.", False),
        ("I went to 3 workshops in March.", False),
        ("这辆自行车花了我1200元。", True),
        ("门票五十块钱一张。", True),
        ("我们去了三次博物馆。", False),
    ],
)
def test_an_amount_of_money_stated_is_found_in_either_language(text: str, expected: bool) -> None:
    assert states_amount(text) is expected


# The same topic said twice by the user on different days (no neighbour rings between them): once at length, once
# with the sum the question wants.
ENGLISH_SAID = ["I have been riding my bike to work every day and the bike needs a tune-up before the summer trip.",
                "The bike shop replaced the chain on my bike, it cost me $25."]
CHINESE_SAID = ["我每天骑自行车上班，夏天旅行之前自行车需要好好保养一下。",
                "自行车店给我的自行车换了链条，花了我80元。"]


@pytest.mark.parametrize(
    ("said", "query", "plain"),
    [
        (ENGLISH_SAID, "How much money did I spend on my bike?", "What did I do with my bike?"),
        (CHINESE_SAID, "我在自行车上花了多少钱？", "我的自行车怎么了？"),
    ],
    ids=["en", "zh"],
)
def test_a_question_for_an_amount_raises_the_turn_that_states_one_and_leaves_the_rest(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
    said: list[str], query: str, plain: str,
) -> None:
    def memory(boost: float) -> ExperienceMemory:
        settings = config.replace("retrieval", amount_boost=boost, first_person_boost=0.0, neighbour_weight=0.0,
                                  spread=0.0)
        return ExperienceMemory(store, encoder, get_counter(), settings, clock)

    memory(0.0).add_memories("ns", [
        MemoryTurn(text=text, speaker="user", timestamp=f"2026-05-0{day}T09:00:00Z") for day, text in enumerate(said, 1)
    ])

    def fused(boost: float, asked: str) -> dict[str, float]:
        found = memory(boost).search("ns", asked, k=5)
        return {("sum" if states_amount(h.text) else "topic"): float(h.why["fused"]) for h in found}

    assert_boosted(fused, query, plain, "sum", "topic")  # a plain question asks for no amount


def test_a_document_that_states_an_amount_is_raised_too(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
) -> None:
    def found(boost: float) -> dict[str, float]:
        settings = config.replace("retrieval", amount_boost=boost)
        hits = ExperienceMemory(store, encoder, get_counter(), settings, clock).search(
            "ns", "What is the price of the museum ticket?", k=5)
        return {h.doc_id: float(h.why["fused"]) for h in hits}

    memory = ExperienceMemory(store, encoder, get_counter(), config, clock)
    memory.add_text("ns", TextInput("The city museum ticket office opens at nine and the museum ticket covers every hall.",
                                    doc_id="hours"))
    memory.add_text("ns", TextInput("A museum ticket is €12.", doc_id="price"))
    off, on = found(0.0), found(0.4)
    assert on["price"] == pytest.approx(off["price"] * 1.4, abs=1e-3)
    assert on["hours"] == pytest.approx(off["hours"], abs=1e-4)
