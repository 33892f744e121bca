"""The budget is exact for any input: a seeded random loop over contents, tiers, settings and budgets."""

from __future__ import annotations

import random

import pytest

from memory.config import RecallConfig
from memory.recall.model import RecallResult
from memory.recall.pack import pack
from memory.recall.render import cost
from memory.snippet import Snippet, Tier
from memory.text import terms
from memory.tokens import TokenCounter

PIECES = [
    "Never use Python 2 syntax.", "The loader reads CSV files from the inbox", "e.g. version 3.5 is out!",
    "Why?", "Anna moved to Berlin last May.", "以后不要用Python 2的语法。", "预算不超过500元；", "她喜欢喝茶！",
    "我去年五月搬到了柏林", "（她说：“好。”）", "😀", "👍🏽", "🇩🇪", "<|endoftext|>", "<|fim_prefix|>", "<|im_start|>",
    "\n", "\n\n", "\r\n", "\t", "   ", "…", "。。。", "!!!", "’", "\u2028", "\x85", "\u200b", "\x1c", "ＡＢＣ１２３",
    "٣٤", "a" * 120, "https://example.com/a?b=c&d=e", "```python\nprint('hi')\n```", "- ## [] ()", "#", "", " ",
]
KINDS = ["plan", "note", "", "multi\nline kind", "<|endoftext|>", "计划"]
SPEAKERS = ["Anna", "安娜", "😀 bot", "", "line\nbreak"]
DATES = [None, "2026-05-01T08:00:00Z", "2023-06-01", "2024-02-29T23:59:59+05:30", "yesterday", "2026-13-45"]
TIERS: list[Tier] = ["fact", "task", "experience"]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", "\n", "。"]) for _ in range(rng.randint(0, 12)))


def random_snippet(rng: random.Random, index: int, counter: TokenCounter) -> Snippet:
    tier = rng.choice(TIERS)
    text = random_text(rng)
    metadata = {"kind": rng.choice(KINDS)} if tier == "task" else {"speaker": rng.choice(SPEAKERS)}
    return Snippet(
        tier=tier,
        id=f"{tier[0]}{rng.randint(0, index + 3)}",  # repeats now and then
        text=text,
        score=rng.choice([0.5, 1.0, 0.0, rng.random()]),
        tokens=counter.count(text),
        updated_at=rng.choice(DATES),
        pinned=tier == "fact" and rng.random() < 0.4,
        metadata=metadata,
    )


def random_config(rng: random.Random) -> RecallConfig:
    cuts = sorted(rng.random() for _ in range(2))
    return RecallConfig(
        min_score=rng.random() * 0.6,
        low_confidence_fallback=rng.random() < 0.7,
        fact_share=cuts[0],
        task_share=cuts[1] - cuts[0],
        experience_share=1 - cuts[1],
        restate_constraints=rng.random() < 0.5,
    )


def random_budget(rng: random.Random) -> int:
    return rng.choice([0, 1, 2, 3, 5, 8, rng.randint(0, 30), rng.randint(30, 300), rng.randint(300, 3000), 10**6])


def check(result: RecallResult, candidates: list[Snippet], budget: int, counter: TokenCounter) -> None:
    """Every invariant of an answer."""
    assert result.used_tokens == counter.count(result.rendered) <= budget == result.budget
    # The block is exactly additive line by line, so planning never had to guess.
    lines = result.rendered.split("\n")[:-1]
    assert result.used_tokens == sum(cost(line, counter) for line in lines)
    assert (result.rendered == "") == (result.items == ())
    ranks = [(-item.snippet.score, item.snippet.id) for item in result.items]
    assert ranks == sorted(ranks) and len({item.snippet.id for item in result.items}) == len(result.items)
    omitted = result.omitted
    assert len(result.items) + omitted.below_threshold + omitted.over_budget + omitted.duplicate + omitted.empty == len(
        candidates
    )
    assert sum(item.tokens for item in result.items) <= result.used_tokens
    assert sum(item.low_confidence for item in result.items) <= 1
    for item in result.items:
        assert item.text in result.rendered and "\n" not in item.text
        assert not item.trimmed or item.text.endswith(" […]") or item.text.startswith("[…] ")
        assert not (item.trimmed and item.snippet.pinned)
    pinned_ids = {s.id for s in candidates if s.pinned}
    assert set(omitted.pinned_over_budget) <= pinned_ids
    assert bool(omitted.pinned_over_budget) == any("did not fit" in warning for warning in result.warnings)


@pytest.mark.parametrize("trial", range(8))
def test_random_inputs_never_exceed_the_budget(counter: TokenCounter, seed: int, trial: int) -> None:
    rng = random.Random(f"{seed}/{trial}")
    for _ in range(60):
        candidates = [random_snippet(rng, index, counter) for index in range(rng.randint(0, 25))]
        budget = random_budget(rng)
        min_score = rng.choice([None, 0.0, 1.0, rng.random()])
        # Sometimes a query: terms of a random candidate, so that a cut may keep the sentences around a match.
        said = terms(rng.choice(candidates).text) if candidates and rng.random() < 0.5 else []
        wanted = frozenset(rng.sample(said, min(3, len(said))))
        result = pack(candidates, budget, random_config(rng), counter, min_score=min_score, wanted=wanted)
        check(result, candidates, budget, counter)


def test_many_candidates_fill_the_budget_tightly(counter: TokenCounter, seed: int) -> None:
    rng = random.Random(seed)
    candidates = [random_snippet(rng, index, counter) for index in range(200)]
    for budget in (0, 1, 50, 500, 2000, 20000):
        result = pack(candidates, budget, RecallConfig(), counter)
        check(result, candidates, budget, counter)
        if result.omitted.over_budget:
            assert result.used_tokens >= 0.9 * budget - 30  # left-out snippets mean the block is nearly full
