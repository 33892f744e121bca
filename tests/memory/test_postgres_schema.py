"""PostgreSQL's schema: numbered as the SQLite file's, and a lexical search that reads a term's postings from the index alone (the table's rows are not read once a vacuum has passed)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.postgres_cluster import PostgresCluster
from memory.database.postgres import PostgresDatabase
from memory.database.postgres_schema import MIGRATIONS as POSTGRES
from memory.experience import lexical
from memory.schema import MIGRATIONS as SQLITE
from tests.conftest import fresh_database


def test_versions_are_numbered_as_the_sqlite_files() -> None:
    postgres = {version for version, _ in POSTGRES}
    sqlite = {version for version, _ in SQLITE if version >= min(postgres)}
    # A version on one backend only would let the other number a different step the same: a store already past
    # it would take that step as applied. A step one backend does not need is a no-op there.
    assert postgres == sqlite


def _postings_key(db: PostgresDatabase) -> str:
    row = db.connection().execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'lexical_postings_pkey'").fetchone()
    return str(row[0])


def test_a_version_12_store_gets_the_covering_key(postgres: PostgresCluster) -> None:
    url = fresh_database(postgres)
    old = PostgresDatabase(url)
    old.connection().script(
        "ALTER TABLE lexical_postings DROP CONSTRAINT lexical_postings_pkey, ADD PRIMARY KEY (ns, term, rowid); "
        "UPDATE meta SET value = '12' WHERE key = 'schema_version'")
    assert "INCLUDE" not in _postings_key(old)
    old.close()
    db = PostgresDatabase(url)
    db.migrate()
    assert _postings_key(db).endswith("(ns, term, rowid) INCLUDE (f, length)")
    assert db.connection().execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "13"
    db.close()


class _Explained:
    """A connection that runs each statement as it is and also keeps its plan as it ran (EXPLAIN ANALYZE)."""

    def __init__(self, db: PostgresDatabase) -> None:
        self._conn = db.connection()
        self.dialect = self._conn.dialect
        self.plans: list[Any] = []

    def execute(self, sql: str, params: Any = ()) -> Any:
        self.plans.append(self._conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params).fetchone()[0])
        return self._conn.execute(sql, params)


def _nodes(plan: Any) -> list[dict[str, Any]]:
    found = []
    stack = [plan[0]["Plan"]]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.get("Plans", ()))
    return found


@pytest.mark.parametrize("terms", [["river"], ["river", "walk", "dog"]])
def test_a_search_reads_postings_from_the_index_alone(postgres: PostgresCluster, terms: list[str]) -> None:
    db = PostgresDatabase(fresh_database(postgres))
    conn = db.connection()
    words = ["river", "walk", "dog", "sun", "water", "tomato"]
    rows = [(rowid, "ns", " ".join(words[(rowid + i) % len(words)] for i in range(rowid % 5 + 1)))
            for rowid in range(1, 401)]
    db.begin(conn)
    conn.executemany("INSERT INTO chunks (rowid, id, namespace, doc_id, doc_version, ordinal, text, text_hash, "
                     "tokens, created_at, updated_at) VALUES (?, ?, 'ns', 'd', 1, ?, ?, '', 1, '', '')",
                     [(rowid, f"c{rowid}", rowid, text) for rowid, _, text in rows])
    lexical.index(conn, rows)
    conn.execute("COMMIT")
    conn.execute("VACUUM ANALYZE lexical_postings")
    with conn.pinned():
        conn.execute("SET enable_seqscan = off")  # a few hundred rows: the planner would read them all otherwise
        explained = _Explained(db)
        hits = lexical.search(explained, "ns", terms, 10)  # type: ignore[arg-type]
        assert hits and hits == lexical.search(conn, "ns", terms, 10)
    postings = [n for n in _nodes(explained.plans[-1]) if n.get("Relation Name") == "lexical_postings"]
    assert postings and all(n["Node Type"] == "Index Only Scan" and n["Heap Fetches"] == 0 for n in postings)
    db.close()
