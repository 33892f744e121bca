"""Markdown structure: heading paths, paragraphs, list items, code blocks and tables as exact slices."""

from __future__ import annotations

from memory.chunking.structure import parse_sections

DOC = """Preface line.

# Intro
First paragraph
continues here.

## Setup
- item one
- item two
  continued
1. numbered

```python
# not a heading
x = 1

y = 2
```

| a | b |
|---|---|
| 1 | 2 |

Setext title
============
Under setext.

# 第二章
中文段落。

name | value
---- | -----
k    | v
"""


def test_sections_and_blocks() -> None:
    sections = parse_sections(DOC)
    assert [s.heading for s in sections] == [(), ("Intro",), ("Intro", "Setup"), ("Setext title",), ("第二章",)]
    kinds = [[b.kind for b in s.blocks] for s in sections]
    assert kinds == [
        ["paragraph"],
        ["paragraph"],
        ["list_item", "list_item", "list_item", "code", "table"],
        ["paragraph"],
        ["paragraph", "table"],
    ]
    for section in sections:
        for block in section.blocks:
            assert DOC[block.start : block.end] == block.text
    setup = sections[2].blocks
    assert setup[1].text == "- item two\n  continued"
    assert setup[3].text.startswith("```python") and setup[3].text.endswith("```")
    assert "y = 2" in setup[3].text


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "Intro.\n\n```\ncode line\n# still code"
    blocks = parse_sections(text)[0].blocks
    assert [b.kind for b in blocks] == ["paragraph", "code"]
    assert blocks[1].text.endswith("# still code")


def test_heading_only_and_empty_text() -> None:
    assert parse_sections("# Title\n\n## Sub\n") == []
    assert parse_sections("") == []


def test_thematic_break_is_dropped() -> None:
    sections = parse_sections("Above.\n\n---\n\nBelow.")
    assert [b.text for b in sections[0].blocks] == ["Above.", "Below."]
