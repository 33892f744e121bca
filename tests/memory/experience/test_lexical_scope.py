"""A namespace that holds most of the index ranks without its namespace clause, with exactly the same results.

Rows go straight into the real SQLite chunks and FTS5 tables (no model needed: this is the lexical side alone).
"""

from __future__ import annotations

import random

from memory.experience import lexical
from memory.store import Store
from tests.memory.experience.conftest import index_rows

_WORDS = ["alpha", "beta", "gamma", "delta", "zeta", "theta", "kappa", "sigma", "饺子", "熊猫", "铁路", "龙井"]


def _share(store: Store, namespace: str) -> float:
    total, _ = lexical.frequencies(store.db, ())
    return lexical.namespace_share(store.db, namespace, total)


def _both(store: Store, namespace: str, terms: tuple[str, ...], k: int) -> tuple[list[object], list[object]]:
    scoped = lexical.search(store.db, namespace, terms, k)  # share 0: always the namespace clause
    fast = lexical.search(store.db, namespace, terms, k, share=_share(store, namespace))
    return fast, scoped


def test_the_big_namespace_gets_the_same_ranking_without_the_clause(store: Store, seed: int) -> None:
    rng = random.Random(seed)
    index_rows(store, "big", [" ".join(rng.choices(_WORDS, k=rng.randint(2, 9))) for _ in range(70)])
    index_rows(store, "small", [" ".join(rng.choices(_WORDS, k=rng.randint(2, 9))) for _ in range(30)])
    assert _share(store, "big") == 0.7 and _share(store, "small") == 0.3
    for _ in range(40):
        terms = tuple(dict.fromkeys(lexical.index_terms(" ".join(rng.sample(_WORDS, rng.randint(1, 3)))).split()))
        for k in (1, 5, 20, 200):
            fast, scoped = _both(store, "big", terms, k)
            assert fast == scoped, terms
            assert fast, terms


def test_a_crowded_fetch_falls_back_to_the_namespace_clause(store: Store) -> None:
    # "zeta" is in every row of the small namespace and only in two of the big one's, so the unscoped top rows
    # are all the small namespace's: the big namespace still gets its own two.
    index_rows(store, "big", ["alpha beta"] * 49 + ["zeta alpha beta gamma delta", "zeta alpha beta gamma"])
    index_rows(store, "small", ["zeta zeta"] * 49)
    assert _share(store, "big") > lexical.OWN_INDEX_SHARE
    fast, scoped = _both(store, "big", ("zeta",), 10)
    assert fast == scoped
    assert [hit.rank for hit in fast] == [1, 2]  # type: ignore[attr-defined]


def test_chunk_counts_follow_writes_and_deletes(store: Store) -> None:
    rowids = index_rows(store, "counted", ["alpha", "beta", "铁路 龙井"])
    index_rows(store, "other", ["gamma"])
    assert _share(store, "counted") == 0.75
    with store.transaction() as db:
        db.execute("DELETE FROM chunks WHERE rowid = ?", [rowids[0]])
        lexical.remove(db, [rowids[0]])
    assert _share(store, "counted") == 2 / 3
    with store.transaction() as db:
        db.execute("DELETE FROM chunks WHERE namespace = 'counted'")
        lexical.remove(db, rowids[1:])
    assert store.db.execute("SELECT namespace, chunks FROM namespace_chunks").fetchall() == [("other", 1)]
    assert _share(store, "counted") == 0.0
