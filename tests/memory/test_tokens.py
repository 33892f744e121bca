"""The one token counter: exact cl100k counts, offline, in English and Chinese."""

from __future__ import annotations

import pytest

from memory.caches import Caches
from memory.errors import ConfigError
from memory.tokens import CachingCounter, TokenCounter, get_counter, weigh_count


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
    assert not lazy._encoding.made  # a command that counts nothing never reads the file
    assert lazy.count(text) == get_counter("cl100k_base").count(text) > 0
    assert lazy._encoding.made
    cached = CachingCounter(TokenCounter("cl100k_base"), Caches().new(100))
    assert cached.count(text * 3) == lazy.count(text * 3)


@pytest.mark.parametrize("text", ["a message counted again next turn", "下一轮还要再数一次的消息"], ids=["en", "zh"])
def test_counts_are_kept_per_namespace_and_only_inside_a_request(text: str) -> None:
    caches = Caches()
    counter = CachingCounter(get_counter(), caches.new(100, weight=10_000, weigh=weigh_count))
    assert counter.count(text) == get_counter().count(text) and caches.namespaces() == set()  # outside: not kept
    with counter.counting_for("alice"):
        assert counter.count(text) == get_counter().count(text)
    with counter.counting_for("bob"):
        assert counter.count(text * 2) == get_counter().count(text * 2)
        assert counter.count("x" * 1_000) == get_counter().count("x" * 1_000)  # over a sixteenth: never kept
    assert caches.namespaces() == {"alice", "bob"}
    caches.forget("bob")
    assert caches.namespaces() == {"alice"}
