"""A question across events spreads its results over conversations (`spread`); one about a single thing does not."""

from __future__ import annotations

import pytest

from memory.config import Config
from memory.embedding import Embedder
from memory.errors import ValidationError
from memory.experience import ExperienceMemory, MemoryTurn
from memory.experience.spread import asks_across
from memory.service import Memory
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
        ("Who graduated first, Emma or Alex?", True),
        ("Which streaming service did I start using most recently?", True),  # a state that changed
        ("How often did I go to the gym previously?", True),
        ("How long had I been a member when I attended the meetup?", True),
        ("What is the average GPA of my two degrees?", True),
        ("How many days ago did I buy a smoker?", False),  # one event's distance
        ("How much time do I practice guitar every day?", False),  # one stretch of time
        ("How much time in total did I spend hiking in March?", True),
        ("Which bike did I service?", False),
        ("What did I buy for the kitchen?", False),
        ("我三月一共修了几辆自行车？", True),
        ("我买水壶和烤面包机的先后顺序是什么？", True),
        ("他们分别画了什么？", True),
        ("我最近一次用的是哪个流媒体服务？", True),
        ("我以前多久去一次健身房？", True),
        ("我两门学位的平均绩点是多少？", True),
        ("我几天前买了烟熏炉？", False),
        ("我三天以前买了什么？", False),  # 以前 after a span of time is "ago"
        ("我每天练吉他花多少时间？", False),
        ("我三月一共花了多少时间徒步？", True),
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
        settings = config.replace("retrieval", spread=share, neighbour_weight=0.0, anchor_boost=0.0)
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


@pytest.mark.parametrize(
    ("said", "across"),
    [(ENGLISH, "How many bikes did I service in March?"), (CHINESE, "我三月一共保养了几辆自行车？")],
    ids=["en", "zh"],
)
def test_the_spread_orders_and_keeps_a_turn_above_the_callers_threshold(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
    said: list[tuple[str, str]], across: str,
) -> None:
    settings = config.replace("retrieval", spread=0.15, neighbour_weight=0.0, anchor_boost=0.0)
    memory = ExperienceMemory(store, encoder, get_counter(), settings, clock)
    memory.add_memories("ns", [MemoryTurn(text=text, timestamp=when) for when, text in said])
    plain = {hit.text: hit.score for hit in ExperienceMemory(
        store, encoder, get_counter(), config.replace("retrieval", spread=0.0, neighbour_weight=0.0, anchor_boost=0.0), clock,
    ).search("ns", across, k=4)}
    spread_out = {hit.text: hit.score for hit in memory.search("ns", across, k=4)}
    lowered = [text for text in plain if spread_out[text] < plain[text]]
    assert lowered
    # A threshold between a spread turn's score before and after the spread: without a floor the spread takes the
    # turn under it, with the threshold as floor the turn stays at it and the others are as the spread left them.
    turn = lowered[0]
    floor = plain[turn] * 0.95
    assert spread_out[turn] < floor
    kept = {s.text: s.score for s in memory.shortlist("ns", across, 4, reach_tokens=10_000, floor=floor).snippets}
    assert kept[turn] == pytest.approx(floor)
    for text in plain:
        if text != turn:
            assert kept[text] == pytest.approx(max(spread_out[text], floor) if plain[text] >= floor else spread_out[text])


@pytest.mark.parametrize(
    ("said", "across"),
    [(ENGLISH, "How many bikes did I service in March?"), (CHINESE, "我三月一共保养了几辆自行车？")],
    ids=["en", "zh"],
)
def test_recall_keeps_a_spread_turn_that_passed_its_min_score(
    config: Config, embedder: Embedder, said: list[tuple[str, str]], across: str,
) -> None:
    settings = config.replace("retrieval", spread=0.15, neighbour_weight=0.0, anchor_boost=0.0)
    with Memory(settings, embedder=embedder) as memory:
        memory.experience.add_memories("ns", [MemoryTurn(text=text, timestamp=when) for when, text in said])
        hits = memory.experience.search("ns", across, k=4)
        spread_hit = next(hit for hit in hits if "spread" in hit.why)
        before = spread_hit.score / float(spread_hit.why["spread"])
        threshold = (before + spread_hit.score) / 2  # passed before the spread, not after it
        shown = [item.snippet.id for item in memory.recall("ns", across, 4000, min_score=threshold).items]
        assert spread_hit.id in shown
        # A threshold it did not pass before the spread still leaves it out.
        shown = [item.snippet.id for item in memory.recall("ns", across, 4000, min_score=min(1.0, before * 1.01)).items]
        assert spread_hit.id not in shown


def test_a_floor_outside_zero_to_one_is_refused(
    store: Store, encoder: CountingEncoder, config: Config, clock: ManualClock,
) -> None:
    memory = ExperienceMemory(store, encoder, get_counter(), config, clock)
    for floor in (1.5, -0.1, "0.2", True):
        with pytest.raises(ValidationError, match="floor must be a number between 0 and 1"):
            memory.shortlist("ns", "How many bikes?", 4, reach_tokens=100, floor=floor)  # type: ignore[arg-type]
