"""Every [limits] size limit is the library's: each entry point refuses over-limit input with TooLargeError, and
stores nothing (the REST layer maps that one error to 413, tests/security checks the answers)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from memory import Memory, MemoryTurn, TooLargeError
from memory.config import Config
from memory.embedding import Embedder

LONG = {"en": "The loader retries a failed batch twice. " * 3, "zh": "加载器会把失败的批次重试两次。" * 5}


@pytest.fixture()
def small(config: Config, embedder: Embedder) -> Iterator[Memory]:
    """A Memory whose limits are tiny: 60 characters of text, 30 of query, batches of 3."""
    limited = config.replace("limits", max_text_chars=60, max_query_chars=30, max_batch=3)
    with Memory(limited, embedder=embedder) as opened:
        yield opened


def _stored(memory: Memory) -> dict[str, int]:
    # Every row, live or not: a refused call must have written none.
    return {name: memory.store.db.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
            for name in ("facts", "documents", "chunks", "task_items")}


CALLS: dict[str, Callable[[Memory, str], Any]] = {
    "facts.observe": lambda m, text: m.facts.observe("u1", text),
    "facts.pin text": lambda m, text: m.facts.pin("u1", text=text),
    "facts.pin value": lambda m, text: m.facts.pin("u1", key="loader", value=text),
    "tasks.add": lambda m, text: m.tasks.add("u1", "t1", "note", text),
    "add_document": lambda m, text: m.add_document("u1", text),
    "remember": lambda m, text: m.remember("u1", [MemoryTurn(text=text, speaker="user")]),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("call", list(CALLS))
def test_text_over_max_text_chars_is_too_large_and_stores_nothing(small: Memory, call: str, lang: str) -> None:
    before = _stored(small)
    with pytest.raises(TooLargeError, match=r"over the limit of 60 \(limits\.max_text_chars\)"):
        CALLS[call](small, LONG[lang])
    assert _stored(small) == before
    CALLS[call](small, LONG[lang][:40])  # at the limit and under it, the same call goes through


@pytest.mark.parametrize(
    "query",
    ["How often does the loader retry a failed batch?",
     "加载器在失败之后会把同一个批次重试多少次才会放弃呢，还是一直重试？"],
    ids=["en", "zh"],
)
def test_a_query_over_max_query_chars_is_too_large_in_recall_and_search(small: Memory, query: str) -> None:
    assert len(query) > 30
    for search in (lambda: small.recall("u1", query, 500), lambda: small.experience.search("u1", query),
                   lambda: small.experience.explain("u1", query)):
        with pytest.raises(TooLargeError, match=r"query has .* \(limits\.max_query_chars\)"):
            search()
    assert small.recall("u1", query[:30], 500).used_tokens == 0


def test_batches_over_max_batch_are_too_large_and_store_nothing(small: Memory) -> None:
    turns = [MemoryTurn(text=f"turn {i}", speaker="user") for i in range(4)]
    with pytest.raises(TooLargeError, match=r"4 messages in one request, over limits\.max_batch \(3\)"):
        small.remember("u1", turns)
    assert _stored(small)["documents"] == 0
    keys = [small.tasks.add("u1", "t1", "note", f"笔记 {i}").key for i in range(4)]
    with pytest.raises(TooLargeError, match=r"4 keys in one request, over limits\.max_batch \(3\)"):
        small.promote("u1", "t1", keys)
    assert _stored(small)["documents"] == 0
    assert [r.status for r in small.promote("u1", "t1", keys[:3])] == ["created"] * 3
