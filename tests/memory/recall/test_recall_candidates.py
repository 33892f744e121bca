"""Experience candidates beyond a few budgets' worth of better ones are not packed; omitted counts them by reason."""

from __future__ import annotations

import pytest

from memory.experience import MemoryTurn
from memory.service import Memory

_CROPS = [("tomatoes", "番茄"), ("cucumbers", "黄瓜"), ("peppers", "辣椒"), ("beans", "豆角"), ("lettuce", "生菜"),
          ("carrots", "胡萝卜"), ("eggplants", "茄子"), ("pumpkins", "南瓜")]
_EN_HOW = ["deep watering twice a week", "a stake by June", "six hours of sun", "compost every month",
           "mulch against weeds", "netting against birds", "a trellis on the south wall", "rain water only"]
_EN_WHAT = ["gave ten kilos last year", "lost half the crop to slugs", "ripened late in September",
            "split after the August storms", "did best in the raised bed", "needed a second sowing",
            "were eaten by the neighbour's goat", "won a prize at the village show"]
_ZH_HOW = ["每周浇两次透水", "六月前搭好支架", "每天晒六个小时太阳", "每个月追一次堆肥", "铺稻草防杂草", "罩网防鸟",
           "靠南墙搭架子", "只浇雨水"]
_ZH_WHAT = ["去年收了十公斤", "一半被蜗牛吃了", "九月才成熟", "八月暴雨后裂开了", "在高床里长得最好", "需要补种一次",
            "被邻居家的羊吃了", "在村里评比得了奖"]
# Eight different garden notes per language (no two near-duplicates), each 40-80 tokens.
ENGLISH = [
    f"Garden log, {crop}: they want {_EN_HOW[i]} and {_EN_HOW[(i + 3) % 8]}; this bed {_EN_WHAT[i]}, "
    f"so next spring the {crop} move to plot {i + 1} beside the {_CROPS[(i + 1) % 8][0]}."
    for i, (crop, _) in enumerate(_CROPS)
]
CHINESE = [
    f"菜园记录，{crop}：要{_ZH_HOW[i]}，还要{_ZH_HOW[(i + 3) % 8]}；这块地的{crop}{_ZH_WHAT[i]}，"
    f"明年春天把{crop}挪到第{i + 1}块地，挨着{_CROPS[(i + 1) % 8][1]}。"
    for i, (_, crop) in enumerate(_CROPS)
]


@pytest.mark.parametrize(("texts", "query"), [(ENGLISH, "garden log bed plot spring"), (CHINESE, "菜园记录 明年春天")])
def test_candidates_past_three_budgets_are_counted_not_packed(memory: Memory, texts: list[str], query: str) -> None:
    memory.experience.add_memories("g", [MemoryTurn(t) for t in texts])
    tight = memory.recall("g", query, 100, min_score=0.0)
    roomy = memory.recall("g", query, 4000, min_score=0.0)
    found = len(memory.experience.search("g", query, 10))
    assert found == len(texts)
    for result in (tight, roomy):
        omitted = result.omitted
        shown = [item for item in result.items if item.snippet.tier == "experience"]
        # Every candidate is accounted for: shown, or left out for a reason.
        assert len(shown) + omitted.below_threshold + omitted.over_budget + omitted.duplicate == found
    assert len(roomy.items) == len(texts) and roomy.omitted.over_budget == 0
    # Budget 100: the best snippets up to 300 tokens are packed (one or two fit), the rest were never candidates.
    assert 1 <= len(tight.items) <= 2 and tight.omitted.over_budget == len(texts) - len(tight.items)
    # Never-packed candidates under min_score count as below the threshold, not as over budget.
    strict = memory.recall("g", query, 100, min_score=0.99)
    assert [item.low_confidence for item in strict.items] == [True]
    assert strict.omitted.below_threshold == len(texts) - 1 and strict.omitted.over_budget == 0


# Long replies that restate the question's topic at length, and short notes on the same topic.
_EN_LONG = [f"Reply {n}: about the garden log and the plot for next spring, " + " ".join(
    f"step {i} is to check the bed for {crop} and note what it needs;" for i, (crop, _) in enumerate(_CROPS * 3))
    for n in range(3)]
_ZH_LONG = [f"回复{n}：关于菜园记录和明年春天的地块，" + "".join(
    f"第{i}步是查看{crop}的地，记下它需要什么；" for i, (_, crop) in enumerate(_CROPS * 3)) for n in range(3)]


@pytest.mark.parametrize(("long", "short", "query"), [(_EN_LONG, ENGLISH, "check the bed, note what it needs"),
                                                      (_ZH_LONG, CHINESE, "查看地，记下需要什么")], ids=["en", "zh"])
def test_a_long_snippet_counts_only_what_packing_shows_of_it(
    memory: Memory, long: list[str], short: list[str], query: str
) -> None:
    for text in [*long, *short]:  # one conversation each: no neighbours
        memory.experience.add_memories("g", [MemoryTurn(text)])
    budget = 400
    cap = int(memory.config.recall.item_share * budget)
    sizes = [s.tokens for s in memory.experience.search("g", query, 20)]
    # The long replies rank first and hold more than three budgets between them.
    assert len(sizes) == len(long) + len(short) and min(sizes[:len(long)]) * len(long) > 3 * budget
    whole = memory.experience.shortlist("g", query, 20, reach_tokens=3 * budget)
    counted = memory.experience.shortlist("g", query, 20, reach_tokens=3 * budget, item_tokens=cap)
    # Counted whole, the long replies use up three budgets' reach; counted as what packing shows, all are in.
    assert len(whole.snippets) < len(sizes) and len(counted.snippets) == len(sizes)
    result = memory.recall("g", query, budget, min_score=0.0)
    shown = [item for item in result.items if item.snippet.tier == "experience"]
    assert result.omitted.over_budget + len(shown) + result.omitted.duplicate == len(sizes)
    assert len(shown) > len(whole.snippets) and result.used_tokens > budget - cap
