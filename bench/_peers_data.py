"""What bench.peers_txtai gives both systems: the speed stores' chunk texts, query sets, LoCoMo with evidence."""

from __future__ import annotations

import random
from collections.abc import Sequence

from bench._recall_data import Conversation, load_locomo
from bench.experience_scale import random_chunk

__all__ = ["locomo_with_evidence", "query_sets", "speed_chunks"]


def speed_chunks(size: int, pool: Sequence[str]) -> list[str]:
    """The chunk texts `fill(writer, ..., size, random.Random(size), pool)` writes, in the order it writes them.

    Replaying fill's draws (two chunks per document, size // 2 documents) gives the peer the very texts the
    service stores, without reading them back from the service's SQLite file.
    """
    rng = random.Random(size)
    return [random_chunk(rng, pool) for _ in range(size // 2 * 2)]


def query_sets(pool: Sequence[str], count: int, per_set: int, seed: int = 7) -> list[list[str]]:
    """`count` disjoint sets of `per_set` queries (a pool sentence's first eight words), as bench.recall_speed draws.

    Disjoint, so that no phase's query is answered from the embedder's query cache by an earlier phase's call.
    """
    rng = random.Random(seed)
    needed = count * per_set
    texts = list(dict.fromkeys(" ".join(s.split()[:8]) for s in rng.sample(pool, needed * 2)))[:needed]
    if len(texts) < needed:
        raise ValueError(f"the sentence pool gave {len(texts)} distinct queries, {needed} are needed; "
                         "ask for fewer --queries or --sizes")
    return [texts[i * per_set:(i + 1) * per_set] for i in range(count)]


def locomo_with_evidence(limit: int | None) -> tuple[list[Conversation], int]:
    """The first `limit` LoCoMo conversations keeping only questions with resolvable evidence, and how many went.

    The same questions bench.recall_quality scores (categories 1-4, evidence ids that name a turn).
    """
    kept, skipped = [], 0
    for conv in load_locomo(limit):
        questions = tuple(q for q in conv.questions if q.evidence)
        skipped += len(conv.questions) - len(questions)
        kept.append(Conversation(conv.name, conv.turns, questions, conv.dropped_evidence))
    return kept, skipped
