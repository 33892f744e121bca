"""Semantic chunking: structure first, then sentences, merged up to the target size and cut at topic shifts."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from memory.chunking.boundaries import adjacent_similarities, choose_boundaries
from memory.chunking.pieces import cut_lines, cut_tokens
from memory.chunking.structure import Section, parse_sections
from memory.config import ChunkingConfig
from memory.text.sentences import sentence_spans
from memory.tokens import TokenCounter

__all__ = ["Chunk", "ChunkKind", "DocumentEncoder", "chunk_text", "chunk_texts", "chunk_turn"]

ChunkKind = Literal["text", "code", "table"]


class DocumentEncoder(Protocol):
    """What chunking needs of a model: memory.embedding.Embedder is one."""

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 rows, one per text."""
        ...


@dataclass(frozen=True)
class Chunk:
    """A piece of a document: `text` is exactly `document[start:end]` and `tokens` its exact count.

    `heading` is the heading path ("Intro > Setup"; heading lines themselves are not in `text`);
    `kind` is "code" when the chunk holds a code block, else "table" when it holds a table, else "text".
    """

    text: str
    ordinal: int
    heading: str
    tokens: int
    kind: ChunkKind
    start: int
    end: int


@dataclass(frozen=True)
class _Unit:
    """A sentence, or a whole code block or table (or a piece of one that was too long)."""

    start: int
    end: int
    kind: ChunkKind
    opens_block: bool
    tokens: int


@dataclass(frozen=True)
class _Plan:
    """A section with its units; `units` is empty when the section is one chunk as it stands."""

    section: Section
    units: tuple[_Unit, ...]


def chunk_text(
    text: str, counter: TokenCounter, embedder: DocumentEncoder | None, config: ChunkingConfig
) -> list[Chunk]:
    """Chunks of a document, each at most max_tokens and never across a heading.

    Sections that fit target_tokens cost no model call; the sentences of the others are embedded in
    one batched call per document (`embedder=None` cuts on size and paragraph breaks only).
    """
    return chunk_texts([text], counter, embedder, config)[0]


def chunk_texts(
    texts: Sequence[str], counter: TokenCounter, embedder: DocumentEncoder | None, config: ChunkingConfig
) -> list[list[Chunk]]:
    """chunk_text of each text, the sentences of all of them embedded in one call.

    One call fills the model's batches across documents (a short document alone fills part of one) and embeds a
    sentence that several documents share once; each document is still cut on its own sentences' similarities.
    """
    plans = [[_plan(text, section, counter, config) for section in parse_sections(text)] for text in texts]
    wanted = [(doc, index) for doc, sections in enumerate(plans) for index, plan in enumerate(sections)
              if len(plan.units) > 1]
    similarities: dict[tuple[int, int], list[float]] = {}
    if embedder is not None and wanted:
        sentences = [texts[doc][u.start : u.end] for doc, index in wanted for u in plans[doc][index].units]
        vectors = embedder.encode_documents(sentences)
        row = 0
        for doc, index in wanted:
            size = len(plans[doc][index].units)
            similarities[doc, index] = adjacent_similarities(vectors[row : row + size])
            row += size
    return [_chunks(text, sections, [similarities.get((doc, index)) for index in range(len(sections))], counter,
                    config) for doc, (text, sections) in enumerate(zip(texts, plans, strict=True))]


def _chunks(text: str, plans: Sequence[_Plan], similarities: Sequence[list[float] | None], counter: TokenCounter,
            config: ChunkingConfig) -> list[Chunk]:
    chunks: list[Chunk] = []
    for plan, section_similarities in zip(plans, similarities, strict=True):
        heading = " > ".join(title for title in plan.section.heading if title)
        for start, end, kind in _pieces(text, plan, section_similarities, counter, config):
            piece = text[start:end]
            chunks.append(Chunk(piece, len(chunks), heading, counter.count(piece), kind, start, end))
    return chunks


def chunk_turn(turn_text: str, counter: TokenCounter, config: ChunkingConfig) -> list[Chunk]:
    """One chunk per conversation turn, cut on size (no model call) only when it is over max_tokens."""
    stripped = turn_text.strip()
    if not stripped:
        return []
    tokens = counter.count(stripped)
    if tokens > config.max_tokens:
        return chunk_text(turn_text, counter, None, config)
    start = len(turn_text) - len(turn_text.lstrip())
    kinds = {block.kind for section in parse_sections(turn_text) for block in section.blocks}
    return [Chunk(stripped, 0, "", tokens, _kind_of(kinds), start, start + len(stripped))]


def _plan(text: str, section: Section, counter: TokenCounter, config: ChunkingConfig) -> _Plan:
    if counter.count(text[section.start : section.end]) <= config.target_tokens:
        return _Plan(section, ())
    units: list[_Unit] = []
    for block in section.blocks:
        if block.kind in ("code", "table"):
            spans = [(block.start, block.end)]
            if counter.count(block.text) > config.max_tokens:
                spans = cut_lines(text, block.start, block.end, counter, config.max_tokens)
            kind: ChunkKind = "code" if block.kind == "code" else "table"
        else:
            spans = []
            for start, end in sentence_spans(block.text):
                start, end = start + block.start, end + block.start
                if counter.count(text[start:end]) > config.max_tokens:
                    spans.extend(cut_tokens(text, start, end, counter, config.target_tokens))
                else:
                    spans.append((start, end))
            kind = "text"
        for index, (start, end) in enumerate(spans):
            # The separator before a new block ("\n\n", a list marker's newline) costs about one token.
            opens = index == 0 and bool(units)
            units.append(_Unit(start, end, kind, opens, counter.count(text[start:end]) + int(opens)))
    return _Plan(section, tuple(units))


def _pieces(
    text: str, plan: _Plan, similarities: list[float] | None, counter: TokenCounter, config: ChunkingConfig
) -> list[tuple[int, int, ChunkKind]]:
    """(start, end, kind) of each chunk of one section, checked against the exact token count."""
    if not plan.units:
        kinds = {block.kind for block in plan.section.blocks}
        return [(plan.section.start, plan.section.end, _kind_of(kinds))]
    units = plan.units
    counts = [min(u.tokens, config.max_tokens) for u in units]
    cuts = choose_boundaries(counts, similarities, config, [u.opens_block for u in units[1:]])
    pieces: list[tuple[int, int, ChunkKind]] = []
    for first, last in zip([0, *cuts], [*cuts, len(units)], strict=True):
        group = list(units[first:last])
        # Sizes were estimated from per-unit counts; re-pack in the rare case the exact count is higher.
        while group:
            taken = len(group)
            while taken > 1 and counter.count(text[group[0].start : group[taken - 1].end]) > config.max_tokens:
                taken -= 1
            pieces.append((group[0].start, group[taken - 1].end, _kind_of({u.kind for u in group[:taken]})))
            group = group[taken:]
    return pieces


def _kind_of(kinds: Collection[str]) -> ChunkKind:
    if "code" in kinds:
        return "code"
    if "table" in kinds:
        return "table"
    return "text"
