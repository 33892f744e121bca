"""The one token counter: exact cl100k counts, offline, in English and Chinese."""

from __future__ import annotations

import pytest

from memory.errors import ConfigError
from memory.tokens import CachingCounter, TokenCounter, get_counter


@pytest.mark.parametrize(
    ("text", "expected"),
    [("hello world", 2), ("", 0), ("Never use Python 2 syntax.", 7), ("预算不超过500元", 7)],
)
def test_counts_are_exact_cl100k(text: str, expected: int) -> None:
    assert get_counter().count(text) == expected


def test_special_token_strings_count_as_text() -> None:
    assert get_counter().count("<|endoftext|>") > 1


@pytest.mark.parametrize("text", ["The quick brown fox jumps over the lazy dog. " * 5, "只分析A列和B列，用中文回答。" * 5])
@pytest.mark.parametrize("limit", [0, 1, 3, 7, 20])
def test_head_never_exceeds_the_limit_and_is_a_prefix(text: str, limit: int) -> None:
    counter = get_counter()
    head = counter.head(text, limit)
    assert counter.count(head) <= limit
    assert text.startswith(head)
    assert "\ufffd" not in head


def test_unknown_encoding_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not available offline"):
        TokenCounter("no_such_encoding")


@pytest.mark.parametrize("text", ["read on first use", "第一次用时才读"], ids=["en", "zh"])
def test_a_counter_reads_its_ranks_on_first_use_and_counts_as_one_loaded_at_once(text: str) -> None:
    lazy = TokenCounter("cl100k_base")
    assert lazy._loaded is None  # a command that counts nothing never reads the file
    assert lazy.count(text) == get_counter("cl100k_base").count(text) > 0
    assert lazy._loaded is not None
    cached = CachingCounter(TokenCounter("cl100k_base"))
    assert cached.count(text * 3) == lazy.count(text * 3)
