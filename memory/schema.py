"""The SQLite schema as numbered migrations; the store applies the ones a database has not seen yet."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

import sqlite_utils

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "count_terms"]


def count_terms(db: sqlite_utils.Database, texts: Iterable[str], sign: int) -> None:
    """Add (sign +1) or take away (-1) these index rows' terms in `lexical_terms`, the rows per term.

    FTS5 can say how many rows hold a term only by walking the term's postings (fts5vocab, a cost that grows with
    the store); search needs the counts on every call, so the index keeps them. A term whose count reaches 0 is
    deleted: no term of deleted text stays behind.
    """
    counts = Counter(term for text in texts for term in set(text.split()))
    if not counts:
        return
    if sign > 0:
        db.conn.executemany(
            "INSERT INTO lexical_terms (term, rows) VALUES (?, ?) "
            "ON CONFLICT (term) DO UPDATE SET rows = rows + excluded.rows",
            list(counts.items()),
        )
        return
    pairs = [(n, term) for term, n in counts.items()]
    db.conn.executemany("UPDATE lexical_terms SET rows = rows - ? WHERE term = ?", pairs)
    db.conn.executemany("DELETE FROM lexical_terms WHERE term = ? AND rows <= 0", [(t,) for _, t in pairs])


def _v1(db: sqlite_utils.Database) -> None:
    """Identity, facts, tasks, documents and chunks (with a jieba-segmented FTS5 lexical index)."""
    db.executescript(
        """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

        CREATE TABLE IF NOT EXISTS facts (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            scope TEXT NOT NULL DEFAULT 'global',
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            pinned INTEGER NOT NULL DEFAULT 0,
            version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            superseded_at TEXT,
            superseded_by TEXT,
            source TEXT,
            rule TEXT
        );
        CREATE INDEX IF NOT EXISTS facts_current ON facts (namespace, superseded_at, key);
        CREATE INDEX IF NOT EXISTS facts_key ON facts (namespace, scope, key, version);

        CREATE TABLE IF NOT EXISTS tasks (
            namespace TEXT NOT NULL,
            task_id TEXT NOT NULL,
            parent_task_id TEXT,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            next_seq INTEGER NOT NULL DEFAULT 1,
            PRIMARY KEY (namespace, task_id)
        );
        CREATE INDEX IF NOT EXISTS tasks_parent ON tasks (namespace, parent_task_id);
        CREATE INDEX IF NOT EXISTS tasks_expiry ON tasks (expires_at);
        CREATE TABLE IF NOT EXISTS task_items (
            namespace TEXT NOT NULL,
            task_id TEXT NOT NULL,
            key TEXT NOT NULL,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            ephemeral INTEGER NOT NULL DEFAULT 0,
            offloaded INTEGER NOT NULL DEFAULT 0,
            head TEXT,  -- offloaded items: what recall shows, `[offloaded key, n tokens] <head> …`
            head_tokens INTEGER,  -- its cl100k count: recall never re-encodes a large text
            created_at TEXT NOT NULL,
            expires_at TEXT,  -- NULL: the item lives as long as its task (whose expiry slides on every add)
            metadata TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (namespace, key)
        );
        CREATE INDEX IF NOT EXISTS task_items_task ON task_items (namespace, task_id);
        CREATE INDEX IF NOT EXISTS task_items_expiry ON task_items (expires_at);

        CREATE TABLE IF NOT EXISTS documents (
            namespace TEXT NOT NULL,
            doc_id TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'document',
            title TEXT,
            source TEXT,
            content_hash TEXT NOT NULL,
            version INTEGER NOT NULL DEFAULT 1,
            state TEXT NOT NULL DEFAULT 'ready',
            chunk_count INTEGER NOT NULL DEFAULT 0,
            tokens INTEGER NOT NULL DEFAULT 0,
            project TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            speaker TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (namespace, doc_id)
        );
        CREATE INDEX IF NOT EXISTS documents_project ON documents (namespace, project);
        -- Chunk rows hold text and per-chunk time only; filters (project, tags, source, kind) join documents,
        -- so a metadata-only change rewrites one row. rowid is shared with chunks_fts.
        CREATE TABLE IF NOT EXISTS chunks (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            namespace TEXT NOT NULL,
            doc_id TEXT NOT NULL,
            doc_version INTEGER NOT NULL,
            ordinal INTEGER NOT NULL,
            text TEXT NOT NULL,
            heading TEXT NOT NULL DEFAULT '',
            text_hash TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (namespace, doc_id, doc_version);
        CREATE INDEX IF NOT EXISTS chunks_updated ON chunks (namespace, updated_at);
        -- `terms` is the jieba-segmented, lower-cased, stemmed text; `ns` a single token naming the namespace,
        -- so a MATCH can be confined to one namespace inside the index.
        CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
            terms, ns, tokenize = 'unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vocab USING fts5vocab(chunks_fts, 'row');
        """
    )


def _v2(db: sqlite_utils.Database) -> None:
    """Chunks per namespace, kept by triggers, so a search knows in O(1) how much of the index is its own; and
    each chunk's bullet cost (`line_tokens`, NULL for chunks written before: recall counts those itself)."""
    db.executescript(
        """
        BEGIN;
        CREATE TABLE IF NOT EXISTS namespace_chunks (namespace TEXT PRIMARY KEY, chunks INTEGER NOT NULL);
        INSERT OR REPLACE INTO namespace_chunks (namespace, chunks)
            SELECT namespace, count(*) FROM chunks GROUP BY namespace;
        CREATE TRIGGER IF NOT EXISTS chunks_counted AFTER INSERT ON chunks BEGIN
            INSERT INTO namespace_chunks (namespace, chunks) VALUES (new.namespace, 1)
                ON CONFLICT (namespace) DO UPDATE SET chunks = chunks + 1;
        END;
        CREATE TRIGGER IF NOT EXISTS chunks_uncounted AFTER DELETE ON chunks BEGIN
            UPDATE namespace_chunks SET chunks = chunks - 1 WHERE namespace = old.namespace;
            DELETE FROM namespace_chunks WHERE namespace = old.namespace AND chunks <= 0;
        END;
        ALTER TABLE chunks ADD COLUMN line_tokens INTEGER;
        -- Recorded in the same transaction: ADD COLUMN cannot run twice.
        INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', '2');
        COMMIT;
        """
    )


def _v3(db: sqlite_utils.Database) -> None:
    """Rows per term of the lexical index (`lexical_terms`), kept by lexical.index / remove, counted here once."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute(
            "CREATE TABLE IF NOT EXISTS lexical_terms (term TEXT PRIMARY KEY, rows INTEGER NOT NULL) WITHOUT ROWID"
        )
        db.execute("DELETE FROM lexical_terms")
        count_terms(db, (row[0] for row in db.execute("SELECT terms FROM chunks_fts")), +1)
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', '3')")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _v4(db: sqlite_utils.Database) -> None:
    """Each conversation turn's own embedding per vector generation (`turn_vectors`), so that its searched vector
    can be re-mixed with its neighbours' without encoding anything again (memory.experience.context).

    `mix` records what the turn's Chroma vector was made of (NULL: its own embedding alone). The rows are filled
    by the writes that follow and, for turns stored before this version, by the repair when the store opens
    (their Chroma vectors are still their own embeddings). A chunk's rows go with it.
    """
    db.executescript(
        """
        BEGIN;
        CREATE TABLE IF NOT EXISTS turn_vectors (
            id TEXT NOT NULL,
            generation INTEGER NOT NULL,
            vector BLOB NOT NULL,
            mix TEXT,
            PRIMARY KEY (id, generation)
        ) WITHOUT ROWID;
        CREATE TRIGGER IF NOT EXISTS chunks_turn_vectors AFTER DELETE ON chunks BEGIN
            DELETE FROM turn_vectors WHERE id = old.id;
        END;
        INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', '4');
        COMMIT;
        """
    )


SCHEMA_VERSION = 4
MIGRATIONS: tuple[tuple[int, Callable[[sqlite_utils.Database], None]], ...] = (
    (1, _v1), (2, _v2), (3, _v3), (4, _v4)
)
