"""pack(): allocation, threshold, duplicates, order, trimming and the rendered block, in English and Chinese."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memory.config import RecallConfig
from memory.errors import ValidationError
from memory.recall.model import RecallResult
from memory.recall.pack import pack
from memory.recall.render import SECTIONS, cost
from memory.snippet import Snippet
from memory.text import query_terms
from memory.tokens import TokenCounter

MakeSnippet = Callable[..., Snippet]
CONFIG = RecallConfig()
LONG_PLAN = (
    "Read the CSV files from the inbox folder. Validate every row against the schema. "
    "Write failing rows to the quarantine table with the reason. Load the good rows into the warehouse. "
    "Send a summary to the owner when the run ends."
)
HANZI = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说"
LONG_PLAN_ZH = (
    "从收件箱读取CSV文件。按模式校验每一行。把失败的行和原因写入隔离表。"
    "把合格的行装入数据仓库。运行结束后给负责人发送总结。"
)


@pytest.fixture()
def basic(snip: MakeSnippet) -> list[Snippet]:
    """One candidate of each kind, as in the issue's example."""
    return [
        snip("experience", "e1", "I moved to Berlin last May.", 0.6, updated_at="2023-06-01T10:00:00Z",
             metadata={"speaker": "Anna"}),
        snip("task", "t1", "Write the loader first.", 0.7, metadata={"kind": "plan"}),
        snip("fact", "f1", "Never use Python 2 syntax.", 1.0, pinned=True, updated_at="2026-05-01T08:00:00Z"),
        snip("fact", "f2", "用户住在柏林。", 0.5),
    ]


def check_exact(result: RecallResult, counter: TokenCounter) -> None:
    """The invariant every answer keeps."""
    assert result.used_tokens == counter.count(result.rendered) <= result.budget


def test_renders_sections_in_order(basic: list[Snippet], counter: TokenCounter) -> None:
    result = pack(basic, 1000, CONFIG, counter)
    assert result.rendered == (
        "## Constraints (always apply)\n"
        "- Never use Python 2 syntax.\n"
        "## Facts\n"
        "- 用户住在柏林。\n"
        "## Task notes\n"
        "- [plan] Write the loader first.\n"
        "## Relevant memory\n"
        "- (2023-06-01, Anna) I moved to Berlin last May.\n"
    )
    assert [item.snippet.id for item in result.items] == ["f1", "t1", "e1", "f2"]
    assert result.warnings == () and result.omitted.over_budget == 0
    headers = sum(cost(header, counter) for header in SECTIONS.values())
    assert result.used_tokens == headers + sum(item.tokens for item in result.items)
    check_exact(result, counter)


def test_sections_appear_only_with_items(snip: MakeSnippet, counter: TokenCounter) -> None:
    result = pack([snip("experience", "e1", "她喜欢喝茶。", 0.9)], 100, CONFIG, counter)
    assert result.rendered == "## Relevant memory\n- 她喜欢喝茶。\n"
    assert pack([], 100, CONFIG, counter).rendered == ""


def test_items_by_score_with_ties_broken_by_id(snip: MakeSnippet, counter: TokenCounter) -> None:
    candidates = [snip("experience", name, f"Memory {name} is here.", 0.5) for name in ("e3", "e1", "e2")]
    candidates.append(snip("task", "t9", "Task note.", 0.9))
    result = pack(candidates, 500, CONFIG, counter)
    assert [item.snippet.id for item in result.items] == ["t9", "e1", "e2", "e3"]


@pytest.mark.parametrize("budget", [-1, -100])
def test_negative_budget_is_a_validation_error(basic: list[Snippet], counter: TokenCounter, budget: int) -> None:
    with pytest.raises(ValidationError, match="budget"):
        pack(basic, budget, CONFIG, counter)


@pytest.mark.parametrize("min_score", [-0.1, 1.5, float("nan")])
def test_bad_min_score_is_a_validation_error(basic: list[Snippet], counter: TokenCounter, min_score: float) -> None:
    with pytest.raises(ValidationError, match="min_score"):
        pack(basic, 100, CONFIG, counter, min_score=min_score)


@pytest.mark.parametrize("budget", [0, 1, 5, 7])
def test_budget_below_a_header_gives_an_empty_block(basic: list[Snippet], counter: TokenCounter, budget: int) -> None:
    result = pack(basic, budget, CONFIG, counter)
    assert result.rendered == "" and result.used_tokens == 0 and result.items == ()
    assert result.omitted.pinned_over_budget == ("f1",)
    assert "f1" in result.warnings[0] and "raise the budget" in result.warnings[0]


def test_budget_below_a_header_without_pinned_facts_warns_nothing(snip: MakeSnippet, counter: TokenCounter) -> None:
    result = pack([snip("task", "t1", "Write the loader.", 0.9)], 3, CONFIG, counter)
    assert result.rendered == "" and result.warnings == () and result.omitted.over_budget == 1


@pytest.mark.parametrize(
    "texts",
    [
        ["Never use Python 2 syntax.", "Keep the budget under 500 euros.", "Answer in English only."],
        ["以后不要用Python 2的语法。", "预算不超过500元。", "只用中文回答。"],
    ],
)
def test_pinned_facts_over_budget_are_listed_and_warned(
    snip: MakeSnippet, counter: TokenCounter, texts: list[str]
) -> None:
    pinned = [snip("fact", f"f{index}", text, 1.0, pinned=True) for index, text in enumerate(texts)]
    others = [snip("experience", "e1", "Anna moved to Berlin.", 0.9)]
    full = pack(pinned + others, 1000, CONFIG, counter)
    budget = full.items[0].tokens + full.items[1].tokens + 8  # room for the header and two constraints only
    result = pack(pinned + others, budget, CONFIG, counter)
    assert [item.snippet.id for item in result.items] == ["f0", "f1"]
    assert result.omitted.pinned_over_budget == ("f2",) and result.omitted.over_budget == 2
    assert len(result.warnings) == 2 and "f2" in result.warnings[0]
    assert "pinned constraints took" in result.warnings[1] and "1 of the 1 other memories" in result.warnings[1]
    assert not any(item.trimmed for item in result.items)
    check_exact(result, counter)


def test_pinned_facts_come_before_better_scored_others(snip: MakeSnippet, counter: TokenCounter) -> None:
    pinned = snip("fact", "f1", "Never use Python 2 syntax.", 0.1, pinned=True)
    other = snip("experience", "e1", "Anna moved to Berlin last May and likes it.", 0.99)
    budget = pack([pinned], 100, CONFIG, counter).used_tokens
    result = pack([other, pinned], budget, CONFIG, counter)
    assert [item.snippet.id for item in result.items] == ["f1"] and result.omitted.over_budget == 1


def test_below_threshold_is_left_out_even_with_budget(snip: MakeSnippet, counter: TokenCounter) -> None:
    candidates = [
        snip("experience", "e1", "Anna moved to Berlin.", 0.5),
        snip("experience", "e2", "The weather was nice.", 0.1),
        snip("fact", "f1", "只用中文回答。", 0.0, pinned=True),
    ]
    result = pack(candidates, 1000, CONFIG, counter)
    assert {item.snippet.id for item in result.items} == {"e1", "f1"}  # pinned facts are exempt
    assert result.omitted.below_threshold == 1
    stricter = pack(candidates, 1000, replace(CONFIG, low_confidence_fallback=False), counter, min_score=0.6)
    assert [item.snippet.id for item in stricter.items] == ["f1"] and stricter.omitted.below_threshold == 2


@pytest.mark.parametrize("text", ["She might like tea.", "她可能喜欢喝茶。"])
def test_low_confidence_fallback_returns_the_single_best(snip: MakeSnippet, counter: TokenCounter, text: str) -> None:
    candidates = [
        snip("experience", "e1", text, 0.15),
        snip("experience", "e2", "Unrelated chatter about the weather.", 0.05),
        snip("fact", "f1", "Never use Python 2 syntax.", 1.0, pinned=True),
    ]
    result = pack(candidates, 1000, CONFIG, counter)
    flagged = [item for item in result.items if item.low_confidence]
    assert [item.snippet.id for item in flagged] == ["e1"]
    assert "(low confidence)" in result.rendered and result.omitted.below_threshold == 1
    assert any("low_confidence" in warning for warning in result.warnings)
    assert not next(item for item in result.items if item.snippet.pinned).low_confidence
    off = pack(candidates, 1000, replace(CONFIG, low_confidence_fallback=False), counter)
    assert [item.snippet.id for item in off.items] == ["f1"] and off.omitted.below_threshold == 2


def test_duplicates_are_counted_and_the_better_one_kept(snip: MakeSnippet, counter: TokenCounter) -> None:
    candidates = [
        snip("experience", "e1", "Anna moved to Berlin last May.", 0.6),
        snip("experience", "e2", "anna moved to berlin last may", 0.8),
        snip("experience", "e3", "安娜去年五月搬到了柏林。", 0.7, updated_at="2023-01-01"),
        snip("experience", "e4", "安娜去年五月搬到了柏林", 0.7, updated_at="2024-01-01"),
    ]
    result = pack(candidates, 1000, CONFIG, counter)
    assert [item.snippet.id for item in result.items] == ["e2", "e4"] and result.omitted.duplicate == 2


def test_blank_candidates_are_counted_as_empty(snip: MakeSnippet, counter: TokenCounter) -> None:
    result = pack([snip("task", "t1", " \n "), snip("task", "t2", "Real note.", 0.9)], 100, CONFIG, counter)
    assert [item.snippet.id for item in result.items] == ["t2"] and result.omitted.empty == 1


def test_unused_share_flows_to_other_tiers(snip: MakeSnippet, counter: TokenCounter) -> None:
    candidates = [snip("experience", f"e{index:02}", f"Memory number {index} about the loader.", 0.9)
                  for index in range(40)]
    result = pack(candidates, 200, CONFIG, counter)
    assert result.used_tokens > 0.9 * 200  # far beyond the 40% experience share


def test_each_tier_gets_its_share_when_all_want_more(snip: MakeSnippet, counter: TokenCounter, seed: int) -> None:
    tasks = [snip("task", f"t{index:02}", f"Task step {index}: check the loader output.", 0.95) for index in range(40)]
    shuffled = random.Random(seed)
    memories = [
        snip("experience", f"e{index:02}", "".join(shuffled.sample(HANZI, 12)) + "。", 0.5) for index in range(40)
    ]
    result = pack(tasks + memories, 400, CONFIG, counter)
    spent = {
        tier: sum(item.tokens for item in result.items if item.snippet.tier == tier) for tier in ("task", "experience")
    }
    # Facts have no candidates, so their 30% flows to task and experience in proportion (3:4).
    assert 0.35 * 400 <= spent["task"] <= 0.45 * 400
    assert 0.5 * 400 <= spent["experience"] <= 0.6 * 400
    check_exact(result, counter)


def test_smaller_snippets_below_are_tried(snip: MakeSnippet, counter: TokenCounter) -> None:
    big = snip("experience", "e1", "word " * 300, 0.9)  # no sentence boundary, so it cannot be trimmed
    small = snip("experience", "e2", "A small but useful memory.", 0.5)
    result = pack([big, small], 100, CONFIG, counter)
    assert [item.snippet.id for item in result.items] == ["e2"] and result.omitted.over_budget == 1


@pytest.mark.parametrize("text", [LONG_PLAN, LONG_PLAN_ZH])
def test_long_snippet_is_trimmed_at_a_sentence(snip: MakeSnippet, counter: TokenCounter, text: str) -> None:
    result = pack([snip("task", "t1", text, 0.9, metadata={"kind": "plan"})], 45, CONFIG, counter)
    (item,) = result.items
    assert item.trimmed and item.text.endswith(" […]")
    kept = item.text.removesuffix(" […]")
    assert text.startswith(kept) and kept[-1] in ".。"
    assert item.tokens >= 0.5 * (45 - 4)  # it fills most of the space left after the header
    assert result.rendered == "## Task notes\n- [plan] " + item.text + "\n"
    check_exact(result, counter)


def test_whole_snippets_are_not_marked_trimmed(basic: list[Snippet], counter: TokenCounter) -> None:
    result = pack(basic, 1000, CONFIG, counter)
    assert not any(item.trimmed for item in result.items) and "[…]" not in result.rendered


def test_restates_constraints_at_the_end_when_budget_permits(basic: list[Snippet], counter: TokenCounter) -> None:
    config = replace(CONFIG, restate_constraints=True)
    plain = pack(basic, 1000, CONFIG, counter)
    result = pack(basic, 1000, config, counter)
    assert result.rendered == plain.rendered + "## Remember\n- Never use Python 2 syntax.\n"
    assert result.items == plain.items
    tight = pack(basic, plain.used_tokens, config, counter)
    assert tight.rendered == plain.rendered


def test_freshness_tags(basic: list[Snippet], counter: TokenCounter) -> None:
    result = pack(basic, 1000, CONFIG, counter, now=datetime(2026, 5, 4, tzinfo=UTC))
    tags = {item.snippet.id: item.freshness for item in result.items}
    assert tags == {"f1": "updated 2026-05-01, 3 days ago", "t1": None, "e1": "updated 2023-06-01, 2 years ago",
                    "f2": None}
    assert pack(basic, 1000, CONFIG, counter).items[0].freshness == "updated 2026-05-01"


def test_special_token_strings_are_plain_text(snip: MakeSnippet, counter: TokenCounter) -> None:
    text = "The user typed <|endoftext|> and <|fim_prefix|> literally 😀."
    result = pack([snip("experience", "e1", text, 0.9)], 100, CONFIG, counter)
    assert text in result.rendered
    check_exact(result, counter)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pinned_constraints_that_crowd_out_the_answer_are_named_in_a_warning(
    snip: MakeSnippet, counter: TokenCounter, lang: str
) -> None:
    said = {"en": ["Never use Python 2 syntax.", "Keep the budget under 500 euros.", "Answer in English only.",
                   "Use metric units.", "No tables in answers.", "Cite the source of each figure."],
            "zh": ["以后不要用Python 2的语法。", "预算不超过500元。", "只用中文回答。", "用公制单位。", "回答里不要用表格。",
                   "每个数字都要注明出处。"]}[lang]
    pinned = [snip("fact", f"f{i}", text, 1.0, pinned=True) for i, text in enumerate(said)]
    answer = snip("experience", "e1", LONG_PLAN if lang == "en" else LONG_PLAN_ZH, 0.9)
    every = pack(pinned, 1000, CONFIG, counter).used_tokens
    crowded = pack([*pinned, answer], every + 10, CONFIG, counter)
    assert [item.snippet.id for item in crowded.items] == [f"f{i}" for i in range(len(said))]
    assert len(crowded.warnings) == 1 and "the pinned constraints took" in crowded.warnings[0]
    assert "1 of the 1 other memories that matched were left out" in crowded.warnings[0]
    roomy = pack([*pinned, answer], 1000, CONFIG, counter)
    assert roomy.warnings == () and "e1" in [item.snippet.id for item in roomy.items]


def _reply(sentences: list[str], sep: str = " ") -> str:
    return sep.join(sentences)


REPLY_EN = _reply([f"Point {n}: keep the loader idempotent and log every skipped row with its reason." for n in range(1, 30)]
                  + ["The quarantine table keeps the failing rows for a week."])
REPLY_ZH = _reply([f"第{n}点：加载器要幂等，并记录每一行被跳过的原因。" for n in range(1, 30)]
                  + ["隔离表把失败的行保留一周。"], "")
SHORT = {"en": ["Anna moved to Berlin last May.", "The loader runs every night at two.",
                "Ben prefers tea to coffee.", "The warehouse is on PostgreSQL 15."],
         "zh": ["安娜去年五月搬到了柏林。", "加载器每晚两点运行。", "本喜欢茶胜过咖啡。", "数据仓库在PostgreSQL 15上。"]}


@pytest.mark.parametrize(("reply", "lang", "wanted"), [(REPLY_EN, "en", "quarantine"), (REPLY_ZH, "zh", "隔离")])
def test_a_long_item_shows_at_most_its_share_when_others_wait(
    snip: MakeSnippet, counter: TokenCounter, reply: str, lang: str, wanted: str
) -> None:
    others = [snip("experience", f"s{n}", text, 0.5 - n / 100) for n, text in enumerate(SHORT[lang])]
    long_one = snip("experience", "long", reply, 0.9)
    budget = 400
    assert long_one.tokens > budget  # whole, it would crowd out every other memory
    terms = frozenset(query_terms(wanted))
    result = pack([long_one, *others], budget, CONFIG, counter, wanted=terms)
    by_id = {item.snippet.id: item for item in result.items}
    assert set(by_id) == {"long", "s0", "s1", "s2", "s3"}
    cut = by_id["long"]
    assert cut.trimmed and cut.tokens <= CONFIG.item_share * budget
    assert wanted in cut.text  # cut around the query's word, which sits at the end of the reply
    check_exact(result, counter)
    # Whole items when they all fit, and item_share 1 turns the bound off.
    roomy = pack([long_one, *others], 5000, CONFIG, counter, wanted=terms)
    assert not any(item.trimmed for item in roomy.items)
    whole = pack([long_one, *others], budget, replace(CONFIG, item_share=1.0), counter, wanted=terms)
    assert "long" in {item.snippet.id for item in whole.items}
    assert sum(1 for item in whole.items if not item.trimmed) < len(result.items)


@pytest.mark.parametrize(("reply", "lang"), [(REPLY_EN, "en"), (REPLY_ZH, "zh")])
def test_a_neighbour_shows_no_more_than_the_turn_that_brought_it(
    snip: MakeSnippet, counter: TokenCounter, reply: str, lang: str
) -> None:
    seed = snip("experience", "seed", SHORT[lang][0], 0.8)
    neighbour = snip("experience", "next", reply, 0.64, why={"neighbour_of": "seed"})
    filler = [snip("experience", f"s{n}", text, 0.5 - n / 100) for n, text in enumerate(SHORT[lang][1:])]
    result = pack([seed, neighbour, *filler], 300, CONFIG, counter)
    by_id = {item.snippet.id: item for item in result.items}
    assert by_id["next"].trimmed and by_id["next"].tokens <= CONFIG.item_share * 300
    # With a seed longer than one of its sentences, the neighbour shows no more than the seed.
    long_seed = snip("experience", "seed", " ".join(SHORT[lang]) if lang == "en" else "".join(SHORT[lang]), 0.8)
    result = pack([long_seed, neighbour, *filler], 300, CONFIG, counter)
    by_id = {item.snippet.id: item for item in result.items}
    assert by_id["next"].trimmed and by_id["next"].tokens <= by_id["seed"].tokens
    assert set(by_id) == {"seed", "next", "s0", "s1", "s2"}
    check_exact(result, counter)


def test_pinned_constraints_are_never_cut_by_the_share(snip: MakeSnippet, counter: TokenCounter) -> None:
    rule = snip("fact", "f1", LONG_PLAN, 1.0, pinned=True)
    result = pack([rule, snip("experience", "e1", REPLY_EN, 0.9)], 200, CONFIG, counter)
    pinned = [item for item in result.items if item.snippet.pinned]
    assert pinned and not pinned[0].trimmed and pinned[0].text == LONG_PLAN
    check_exact(result, counter)
