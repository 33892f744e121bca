"""A question across events spreads its results over conversations (`spread`); one about a single thing does not."""

from __future__ import annotations

import pytest

from memory.config import Config
from memory.experience import ExperienceMemory, MemoryTurn
from memory.experience.spread import asks_across
from memory.store import Store
from memory.tokens import get_counter
from tests.conftest import ManualClock
from tests.memory.experience.conftest import CountingEncoder


@pytest.mark.parametrize(
    ("query", "across"),
    [
        ("How many bikes did I service in March?", True),
        ("How much did I spend in total on concerts?", True),
        ("Which did I buy first, the kettle or the toaster?", True),
        ("What have Anna and Ben both painted?", True),
        ("How many days passed between the trip and the party?", True),
        ("Which bike did I service?", False),
        ("What did I buy for the kitchen?", False),
        ("我三月一共修了几辆自行车？", True),
        ("我买水壶和烤面包机的先后顺序是什么？", True),
        ("他们分别画了什么？", True),
        ("我修了哪辆自行车？", False),
    ],
)
def test_a_question_across_events_is_told_apart(query: str, across: bool) -> None:
    assert asks_across(query) is across


# One conversation that talks at length about one bike, and a later one that mentions another: the first holds
# three turns that match better than the second's one.
ENGLISH = (
    [(f"2023-03-02T10:00:0{i}Z", text) for i, text in enumerate([
        "I serviced my road bike today: new chain, new brake pads and the bike gears tuned.",
        "The road bike service took two hours; the bike chain was worn out and the bike brakes squeaked.",
        "After the service my road bike shifts smoothly, the bike feels new.",
    ])]
    + [("2023-03-20T18:00:00Z", "I also serviced my daughter's bike, it needed new brake pads.")]
)
CHINESE = (
    [(f"2023-03-02T10:00:0{i}Z", text) for i, text in enumerate([
        "今天我给公路自行车做了保养：换了链条、刹车片，还调了自行车变速。",
        "公路自行车保养花了两个小时，自行车链条磨损了，自行车刹车也有响声。",
        "保养以后我的公路自行车换挡很顺，自行车像新的一样。",
    ])]
    + [("2023-03-20T18:00:00Z", "女儿的公路车也保养了一下。")]
)


@pytest.mark.parametrize(
    ("said", "across", "single"),
    [
        (ENGLISH, "How many bikes did I service in March?", "Which bike did I service in March?"),
        (CHINESE, "我三月一共保养了几辆自行车？", "我三月保养了哪辆自行车？"),
    ],
    ids=["en", "zh"],
)
def test_the_other_conversation_comes_before_more_of_the_first(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
    said: list[tuple[str, str]], across: str, single: str,
) -> None:
    def memory(share: float) -> ExperienceMemory:
        # Neighbours off: the order is the turns' own scores, and the spread's.
        settings = config.replace("retrieval", spread=share, neighbour_weight=0.0)
        return ExperienceMemory(store, encoder, get_counter(), settings, clock)

    memory(0.0).add_memories("ns", [MemoryTurn(text=text, timestamp=when) for when, text in said])
    later = said[-1][1]

    def order(share: float, query: str) -> list[str]:
        return [hit.text for hit in memory(share).search("ns", query, k=4)]

    plain = order(0.0, across)
    assert plain.index(later) >= 2  # unspread, two turns of the first conversation come before the later one
    spread_out = order(0.15, across)
    assert spread_out.index(later) == 1  # the best of each conversation first
    assert spread_out[0] == plain[0] and set(spread_out) == set(plain)
    hits = {hit.text: hit for hit in memory(0.15).search("ns", across, k=4)}
    assert [text for text, hit in hits.items() if "spread" in hit.why] == [t for t in plain if t not in
                                                                         (plain[0], later)]
    assert order(0.15, single) == order(0.0, single)  # a question about one thing is left as it was
    # Recall's shortlist orders them as search does.
    shortlist = memory(0.15).shortlist("ns", across, 4, reach_tokens=10_000)
    assert [s.text for s in shortlist.snippets] == spread_out
