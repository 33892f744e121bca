"""A quick in-process recall of LongMemEval-S questions: each a long personal history (~50 sessions), asked at
1,000 tokens. The full rows, every budget and both halves, are bench/recall_quality.py's (bench/RESULTS.md)."""

from __future__ import annotations

import pytest

from bench._recall_data import LONGMEMEVAL_FILE
from bench._recall_service import library_service
from bench.recall_quality import SERVICE, longmemeval, parse_args

# A little under what the first 20 questions gave when the floor was set (bench/RESULTS.md, LongMemEval-S): a
# change to retrieval, encoding or what recall packs that loses evidence on long histories fails here.
SESSIONS_FLOOR = 0.95
TURNS_FLOOR = 0.87


@pytest.mark.skipif(not LONGMEMEVAL_FILE.exists(),
                    reason=f"the LongMemEval data is not here ({LONGMEMEVAL_FILE}): ../shared/benchdata is absent")
def test_long_histories_keep_their_evidence_at_1000_tokens() -> None:
    args = parse_args(["--library", "--skip-locomo", "--longmemeval-limit", "20", "--longmemeval-budgets", "1000"])
    with library_service() as service:
        sessions, turns = longmemeval(args, service, None, "floor")
    ours, bm25 = sessions.mean(SERVICE, 1000), sessions.mean("bm25", 1000)
    assert ours is not None and bm25 is not None
    assert ours >= SESSIONS_FLOOR, f"evidence sessions {ours:.3f} (BM25 {bm25:.3f})"
    assert (turns.mean(SERVICE, 1000) or 0.0) >= TURNS_FLOOR, f"has_answer turns {turns.mean(SERVICE, 1000):.3f}"
