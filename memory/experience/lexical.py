"""The lexical side: an incremental SQLite FTS5 index of analysed chunk terms, ranked by BM25 over each namespace's
own statistics (its rows, their length, the rows holding each term), so no namespace's text moves another's scores."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from memory.database import Connection
from memory.experience.filters import filter_sql
from memory.experience.fuse import idf
from memory.experience.model import RetrieverHit, SearchFilters
from memory.schema import are_tokens, count_terms, index_tokens
from memory.text.analyze import terms as analyse

__all__ = [
    "MAX_QUERY_TERMS", "POSTINGS_SHARE", "Statistics", "affordable", "forget", "index", "index_terms",
    "namespace_token", "remove", "remove_namespace", "search", "statistics",
]

# A 20 000-character query would otherwise become a MATCH of thousands of terms; the first ones are kept.
MAX_QUERY_TERMS = 64
# bm25()'s constants: a namespace alone in the store ranks as FTS5's own bm25() ranked the whole index.
_K1, _B = 1.2, 0.75


@dataclass(frozen=True)
class Statistics:
    """One namespace's BM25 statistics for a query: its index rows, their total length in tokens, and how many of
    its rows hold each query term."""

    rows: int
    length: int
    frequencies: Mapping[str, int]


def namespace_token(namespace: str) -> str:
    """The single FTS token that marks a namespace's rows (any namespace string becomes one safe token)."""
    return "ns" + hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:20]


def index_terms(text: str) -> str:
    """What the index stores for a chunk: its analysed terms, space-separated (computed outside any lock)."""
    return " ".join(analyse(text))


def _token(term: str) -> str | None:
    """The one token the index makes of a query term; None for a term it would split (lexical search skips it)."""
    found = index_tokens(term)
    return found[0] if len(found) == 1 else None


def index(db: Connection, rows: Iterable[tuple[int, str, str]]) -> None:
    """Index (rowid, namespace, index_terms) rows; costs in proportion to the rows, not the index."""
    marked = [(rowid, namespace_token(namespace), terms) for rowid, namespace, terms in rows]
    _INDEXES[db.dialect.name].insert(db, marked)
    count_terms(db.executemany, marked, +1)


def remove(db: Connection, rowids: Sequence[int]) -> None:
    """Drop the index rows of these chunk rowids."""
    rows: list[tuple[int, str, str]] = []
    for start in range(0, len(rowids), 500):  # each backend keeps a row's terms in `chunks_fts`
        part = list(rowids[start:start + 500])
        rows += db.execute(
            f"SELECT rowid, ns, terms FROM chunks_fts WHERE rowid IN ({','.join('?' * len(part))})", part
        ).fetchall()
    _INDEXES[db.dialect.name].delete(db, rowids)
    count_terms(db.executemany, rows, -1)


def remove_namespace(db: Connection, namespace: str) -> None:
    """Drop the index rows of every chunk of a namespace (call before deleting the chunk rows)."""
    remove(db, [r[0] for r in db.execute("SELECT rowid FROM chunks WHERE namespace = ?", [namespace]).fetchall()])


def forget(db: Connection) -> None:
    """Rewrite the index so deleted rows leave no terms behind in its own structures (see each backend's)."""
    _INDEXES[db.dialect.name].forget(db)


def affordable(terms: Sequence[str], frequencies: Mapping[str, int], max_postings: int) -> tuple[str, ...]:
    """The query terms worth matching: rarest first while their rows sum to at most `max_postings`.

    Search scores every row that holds any matched term, so a term found in a large share of a big namespace
    costs time in proportion to its rows while adding little to BM25 (its IDF is low; bench/recall_speed.py).
    `frequencies` are the namespace's own (see `statistics`), so what another namespace holds never decides
    which terms are matched. The rarest term is always kept; terms the namespace does not hold cost nothing and
    are kept too. Order is the query's own.
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


def statistics(db: Connection, namespace: str, query_terms: Sequence[str]) -> Statistics:
    """The namespace's rows in the index, their total length, and how many of them hold each query term."""
    ns = namespace_token(namespace)
    looked_up = {term: _token(term) for term in query_terms}
    wanted = sorted({token for token in looked_up.values() if token is not None})
    # One statement (a round trip each on a database server): the namespace's row, its term NULL, then the terms'.
    sql, params = "SELECT NULL, rows, length FROM lexical_namespaces WHERE ns = ?", [ns]
    if wanted:
        marks = ",".join("?" * len(wanted))
        sql += f" UNION ALL SELECT term, rows, 0 FROM lexical_terms WHERE ns = ? AND term IN ({marks})"
        params += [ns, *wanted]
    size: tuple[int, int] | None = None
    found: dict[str, int] = {}
    for token, count, length in db.execute(sql, params).fetchall():
        if token is None:
            size = (count, length)
        else:
            found[token] = count
    counts = {term: 0 if token is None or size is None else int(found.get(token, 0))
              for term, token in looked_up.items()}
    rows, length = size or (0, 0)
    return Statistics(int(rows), int(length), MappingProxyType(counts))


def search(
    db: Connection,
    namespace: str,
    query_terms: Sequence[str],
    k: int,
    filters: SearchFilters | None = None,
    stats: Statistics | None = None,
) -> list[RetrieverHit]:
    """The namespace's k best chunks by BM25 over an OR of the query terms, on the namespace's own statistics.

    The score is bm25()'s formula (FTS5's IDF, k1 1.2, b 0.75, higher is better) with the number of rows, the
    average length and each term's rows taken from the namespace alone (`stats`, read here when not given), so
    another namespace's text changes neither a score nor a rank. Terms the namespace does not hold are not
    looked up at all.
    """
    stats = stats or statistics(db, namespace, query_terms)
    held = [(term, token) for term in query_terms[:MAX_QUERY_TERMS]
            if stats.frequencies.get(term, 0) > 0 and (token := _token(term)) is not None]
    if not held or k <= 0:
        return []
    weights = idf(stats.rows, stats.frequencies)
    rows = max(1, stats.rows)
    # bm25() counts the namespace token as one more token of every row; kept, so that rankings stay bm25()'s.
    slope = _K1 * _B * rows / (stats.length + rows)
    score = _Score(tuple((token, weights[term] * (_K1 + 1)) for term, token in held), _K1 * (1 - _B) + slope, slope)
    return _INDEXES[db.dialect.name].search(db, namespace_token(namespace), score, k, filters, stats.rows)


# Two plans give the same hits (the same scores to the bit: each term's part is rounded down to a multiple of
# 1/_QUANTUM before the parts are added, so the order of the sum cannot matter), at different costs. Reading a
# term's postings (fts5vocab 'instance') costs in proportion to its rows in the whole index, so it pays when the
# namespace holds much of the index; reading the rows the namespace's own MATCH finds costs in proportion to
# them, but several times more per row (the terms are counted in Python), so it pays for a namespace that holds
# little of a big index. POSTINGS_SHARE is where the two cost the same (bench/RESULTS.md, docs/experiments.md).
# Either way no other namespace's row is scored, and which plan runs changes no answer.
POSTINGS_SHARE = 0.03
_QUANTUM = 2.0 ** 40


@dataclass(frozen=True)
class _Score:
    """BM25 of one query in one namespace: each held term's token and IDF x (k1 + 1), and the length norm's
    parts (a term's part is weight * f / (f + base + slope * length))."""

    terms: tuple[tuple[str, float], ...]
    base: float
    slope: float


# One term's part of each score, read from its postings: (weight, base, slope, token, namespace token) bound.
_FTS5_PART = (
    f"SELECT i.doc AS doc, CAST(? * i.f / (i.f + ? + ? * l.length) * {_QUANTUM!r} AS INTEGER) AS part "
    "FROM (SELECT doc, count(*) AS f FROM chunks_instances WHERE term = ? AND col = 'terms' GROUP BY doc) i "
    "JOIN lexical_rows l ON l.rowid = i.doc WHERE l.ns = ?")
_F8 = "DOUBLE PRECISION"
# PostgreSQL's in one statement whatever the number of terms (so it is prepared once): the terms and their
# weights bound as arrays, each term's postings one index range of (ns, term), each part in float8 and truncated
# toward zero as SQLite's CAST, so each part is the same integer to the bit on both backends.
# Bound: base, slope, the tokens, their weights, the namespace token.
_POSTGRES_SCORED = (
    f"SELECT p.rowid AS doc, CAST(sum(CAST(trunc(w.weight * p.f / (p.f + CAST(? AS {_F8}) + CAST(? AS "
    f"{_F8}) * p.length) * CAST({_QUANTUM!r} AS {_F8})) AS BIGINT)) AS {_F8}) / {_QUANTUM!r} AS score "
    f"FROM unnest(CAST(? AS TEXT[]), CAST(? AS {_F8}[])) AS w(term, weight) "
    "JOIN lexical_postings p ON p.ns = ? AND p.term = w.term GROUP BY p.rowid")


def _from_postings(
    db: Connection, scored: str, params: Sequence[object], k: int, filters: SearchFilters | None
) -> list[RetrieverHit]:
    """The k best rows of a scoring statement (`scored`: doc, score; its `params`), joined to their chunks."""
    if filters is None or filters.empty:
        # Rank first and join only the k winners (joining every candidate first joins rows never returned).
        sql = (f"SELECT c.id, s.score FROM ({scored} ORDER BY score DESC, doc LIMIT ?) s "
               "JOIN chunks c ON c.rowid = s.doc ORDER BY s.score DESC, c.id")
        return _hits(db.execute(sql, [*params, k]).fetchall())
    where, extra = filter_sql(filters, db.dialect)
    sql = (f"SELECT c.id, s.score FROM ({scored}) s JOIN chunks c ON c.rowid = s.doc "
           "JOIN documents d ON d.namespace = c.namespace AND d.doc_id = c.doc_id "
           f"WHERE {where} ORDER BY s.score DESC, c.id LIMIT ?")
    return _hits(db.execute(sql, [*params, *extra, k]).fetchall())


def _from_rows(
    db: Connection, ns: str, score: _Score, k: int, filters: SearchFilters | None
) -> list[RetrieverHit]:
    # Every token is quoted, so no user text can be read as FTS5 syntax.
    ors = " OR ".join('"' + token.replace('"', '""') + '"' for token, _ in score.terms)
    params: list[object] = [f'ns : "{ns}" AND terms : ({ors})']
    unfiltered = filters is None or filters.empty
    if filters is None or filters.empty:
        sql = ("SELECT f.rowid, f.terms, l.length, NULL FROM chunks_fts f JOIN lexical_rows l ON l.rowid = f.rowid "
               "WHERE chunks_fts MATCH ?")
    else:
        where, extra = filter_sql(filters, db.dialect)
        sql = ("SELECT f.rowid, f.terms, l.length, c.id FROM chunks_fts f JOIN lexical_rows l ON l.rowid = f.rowid "
               "JOIN chunks c ON c.rowid = f.rowid JOIN documents d ON d.namespace = c.namespace "
               f"AND d.doc_id = c.doc_id WHERE chunks_fts MATCH ? AND {where}")
        params += extra
    wanted = [token for token, _ in score.terms]
    scored = []
    for rowid, text, length, chunk_id in db.execute(sql, params).fetchall():
        total = 0
        for f, (_, weight) in zip(_occurrences(text, wanted), score.terms, strict=True):
            if f:
                total += int(weight * f / (f + score.base + score.slope * length) * _QUANTUM)
        scored.append((total / _QUANTUM, rowid, chunk_id))
    if not unfiltered:
        return _hits(sorted(((i, s) for s, _, i in scored), key=lambda h: (-h[1], h[0]))[:k])
    best = sorted(scored, key=lambda s: (-s[0], s[1]))[:k]  # as _from_postings: the k best rows, then joined
    marks = ",".join("?" * len(best))
    ids = dict(db.execute(f"SELECT rowid, id FROM chunks WHERE rowid IN ({marks})", [r for _, r, _ in best]).fetchall())
    return _hits(sorted(((ids[r], s) for s, r, _ in best if r in ids), key=lambda h: (-h[1], h[0])))


def _occurrences(text: str, wanted: Sequence[str]) -> list[int]:
    """How often the index holds each wanted token in a row whose terms are `text` (the row's tokens, counted)."""
    padded = " " + text.replace(" ", "  ") + " "  # each term in its own spaces, so adjacent repeats all count
    found = [padded.count(f" {token} ") for token in wanted]
    if not are_tokens(text):  # a term the tokenizer changes counts under its token instead
        for term in text.split():
            if (folded := index_tokens(term)) != [term]:
                found = [n + folded.count(token) for n, token in zip(found, wanted, strict=True)]
    return found


def _hits(rows: Sequence[tuple[str, float]]) -> list[RetrieverHit]:
    return [RetrieverHit(chunk_id, rank, float(score)) for rank, (chunk_id, score) in enumerate(rows, 1)]


class _Fts5:
    """SQLite: FTS5's index (chunks_fts), read either way by cost (POSTINGS_SHARE)."""

    @staticmethod
    def insert(db: Connection, marked: Sequence[tuple[int, str, str]]) -> None:
        db.executemany("INSERT INTO chunks_fts (rowid, terms, ns) VALUES (?, ?, ?)",
                       [(rowid, terms, ns) for rowid, ns, terms in marked])

    @staticmethod
    def delete(db: Connection, rowids: Sequence[int]) -> None:
        db.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(r,) for r in rowids])

    @staticmethod
    def forget(db: Connection) -> None:
        """FTS5 deletes by writing delete markers: the terms of a deleted chunk stay in the chunks_fts_data
        segments until a merge happens to reach them. 'optimize' merges every segment, at a cost that grows with
        the index (bench/experience_scale.py times a delete); SQLite 3.44's 'secure-delete' option would make it
        unnecessary."""
        db.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")

    @staticmethod
    def search(db: Connection, ns: str, score: _Score, k: int, filters: SearchFilters | None,
               rows: int) -> list[RetrieverHit]:
        # The largest rowid is at least the number of index rows (a bound found without counting them).
        index_rows = db.execute("SELECT max(rowid) FROM lexical_rows").fetchone()[0] or 0
        if rows >= POSTINGS_SHARE * index_rows:
            params = [p for token, weight in score.terms for p in (weight, score.base, score.slope, token, ns)]
            scored = (f"SELECT doc, sum(part) / {_QUANTUM!r} AS score "
                      f"FROM ({' UNION ALL '.join([_FTS5_PART] * len(score.terms))}) GROUP BY doc")
            return _from_postings(db, scored, params, k, filters)
        return _from_rows(db, ns, score, k, filters)


class _Postings:
    """PostgreSQL: the postings table (lexical_postings), keyed by namespace first, so a term's postings in one
    namespace are one index range however large the others are: the postings plan is the only one needed."""

    @staticmethod
    def insert(db: Connection, marked: Sequence[tuple[int, str, str]]) -> None:
        db.executemany("INSERT INTO chunks_fts (rowid, ns, terms) VALUES (?, ?, ?)", marked)
        rows = []
        for rowid, ns, terms in marked:
            tokens = index_tokens(terms)
            rows += [(ns, token, rowid, f, len(tokens)) for token, f in Counter(tokens).items()]
        db.executemany("INSERT INTO lexical_postings (ns, term, rowid, f, length) VALUES (?, ?, ?, ?, ?)", rows)

    @staticmethod
    def delete(db: Connection, rowids: Sequence[int]) -> None:
        db.executemany("DELETE FROM lexical_postings WHERE rowid = ?", [(r,) for r in rowids])
        db.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(r,) for r in rowids])

    @staticmethod
    def forget(db: Connection) -> None:
        """Nothing of a deleted row is left to read; its space is reclaimed by the erase pass's VACUUM."""

    @staticmethod
    def search(db: Connection, ns: str, score: _Score, k: int, filters: SearchFilters | None,
               rows: int) -> list[RetrieverHit]:
        params = [score.base, score.slope, [token for token, _ in score.terms],
                  [weight for _, weight in score.terms], ns]
        return _from_postings(db, _POSTGRES_SCORED, params, k, filters)


# The lexical index of each backend (memory.database), by its dialect's name.
_INDEXES: Mapping[str, type[_Fts5] | type[_Postings]] = {"sqlite": _Fts5, "postgres": _Postings}
