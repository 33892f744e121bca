"""Offload by reference: large items recall as a head, read back whole or page by page, in any script."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from memory.errors import ValidationError
from memory.task import TaskMemory
from memory.task.pages import first_page, page_ends
from memory.tokens import TokenCounter

ENGLISH = " ".join(f"line {i}: the loader read row {i * 7} and skipped a null value." for i in range(200))
CHINESE = "".join(f"第{i}行：加载器读取了数据并跳过了一个空值，耗时约{i % 9}毫秒。" for i in range(200))
MIXED = "".join(f"步骤{i} step {i} 🚀 naïve café ｆｕｌｌ𝒲𝒾𝒹𝓉𝒽 \u0301\n" for i in range(120))


def _pages(counter: TokenCounter, text: str, size: int) -> list[str]:
    ends = page_ends(counter, text, size)
    return [text[start:end] for start, end in zip((0, *ends), ends, strict=False)]


@pytest.mark.parametrize("text", [ENGLISH, CHINESE, MIXED], ids=["english", "chinese", "mixed"])
def test_large_item_is_recalled_as_its_head(tasks: TaskMemory, counter: TokenCounter, text: str) -> None:
    total = counter.count(text)
    assert total > 500
    added = tasks.add("u1", "t-42", "tool_result", text)
    assert added.offloaded and added.tokens == total
    [snippet] = tasks.snippets("u1", "t-42")
    head = first_page(counter, text, 60)
    assert snippet.text == f"[offloaded t-42/r1, {total:,} tokens] {head.rstrip()} …"
    assert snippet.tokens == counter.count(snippet.text) < 100
    assert text.startswith(head) and counter.count(head) <= 60
    assert snippet.why["offloaded"] is True and snippet.why["total_tokens"] == total
    assert tasks.read("u1", "t-42", added.key).text == text


def test_items_at_the_threshold_stay_inline(make_tasks: Callable[..., TaskMemory], counter: TokenCounter) -> None:
    tasks = make_tasks(offload_tokens=20, head_tokens=5)
    at = counter.head(ENGLISH, 20)
    over = counter.head(ENGLISH, 21)
    assert not tasks.add("u1", "t1", "note", at).offloaded
    assert tasks.add("u1", "t1", "note", over).offloaded


@pytest.mark.parametrize("text", [ENGLISH, CHINESE, MIXED], ids=["english", "chinese", "mixed"])
@pytest.mark.parametrize("page_tokens", [1, 2, 7, 128, 100_000])
def test_pages_concatenate_back_exactly(tasks: TaskMemory, counter: TokenCounter, text: str,
                                        page_tokens: int) -> None:
    key = tasks.add("u1", "t1", "tool_result", text).key
    first = tasks.read("u1", "t1", key, page=1, page_tokens=page_tokens)
    pages = [first.text] + [
        tasks.read("u1", "t1", key, page=n, page_tokens=page_tokens).text for n in range(2, first.pages + 1)
    ]
    assert "".join(pages) == text
    assert "\ufffd" not in "".join(pages)
    assert first.total_tokens == counter.count(text)
    # A page holds at most page_tokens tokens, except a lone character that needs more on its own.
    assert all(counter.count(p) <= page_tokens or len(p) == 1 for p in pages)


@pytest.mark.parametrize("trial", range(5))
def test_random_unicode_pages_round_trip(counter: TokenCounter, seed: int, trial: int) -> None:
    rng = random.Random(f"{seed}/{trial}")
    alphabet = "abc xyz,.\n中文字符测试龘𠀀😀👍🏽é\u0301ـعربي"
    text = "".join(rng.choice(alphabet) for _ in range(3000))
    for size in (1, 3, 50):
        pages = _pages(counter, text, size)
        assert "".join(pages) == text
        assert all(counter.count(p) <= size or len(p) == 1 for p in pages)


def test_page_defaults_and_bounds(tasks: TaskMemory, counter: TokenCounter) -> None:
    key = tasks.add("u1", "t1", "tool_result", CHINESE).key
    whole = tasks.read("u1", "t1", key)
    assert (whole.page, whole.pages, whole.text) == (1, 1, CHINESE)
    default = tasks.read("u1", "t1", key, page=2)
    assert default.pages == len(page_ends(counter, CHINESE, 500))
    assert default.tokens == counter.count(default.text) <= 500
    with pytest.raises(ValidationError, match=rf"page must be between 1 and {default.pages} for t1/r1"):
        tasks.read("u1", "t1", key, page=default.pages + 1)
    with pytest.raises(ValidationError, match="page must be a whole number of at least 1"):
        tasks.read("u1", "t1", key, page=0)
    with pytest.raises(ValidationError, match="page_tokens must be"):
        tasks.read("u1", "t1", key, page_tokens=0)


def test_small_items_read_as_one_page(tasks: TaskMemory) -> None:
    key = tasks.add("u1", "t1", "note", "短笔记").key
    page = tasks.read("u1", "t1", key, page_tokens=50)
    assert (page.text, page.page, page.pages) == ("短笔记", 1, 1)


def test_one_shot_items_are_never_offloaded(tasks: TaskMemory) -> None:
    added = tasks.add("u1", "t1", "observation", ENGLISH, ephemeral=True)
    assert not added.offloaded
    [snippet] = tasks.snippets("u1", "t1")
    assert snippet.text == ENGLISH
