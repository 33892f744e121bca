"""The index keeps rows per term itself (`lexical_terms`): after any mix of writes and deletes it says what FTS5's
own vocabulary says, and a term of deleted text is gone from it."""

from __future__ import annotations

import random

from memory.experience import lexical
from memory.store import Store
from tests.memory.experience.conftest import index_rows

_WORDS = ["alpha", "beta", "gamma", "delta", "zeta", "theta", "kappa", "sigma", "饺子", "熊猫", "铁路", "龙井"]


def _vocabulary(store: Store) -> dict[str, int]:
    """FTS5's count of rows per term, read by scanning its postings (what frequencies() used to do)."""
    rows = store.db.execute("SELECT term, doc FROM chunks_vocab WHERE term NOT LIKE 'ns%'").fetchall()
    return dict(rows)


def _kept(store: Store) -> dict[str, int]:
    return dict(store.db.execute("SELECT term, rows FROM lexical_terms").fetchall())


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
                db.conn.executemany("DELETE FROM chunks WHERE rowid = ?", [(r,) for r in gone])
            live[namespace] = [r for r in live[namespace] if r not in gone]
        else:
            with store.transaction() as db:
                lexical.remove_namespace(db, namespace)
                db.execute("DELETE FROM chunks WHERE namespace = ?", [namespace])
            live[namespace] = []
        assert _kept(store) == _vocabulary(store), step
        total, found = lexical.frequencies(store.db, ("alpha", "饺子", "missing"))
        assert total == len(live["a"]) + len(live["b"])
        assert found == {"alpha": _vocabulary(store).get("alpha", 0), "饺子": _vocabulary(store).get("饺子", 0),
                         "missing": 0}


def test_a_term_of_deleted_text_leaves_the_counts(store: Store) -> None:
    keep = index_rows(store, "a", ["alpha beta"])
    gone = index_rows(store, "a", ["alpha zorbquux 熊猫"])
    assert _kept(store) == {"alpha": 2, "beta": 1, "zorbquux": 1, "熊猫": 1}
    with store.transaction() as db:
        lexical.remove(db, gone)
        db.execute("DELETE FROM chunks WHERE rowid = ?", gone)
    assert _kept(store) == {"alpha": 1, "beta": 1}
    assert keep
