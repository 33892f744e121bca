"""BM25 statistics are each namespace's own: another namespace's text moves no score or rank, and tells nothing.

The lexical-only tests write rows straight into the real SQLite chunk and FTS5 tables; the end-to-end ones go through
experience memory with the real MiniLM, in English and in Chinese.
"""

from __future__ import annotations

import random

import pytest

from memory.config import Config
from memory.embedding import MINILM, Embedder
from memory.experience import ExperienceMemory, SearchFilters, lexical
from memory.experience.model import SearchExplanation
from memory.schema import SCHEMA_VERSION, index_tokens
from memory.store import Store, open_store
from memory.tokens import get_counter
from tests.conftest import ManualClock, sqlite_only
from tests.memory.experience.conftest import add, index_rows

_WORDS = ["alpha", "beta", "gamma", "delta", "zeta", "theta", "café", "cafe", "naïve", "β", "饺子", "熊猫", "铁路", "龙井"]


def _share(store: Store, namespace: str) -> float:
    rows = lexical.statistics(store.db, namespace, ()).rows
    return rows / int(store.db.execute("SELECT max(rowid) FROM lexical_rows").fetchone()[0])


def _random_texts(rng: random.Random, n: int) -> list[str]:
    return [" ".join(rng.choices(_WORDS, k=rng.randint(1, 9))) for _ in range(n)]


def _random_query(rng: random.Random) -> tuple[str, ...]:
    return tuple(dict.fromkeys(lexical.index_terms(" ".join(rng.sample(_WORDS, rng.randint(1, 4)))).split()))


@pytest.mark.parametrize("text", [
    "Café au lait, naïve Zoë and the Ελληνικά ёлка near İstanbul",
    "β-catenin and TNF-α signalling at 37 °C in ｋ cells",
    "北方人过年习惯包饺子，饺子馅通常用猪肉和白菜",
], ids=["latin", "greek-letters", "zh"])
def test_rows_are_counted_by_the_tokens_the_index_holds(store: Store, text: str) -> None:
    [rowid] = index_rows(store, "a", [text])
    if store.db.dialect.name == "postgres":  # its postings are the tokens, counted
        postings = store.db.execute("SELECT term, f FROM lexical_postings WHERE rowid = ?", [rowid]).fetchall()
        held = [term for term, f in sorted(postings) for _ in range(f)]
        assert sorted(index_tokens(lexical.index_terms(text))) == held
    else:  # FTS5's own tokenizer, in order
        held = [term for (term,) in store.db.execute(
            "SELECT term FROM chunks_instances WHERE doc = ? AND col = 'terms' ORDER BY offset", [rowid])]
        assert index_tokens(lexical.index_terms(text)) == held
    counted = dict(store.db.execute("SELECT term, rows FROM lexical_terms WHERE ns = ?",
                                    [lexical.namespace_token("a")]).fetchall())
    assert counted == dict.fromkeys(set(held), 1)


def test_the_tokenizer_outside_the_store_folds_every_letter_as_the_index_does(store: Store, backend: str) -> None:
    sqlite_only(backend, "FTS5's tokenizer")
    letters = [chr(c) for c in (*range(0xA0, 0x3000), *range(0xF900, 0xFB00), *range(0xFF00, 0xFFF0))
               if chr(c).isalnum()]
    terms = " ".join(f"x{c.lower()}x" for c in letters)
    with store.transaction() as db:
        lexical.index(db, [(1, "a", terms)])
    held = store.db.execute("SELECT term FROM chunks_instances WHERE doc = 1 AND col = 'terms' ORDER BY offset")
    assert index_tokens(terms) == [term for (term,) in held.fetchall()]
    assert len(letters) > 5000


def test_a_namespace_alone_ranks_as_fts5_bm25_ranked_it(store: Store, config: Config, seed: int) -> None:
    # The same rows alone in another store, ranked by FTS5's own bm25(): every score agrees.
    rng = random.Random(seed)
    texts = _random_texts(rng, 60)
    index_rows(store, "a", texts)
    index_rows(store, "b", _random_texts(rng, 200))
    alone = open_store(config.replace("service", data_dir=str(store.root) + "-alone"), MINILM)
    try:
        index_rows(alone, "a", texts)
        text_of = dict(store.db.execute("SELECT id, text FROM chunks WHERE namespace = 'a'").fetchall())
        ns = lexical.namespace_token("a")
        for _ in range(40):
            terms = _random_query(rng)
            ours = {text_of[h.chunk_id]: h.score for h in lexical.search(store.db, "a", terms, 1000)}
            ors = " OR ".join(f'"{t}"' for t in terms)
            theirs = dict(alone.db.execute(
                "SELECT c.text, -bm25(chunks_fts, 1.0, 0.0) FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
                "WHERE chunks_fts MATCH ?", [f'ns : "{ns}" AND terms : ({ors})']
            ).fetchall())
            assert ours.keys() == theirs.keys(), terms
            # Each term's part is rounded down to a multiple of 2**-40, hence the absolute tolerance.
            assert all(ours[t] == pytest.approx(theirs[t], rel=1e-9, abs=1e-11) for t in ours), terms
    finally:
        alone.close()


def test_another_namespace_changes_no_lexical_score_or_rank(store: Store, seed: int) -> None:
    # `a` holds all of the index, then under 1% of it: search reads its rows another way (lexical.POSTINGS_SHARE),
    # and every hit, rank and score stays the same to the bit, with and without filters.
    rng = random.Random(seed)
    index_rows(store, "a", _random_texts(rng, 12))
    queries = [_random_query(rng) for _ in range(40)]
    before = [(lexical.statistics(store.db, "a", q), lexical.search(store.db, "a", q, k)) for q in queries
              for k in (1, 3, 50)]
    assert _share(store, "a") >= lexical.POSTINGS_SHARE
    index_rows(store, "b", [" ".join(rng.choices(_WORDS, k=40)) for _ in range(1500)])  # every word, many times
    assert _share(store, "a") < lexical.POSTINGS_SHARE
    after = [(lexical.statistics(store.db, "a", q), lexical.search(store.db, "a", q, k)) for q in queries
             for k in (1, 3, 50)]
    assert after == before
    assert any(hits for _, hits in after)


@pytest.mark.parametrize(
    ("docs", "query", "word"),
    [
        ({"loader": "The CSV loader streams rows in batches and retries a failed batch twice.",
          "deploy": "Deployments run on Fridays after the staging smoke tests pass.",
          "garden": "Tomatoes need six hours of sun and deep watering twice a week."},
         "how often does the loader retry a batch", "batch"),
        ({"dumpling": "北方人过年习惯包饺子，饺子馅通常用猪肉和白菜。",
          "railway": "京沪高速铁路全长一千三百多公里，最高时速三百五十公里。",
          "tea": "龙井茶产于杭州西湖一带，是中国著名的绿茶。"},
         "过年吃什么馅的饺子", "饺子"),
    ],
    ids=["en", "zh"],
)
def test_a_tenant_cannot_see_another_post_its_query_word(
    store: Store, embedder: Embedder, config: Config, clock: ManualClock, docs: dict[str, str], query: str,
    word: str,
) -> None:
    experience = ExperienceMemory(store, embedder, get_counter(), config, clock)
    for doc_id, text in docs.items():
        add(experience, "alice", doc_id, text)

    def seen() -> tuple[SearchExplanation, SearchExplanation]:
        return (experience.explain("alice", query, k=3),
                experience.explain("alice", query, k=3, filters=SearchFilters(kind="document")))

    before = seen()
    assert before[0].lexical and before[0].lexical[0].score > 0.5  # the word scores for alice before bob posts it
    assert _share(store, "alice") >= lexical.POSTINGS_SHARE
    for n in range(60):  # bob posts the word over and over: store-wide it would now be in most rows
        add(experience, "bob", f"spam{n}", " ".join([word] * 30), f"{word} {word} {word} 又一次 again")
    assert _share(store, "alice") < lexical.POSTINGS_SHARE  # alice's rows are now read the other way
    assert seen() == before
    add(experience, "bob", "other", "nothing about the query at all")
    assert seen() == before


def test_a_store_of_the_previous_schema_gets_the_same_counts(config: Config, seed: int) -> None:
    rng = random.Random(seed)
    texts = {"a": _random_texts(rng, 30), "b": _random_texts(rng, 50)}
    store = open_store(config, MINILM)
    for namespace, rows in texts.items():
        index_rows(store, namespace, rows)
    queries = [_random_query(rng) for _ in range(20)]
    kept = {table: sorted(store.db.execute(f"SELECT * FROM {table}").fetchall())
            for table in ("lexical_terms", "lexical_rows", "lexical_namespaces")}
    searched = [lexical.search(store.db, ns, q, 10) for ns in texts for q in queries]
    # Back to what version 5 had: store-wide counts per term, no per-namespace tables, no postings reader.
    store.db.sqlite.executescript(
        "DROP TABLE lexical_terms; DROP TABLE lexical_rows; DROP TABLE lexical_namespaces; DROP TABLE chunks_instances;"
        "CREATE TABLE lexical_terms (term TEXT PRIMARY KEY, rows INTEGER NOT NULL) WITHOUT ROWID;"
        "INSERT INTO lexical_terms SELECT term, doc FROM chunks_vocab WHERE term NOT LIKE 'ns%';"
        "UPDATE meta SET value = '5' WHERE key = 'schema_version';"
    )
    store.close()
    store = open_store(config, MINILM)
    try:
        assert store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
        for table, rows in kept.items():
            assert sorted(store.db.execute(f"SELECT * FROM {table}").fetchall()) == rows, table
        assert [lexical.search(store.db, ns, q, 10) for ns in texts for q in queries] == searched
    finally:
        store.close()
