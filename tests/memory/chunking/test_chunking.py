"""Chunking invariants and topic cuts in English and Chinese, with the real model and tokenizer."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pytest

from memory.chunking.chunker import Chunk, chunk_text, chunk_turn
from memory.chunking.structure import parse_sections
from memory.config import ChunkingConfig
from memory.embedding import Embedder
from memory.text.sentences import sentence_spans
from memory.tokens import TokenCounter

SMALL = ChunkingConfig(target_tokens=60, max_tokens=100, min_tokens=15, similarity_drop=0.25)

EN_COOKING = (
    "To make a good tomato sauce, start by heating olive oil in a heavy pan. "
    "Add chopped garlic and cook it gently until fragrant. Pour in crushed tomatoes and a pinch of salt. "
    "Let the sauce simmer for twenty minutes, stirring now and then. "
    "Finish it with fresh basil leaves and serve it over pasta."
)
EN_ASTRONOMY = (
    "The Andromeda galaxy is the nearest large spiral galaxy to the Milky Way. "
    "It lies about two and a half million light years away. "
    "Astronomers measure its distance using Cepheid variable stars. Its disk contains roughly one trillion stars. "
    "In about four billion years it will collide with our own galaxy."
)
ZH_COOKING = (
    "做红烧肉要先把五花肉切成小块。锅里放少许油，加入冰糖炒出糖色。然后把肉块放进去翻炒上色。"
    "加入酱油、料酒和姜片，再倒入热水没过肉。小火慢炖一个小时，最后大火收汁即可。"
)
ZH_ASTRONOMY = (
    "仙女座星系是距离银河系最近的大型旋涡星系。它距离我们大约二百五十万光年。"
    "天文学家利用造父变星来测量它的距离。这个星系包含大约一万亿颗恒星。大约四十亿年后，它将与银河系发生碰撞。"
)

EN_DOC = f"""# Cooking

{EN_COOKING}

## Tools

- A heavy pan spreads the heat evenly. It keeps the sauce from burning.
- A wooden spoon does not scratch the pan.

```python
def simmer(minutes: int) -> str:
    # A comment that looks like a heading.
    return f"simmered for {{minutes}} minutes"
```

| tool | use |
|------|-----|
| pan  | heat |

# Astronomy

{EN_ASTRONOMY}
"""

ZH_DOC = f"""# 烹饪

{ZH_COOKING}

## 工具

- 厚底锅受热均匀，不容易糊锅。
- 木铲不会刮伤锅底。

```
print("你好")
```

| 工具 | 用途 |
|------|------|
| 锅   | 加热 |

# 天文

{ZH_ASTRONOMY}
"""


class CountingEncoder:
    """The real embedder, counting the batched calls and texts that reach it."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.calls: list[list[str]] = []

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.embedder.encode_documents(texts)


def _assert_invariants(text: str, chunks: list[Chunk], counter: TokenCounter, config: ChunkingConfig) -> None:
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end]
        assert chunk.tokens == counter.count(chunk.text) <= config.max_tokens
    assert all(a.end <= b.start for a, b in itertools.pairwise(chunks))
    # Every sentence of every block lies inside exactly one chunk, in order.
    sections = parse_sections(text)
    for section in sections:
        inside = [c for c in chunks if section.start <= c.start and c.end <= section.end]
        assert {c.heading for c in inside} == {" > ".join(section.heading)}
        for block in section.blocks:
            spans = (
                [(block.start, block.end)]
                if block.kind in ("code", "table")
                else [(block.start + s, block.start + e) for s, e in sentence_spans(block.text)]
            )
            for start, end in spans:
                holders = [c for c in inside if c.start <= start and end <= c.end]
                assert len(holders) == 1, text[start:end]
    joined = "\n".join(c.text for c in chunks)
    position = 0
    for section in sections:
        for block in section.blocks:
            for start, end in sentence_spans(block.text):
                found = joined.find(block.text[start:end], position)
                assert found >= 0, block.text[start:end]
                position = found + 1
    assert sum(len(c.text) for c in chunks) <= len(text)


@pytest.mark.parametrize("doc", [EN_DOC, ZH_DOC], ids=["en", "zh"])
def test_invariants(doc: str, counter: TokenCounter, embedder: Embedder) -> None:
    encoder = CountingEncoder(embedder)
    chunks = chunk_text(doc, counter, encoder, SMALL)
    _assert_invariants(doc, chunks, counter, SMALL)
    assert len(encoder.calls) <= 1  # one batched call per document at most
    code = [c for c in chunks if c.kind == "code"]
    assert len(code) == 1 and "```" in code[0].text and code[0].text.count("```") == 2
    assert any(c.kind == "table" or "| " in c.text for c in chunks)
    headings = [c.heading for c in chunks]
    assert headings[0] in ("Cooking", "烹饪") and headings[-1] in ("Astronomy", "天文")


@pytest.mark.parametrize(
    ("first", "second"), [(EN_COOKING, EN_ASTRONOMY), (ZH_COOKING, ZH_ASTRONOMY)], ids=["en", "zh"]
)
def test_cuts_at_the_topic_change(first: str, second: str, counter: TokenCounter, embedder: Embedder) -> None:
    text = first + (" " if first.isascii() else "") + second  # one paragraph: only the meaning tells them apart
    total = counter.count(text)
    config = ChunkingConfig(target_tokens=total // 2, max_tokens=total - 10, min_tokens=10, similarity_drop=0.25)
    encoder = CountingEncoder(embedder)
    chunks = chunk_text(text, counter, encoder, config)
    _assert_invariants(text, chunks, counter, config)
    assert len(encoder.calls) == 1
    assert chunks[0].text == first
    assert all(c.text in second for c in chunks[1:])


@pytest.mark.parametrize("text", [EN_COOKING, ZH_COOKING, "# Title\n\nShort body.\n\n```\ncode\n```"])
def test_short_documents_cost_no_model_call(text: str, counter: TokenCounter, embedder: Embedder) -> None:
    encoder = CountingEncoder(embedder)
    chunks = chunk_text(text, counter, encoder, ChunkingConfig())
    assert encoder.calls == []
    assert len(chunks) == 1 and chunks[0].tokens == counter.count(chunks[0].text)


def test_empty_text_has_no_chunks(counter: TokenCounter) -> None:
    assert chunk_text("", counter, None, SMALL) == []
    assert chunk_text("# Only a heading\n", counter, None, SMALL) == []
    assert chunk_turn("   ", counter, SMALL) == []


@pytest.mark.parametrize(
    "sentence",
    [
        " ".join(f"word{i}" for i in range(400)),
        "".join("天地玄黄宇宙洪荒日月盈昃辰宿列张" for _ in range(30)),
    ],
    ids=["en", "zh"],
)
def test_an_oversized_sentence_is_cut_on_tokens(sentence: str, counter: TokenCounter) -> None:
    text = f"Intro sentence here.\n\n{sentence}\n\nOutro sentence here."
    chunks = chunk_text(text, counter, None, SMALL)
    assert all(c.tokens == counter.count(c.text) <= SMALL.max_tokens for c in chunks)
    assert "".join(c.text for c in chunks).replace(" ", "").replace("\n", "") == text.replace(" ", "").replace("\n", "")


def test_an_oversized_code_block_is_cut_on_lines(counter: TokenCounter) -> None:
    lines = [f"value_{i} = compute(value_{i - 1}, {i})  # 第{i}步" for i in range(1, 60)]
    text = "Before the code.\n\n```python\n" + "\n".join(lines) + "\n```\n"
    chunks = chunk_text(text, counter, None, SMALL)
    code = [c for c in chunks if c.kind == "code"]
    assert len(code) > 1
    assert all(c.tokens <= SMALL.max_tokens for c in chunks)
    for line in lines:
        assert sum(line in c.text for c in chunks) == 1  # no line is cut


@pytest.mark.parametrize("text", [EN_COOKING, ZH_COOKING, "Run this:\n\n```\nls -la\n```"], ids=["en", "zh", "code"])
def test_a_turn_is_one_chunk(text: str, counter: TokenCounter) -> None:
    chunks = chunk_turn("  " + text + "\n", counter, ChunkingConfig())
    assert len(chunks) == 1
    assert chunks[0].text == text and chunks[0].start == 2 and chunks[0].heading == ""
    assert chunks[0].kind == ("code" if "```" in text else "text")


@pytest.mark.parametrize("text", [EN_COOKING + " " + EN_ASTRONOMY, ZH_COOKING + ZH_ASTRONOMY], ids=["en", "zh"])
def test_a_long_turn_is_cut_on_size(text: str, counter: TokenCounter) -> None:
    config = ChunkingConfig(target_tokens=40, max_tokens=80, min_tokens=10)
    chunks = chunk_turn(text, counter, config)
    assert len(chunks) > 1
    _assert_invariants(text, chunks, counter, config)
