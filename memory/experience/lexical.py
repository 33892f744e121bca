"""The lexical side: an incremental SQLite FTS5 index of analysed chunk terms, ranked by bm25()."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence

import sqlite_utils

from memory.experience.filters import filter_sql
from memory.experience.model import RetrieverHit, SearchFilters
from memory.schema import count_terms
from memory.text.analyze import terms as analyse

__all__ = [
    "MAX_QUERY_TERMS", "OWN_INDEX_SHARE", "affordable", "forget", "frequencies", "index",
    "index_terms", "namespace_share", "namespace_token", "remove", "remove_namespace", "search",
]

# A 20 000-character query would otherwise become a MATCH of thousands of terms; the first ones are kept.
MAX_QUERY_TERMS = 64
# A namespace holding at least this share of the index's rows ranks without its namespace clause: in a store
# that is mostly one namespace the clause adds much to the MATCH's cost and filters out little
# (bench/experience_scale.py and bench/recall_speed.py time search at 100k chunks).
OWN_INDEX_SHARE = 0.5


def namespace_token(namespace: str) -> str:
    """The single FTS token that marks a namespace's rows (any namespace string becomes one safe token)."""
    return "ns" + hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:20]


def index_terms(text: str) -> str:
    """What the index stores for a chunk: its analysed terms, space-separated (computed outside any lock)."""
    return " ".join(analyse(text))


def index(db: sqlite_utils.Database, rows: Iterable[tuple[int, str, str]]) -> None:
    """Index (rowid, namespace, index_terms) rows; costs in proportion to the rows, not the index."""
    rows = list(rows)
    db.conn.executemany(
        "INSERT INTO chunks_fts (rowid, terms, ns) VALUES (?, ?, ?)",
        [(rowid, terms, namespace_token(namespace)) for rowid, namespace, terms in rows],
    )
    count_terms(db, (terms for _, _, terms in rows), +1)


def remove(db: sqlite_utils.Database, rowids: Sequence[int]) -> None:
    """Drop the index rows of these chunk rowids."""
    texts: list[str] = []
    for start in range(0, len(rowids), 500):
        part = list(rowids[start:start + 500])
        texts += [r[0] for r in db.execute(
            f"SELECT terms FROM chunks_fts WHERE rowid IN ({','.join('?' * len(part))})", part
        ).fetchall()]
    db.conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(r,) for r in rowids])
    count_terms(db, texts, -1)


def remove_namespace(db: sqlite_utils.Database, namespace: str) -> None:
    """Drop the index rows of every chunk of a namespace (call before deleting the chunk rows)."""
    remove(db, [r[0] for r in db.execute("SELECT rowid FROM chunks WHERE namespace = ?", [namespace]).fetchall()])


def forget(db: sqlite_utils.Database) -> None:
    """Rewrite the index so deleted rows leave no terms behind in its segments.

    FTS5 deletes by writing delete markers: the terms of a deleted chunk stay in the chunks_fts_data segments
    until a merge happens to reach them. 'optimize' merges every segment, at a cost that grows with the index
    (bench/experience_scale.py times a delete); SQLite 3.44's 'secure-delete' option would make it unnecessary.
    """
    db.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")


def _match(namespace: str | None, query_terms: Sequence[str]) -> str:
    # Every term is quoted, so no user text can be read as FTS5 syntax.
    ors = " OR ".join('"' + t.replace('"', '""') + '"' for t in query_terms[:MAX_QUERY_TERMS])
    if namespace is None:
        return f"terms : ({ors})"
    return f'ns : "{namespace_token(namespace)}" AND terms : ({ors})'


def affordable(terms: Sequence[str], frequencies: dict[str, int], max_postings: int) -> tuple[str, ...]:
    """The query terms worth matching: rarest first while their rows sum to at most `max_postings`.

    FTS5 scores every row that holds any matched term, so a term found in a large share of a big store costs
    time in proportion to its rows while adding little to BM25 (its IDF is low; bench/recall_speed.py). The
    rarest term is always kept; terms the index does not hold cost nothing and are kept too. Order is the
    query's own.
    """
    if max_postings <= 0:
        return tuple(terms)
    keep: set[str] = set()
    spent = 0
    for term in sorted(terms, key=lambda t: frequencies.get(t, 0)):
        df = frequencies.get(term, 0)
        if keep and spent + df > max_postings:
            break
        keep.add(term)
        spent += df
    return tuple(t for t in terms if t in keep)


def search(
    db: sqlite_utils.Database,
    namespace: str,
    query_terms: Sequence[str],
    k: int,
    filters: SearchFilters | None = None,
    share: float = 0.0,
) -> list[RetrieverHit]:
    """The k best chunks by BM25 over an OR of the query terms (score = -bm25(), higher is better).

    `share` is the namespace's share of the index's rows (see `namespace_share`): when the namespace holds most
    of the index, the ranking runs without the namespace clause and other namespaces' rows are dropped after it.
    """
    if not query_terms or k <= 0:
        return []
    if filters is None or filters.empty:
        if share >= OWN_INDEX_SHARE:
            found = _search_own_index(db, namespace, query_terms, k, share)
            if found is not None:
                return found
        # Rank inside FTS5 first and join only the k winners (joining every match first joins rows never returned).
        sql = (
            "SELECT c.id, f.score FROM (SELECT rowid, -bm25(chunks_fts, 1.0, 0.0) AS score FROM chunks_fts "
            "WHERE chunks_fts MATCH ? ORDER BY score DESC, rowid LIMIT ?) f "
            "JOIN chunks c ON c.rowid = f.rowid ORDER BY f.score DESC, c.id"
        )
        return _hits(db.execute(sql, [_match(namespace, query_terms), k]).fetchall())
    where, extra = filter_sql(filters)
    sql = (
        "SELECT c.id, -bm25(chunks_fts, 1.0, 0.0) AS score FROM chunks_fts "
        "JOIN chunks c ON c.rowid = chunks_fts.rowid "
        "JOIN documents d ON d.namespace = c.namespace AND d.doc_id = c.doc_id "
        f"WHERE chunks_fts MATCH ? AND {where} ORDER BY score DESC, c.id LIMIT ?"
    )
    return _hits(db.execute(sql, [_match(namespace, query_terms), *extra, k]).fetchall())


def _hits(rows: Sequence[tuple[str, float]]) -> list[RetrieverHit]:
    return [RetrieverHit(chunk_id, rank, float(score)) for rank, (chunk_id, score) in enumerate(rows, 1)]


def _search_own_index(
    db: sqlite_utils.Database, namespace: str, query_terms: Sequence[str], k: int, share: float
) -> list[RetrieverHit] | None:
    """The namespace's k best, ranked without the namespace clause; None when the fetch saw too few of its rows.

    Exact: BM25 scores do not depend on the clause (its column weighs 0), and the namespace's rows in the
    whole index's ranking come in their own ranking's order, so the first k of them are its top k. Skipping
    the clause saves intersecting the namespace token's postings (every row of the namespace) with the terms'.
    """
    limit = math.ceil(k / share) + k
    sql = (
        "SELECT c.id, f.score, c.namespace FROM (SELECT rowid, -bm25(chunks_fts, 1.0, 0.0) AS score "
        "FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY score DESC, rowid LIMIT ?) f "
        # LEFT: every fetched index row counts towards `limit`, so "fewer than limit" really means "all of them".
        "LEFT JOIN chunks c ON c.rowid = f.rowid ORDER BY f.score DESC, f.rowid"
    )
    rows = db.execute(sql, [_match(None, query_terms), limit]).fetchall()
    own = [(chunk_id, score) for chunk_id, score, where in rows if where == namespace][:k]
    if len(own) < k and len(rows) == limit:
        return None  # other namespaces crowded the fetch: the namespace's own ranking may hold more
    return _hits(sorted(own, key=lambda hit: (-hit[1], hit[0])))


def namespace_share(db: sqlite_utils.Database, namespace: str, total: int) -> float:
    """The namespace's share (0..1) of the `total` rows in the index."""
    row = db.execute("SELECT chunks FROM namespace_chunks WHERE namespace = ?", [namespace]).fetchone()
    return min(1.0, row[0] / total) if row and total > 0 else 0.0


def frequencies(db: sqlite_utils.Database, query_terms: Sequence[str]) -> tuple[int, dict[str, int]]:
    """Rows in the index, and how many rows hold each term (for IDF-weighted coverage)."""
    total = db.execute("SELECT count(*) FROM chunks_fts_docsize").fetchone()[0]  # no term scan needed
    if not query_terms:
        return total, {}
    marks = ",".join("?" * len(query_terms))
    rows = db.execute(f"SELECT term, rows FROM lexical_terms WHERE term IN ({marks})", list(query_terms)).fetchall()
    found = dict(rows)
    return total, {t: int(found.get(t, 0)) for t in query_terms}
