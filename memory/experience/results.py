"""Search results as snippets: the shown score, the why of it, and the cut where results reach a token count."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from memory.experience.catalog import ChunkRow
from memory.experience.model import RetrieverHit, indexed_text
from memory.experience.rerank import Ranked, coverage
from memory.snippet import Snippet

__all__ = ["by_retriever", "shown", "snippet", "why", "within"]


def within(tokens: Sequence[int], reach: int, item_tokens: int | None = None) -> int:
    """How many of the first results fit `reach`: their tokens, each counted up to `reach` (and up to
    `item_tokens`, the most the caller shows of one result), add up to at most it.

    Packing fills the budget best first and then tries smaller snippets below one that did not fit; results
    past a few budgets' worth of better ones rarely get in. A long result counts only what packing can show of it:
    counted whole, a few long replies would end the list while the budget still had room. At least one, when
    there is one.
    """
    most = reach if item_tokens is None else min(reach, item_tokens)
    spent = 0
    for index, size in enumerate(tokens):
        spent += min(size, most)
        if spent > reach and index > 0:
            return index
    return len(tokens)


def by_retriever(
    dense: Sequence[RetrieverHit], lexical: Sequence[RetrieverHit]
) -> dict[str, dict[str, RetrieverHit]]:
    """Each retriever's hits by chunk id, for `why`."""
    return {name: {h.chunk_id: h for h in found} for name, found in (("dense", dense), ("lexical", lexical))}


def shown(score: float) -> float:
    """A reranked score as a snippet shows it: tanh, in 0..1, to 4 places."""
    return round(math.tanh(max(0.0, score)), 4)


def why(
    ranked: Ranked, hits: Mapping[str, Mapping[str, RetrieverHit]], idf: Mapping[str, float]
) -> dict[str, object]:
    chunk_id = ranked.candidate.fused.chunk_id
    cover = coverage(ranked.candidate.terms, idf) if ranked.coverage is None else ranked.coverage
    why: dict[str, object] = {
        "fused": round(ranked.candidate.fused.score, 4), "coverage": round(cover, 4),
        "recency": round(ranked.recency, 4),
    }
    for name, by_id in hits.items():
        hit = by_id.get(chunk_id)
        if hit is not None:
            why[name] = {"rank": hit.rank, "score": round(hit.score, 4)}
    if ranked.duplicate_of:
        why["duplicate_of"] = ranked.duplicate_of
    if ranked.superseded_by:
        why["superseded_by"] = ranked.superseded_by
    return why


def snippet(row: ChunkRow, score: float, why: Mapping[str, object]) -> Snippet:
    """The snippet of a chunk; `score` is the reranked score, shown as tanh(score) in 0..1."""
    return Snippet(
        tier="experience", id=row.id, text=indexed_text(row.text, row.heading, row.speaker),
        score=shown(score), tokens=row.tokens, source=row.source or row.title or row.doc_id,
        updated_at=row.updated_at, doc_id=row.doc_id, metadata=MappingProxyType(json.loads(row.metadata)),
        why=MappingProxyType(dict(why)), body_tokens=row.line_tokens,
    )
