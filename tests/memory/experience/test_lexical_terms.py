"""The index keeps each namespace's rows per term itself (`lexical_terms`): after any mix of writes and deletes it
says what the index's own postings say (FTS5's, or PostgreSQL's postings table), and a term of deleted text is
gone from it."""

from __future__ import annotations

import random

from memory.experience import lexical
from memory.store import Store
from tests.memory.experience.conftest import index_rows

_WORDS = ["alpha", "beta", "gamma", "delta", "zeta", "theta", "kappa", "sigma", "饺子", "熊猫", "铁路", "龙井"]


def _vocabulary(store: Store) -> dict[tuple[str, str], int]:
    """The index's own count of rows per namespace token and term, read by scanning its postings (FTS5's on
    SQLite, the postings table on PostgreSQL)."""
    sql = ("SELECT ns, term, count(*) FROM lexical_postings GROUP BY ns, term"
           if store.db.dialect.name == "postgres" else
           "SELECT f.ns, i.term, count(DISTINCT i.doc) FROM chunks_instances i JOIN chunks_fts f ON f.rowid = i.doc "
           "WHERE i.col = 'terms' GROUP BY f.ns, i.term")
    return {(ns, term): n for ns, term, n in store.db.execute(sql).fetchall()}


def _kept(store: Store) -> dict[tuple[str, str], int]:
    return {(ns, term): n for ns, term, n in store.db.execute("SELECT ns, term, rows FROM lexical_terms").fetchall()}


def test_term_counts_match_fts5_after_random_writes_and_deletes(store: Store, seed: int) -> None:
    rng = random.Random(seed)
    live: dict[str, list[int]] = {"a": [], "b": []}
    for step in range(60):
        namespace = rng.choice(["a", "b"])
        action = rng.random()
        if action < 0.6 or not live[namespace]:
            texts = [" ".join(rng.choices(_WORDS, k=rng.randint(1, 8))) for _ in range(rng.randint(1, 4))]
            live[namespace] += index_rows(store, namespace, texts)
        elif action < 0.95:
            gone = rng.sample(live[namespace], rng.randint(1, len(live[namespace])))
            with store.transaction() as db:
                lexical.remove(db, gone)
                db.executemany("DELETE FROM chunks WHERE rowid = ?", [(r,) for r in gone])
            live[namespace] = [r for r in live[namespace] if r not in gone]
        else:
            with store.transaction() as db:
                lexical.remove_namespace(db, namespace)
                db.execute("DELETE FROM chunks WHERE namespace = ?", [namespace])
            live[namespace] = []
        assert _kept(store) == _vocabulary(store), step
        for name in ("a", "b"):
            ns = lexical.namespace_token(name)
            stats = lexical.statistics(store.db, name, ("alpha", "饺子", "missing"))
            assert stats.rows == len(live[name])
            assert stats.frequencies == {"alpha": _vocabulary(store).get((ns, "alpha"), 0),
                                         "饺子": _vocabulary(store).get((ns, "饺子"), 0), "missing": 0}


def test_a_term_of_deleted_text_leaves_the_counts(store: Store) -> None:
    keep = index_rows(store, "a", ["alpha beta"])
    gone = index_rows(store, "a", ["alpha zorbquux 熊猫"])
    a = lexical.namespace_token("a")
    assert _kept(store) == {(a, "alpha"): 2, (a, "beta"): 1, (a, "zorbquux"): 1, (a, "熊猫"): 1}
    with store.transaction() as db:
        lexical.remove(db, gone)
        db.execute("DELETE FROM chunks WHERE rowid = ?", gone)
    assert _kept(store) == {(a, "alpha"): 1, (a, "beta"): 1}
    assert keep
