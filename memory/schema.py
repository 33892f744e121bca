"""The SQLite schema as numbered migrations (the store applies the ones a database has not seen yet), and the
lexical index's per-namespace statistics, counted by one function on every write and in the migration that
built them."""

from __future__ import annotations

import functools
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sqlite_utils

__all__ = ["JOB_LEASE_COLUMNS", "MIGRATIONS", "SCHEMA_VERSION", "are_tokens", "count_terms", "index_tokens"]

# chunks_fts's tokenizer (see _v1), run outside the store: FTS3's unicode61 folds exactly as FTS5's
# (tests/memory/experience/test_lexical_namespaces.py), so a term is counted and looked up as the token the index
# holds ("café" is indexed as "cafe").
_TOKENIZER = "CREATE VIRTUAL TABLE tokens USING fts3tokenize('unicode61', 'remove_diacritics=2')"
_tokenizer_lock = threading.Lock()
# A character the tokenizer may change: all but spaces, lower-case ASCII letters, digits and CJK ideographs.
_FOLDABLE = re.compile(r"[^ a-z0-9\u3400-\u4dbf\u4e00-\u9fff\U00020000-\U0002a6df]")


def are_tokens(terms: str) -> bool:
    """True when every space-separated term of `terms` is its own index token (the common case: nothing to fold)."""
    return _FOLDABLE.search(terms) is None


def index_tokens(terms: str) -> list[str]:
    """The tokens chunks_fts holds for a space-separated terms string, in order: its terms as its tokenizer
    folds them."""
    if are_tokens(terms):
        return terms.split()
    return [token for term in terms.split() for token in (_fold(term) if _FOLDABLE.search(term) else (term,))]


@functools.lru_cache(maxsize=100_000)
def _fold(term: str) -> tuple[str, ...]:
    with _tokenizer_lock:
        return tuple(row[0] for row in _tokenizer().execute("SELECT token FROM tokens WHERE input = ?", [term]))


@functools.cache
def _tokenizer() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    connection.execute(_TOKENIZER)
    return connection


def count_terms(executemany: Callable[[str, Iterable[Sequence[Any]]], Any], rows: Sequence[tuple[int, str, str]],
                sign: int) -> None:
    """Add (sign +1) or take away (-1) index rows (rowid, namespace token, terms) in the namespaces' statistics.

    FTS5's own totals are the whole index's, and it can say how many rows hold a term only by walking the term's
    postings across every namespace; search needs one namespace's on every call, so the index keeps them:
    `lexical_rows` (each row's namespace and length in tokens), `lexical_namespaces` (rows and total length) and
    `lexical_terms` (rows holding each token, per namespace). A count that reaches 0 is deleted: no term of
    deleted text stays behind.
    """
    lengths: list[tuple[int, str, int]] = []
    held: dict[str, Counter[str]] = {}
    sizes: dict[str, tuple[int, int]] = {}
    for rowid, ns, text in rows:
        found = index_tokens(text)
        lengths.append((rowid, ns, len(found)))
        held.setdefault(ns, Counter()).update(set(found))
        count, length = sizes.get(ns, (0, 0))
        sizes[ns] = (count + 1, length + len(found))
    if not lengths:
        return
    terms = [(ns, token, n) for ns, counts in held.items() for token, n in counts.items()]
    if sign > 0:
        executemany("INSERT INTO lexical_rows (rowid, ns, length) VALUES (?, ?, ?)", lengths)
        executemany(
            "INSERT INTO lexical_namespaces (ns, rows, length) VALUES (?, ?, ?) ON CONFLICT (ns) DO UPDATE "
            "SET rows = lexical_namespaces.rows + excluded.rows, "
            "length = lexical_namespaces.length + excluded.length",
            [(ns, count, length) for ns, (count, length) in sizes.items()],
        )
        executemany("INSERT INTO lexical_terms (ns, term, rows) VALUES (?, ?, ?) "
                         "ON CONFLICT (ns, term) DO UPDATE SET rows = lexical_terms.rows + excluded.rows", terms)
        return
    executemany("DELETE FROM lexical_rows WHERE rowid = ?", [(rowid,) for rowid, _, _ in lengths])
    executemany("UPDATE lexical_namespaces SET rows = rows - ?, length = length - ? WHERE ns = ?",
                     [(count, length, ns) for ns, (count, length) in sizes.items()])
    executemany("DELETE FROM lexical_namespaces WHERE ns = ? AND rows <= 0", [(ns,) for ns in sizes])
    executemany("UPDATE lexical_terms SET rows = rows - ? WHERE ns = ? AND term = ?",
                     [(n, ns, token) for ns, token, n in terms])
    executemany("DELETE FROM lexical_terms WHERE ns = ? AND term = ? AND rows <= 0",
                     [(ns, token) for ns, token, _ in terms])


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
    """Rows per term of the lexical index (`lexical_terms`), then store-wide; _lexical_namespaces replaces them
    with each namespace's own counts, so nothing is counted here any more."""
    db.execute("CREATE TABLE IF NOT EXISTS lexical_terms (term TEXT PRIMARY KEY, rows INTEGER NOT NULL) WITHOUT ROWID")


def _v4(db: sqlite_utils.Database) -> None:
    """Each conversation turn's own embedding per vector generation (`turn_vectors`), so that its searched vector
    can be re-mixed with its neighbours' without encoding anything again (memory.experience.turn_vectors).

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


def _turn_conversations(db: sqlite_utils.Database) -> None:
    """The conversation of each turn stored without a timestamp (`turn_conversations`), so that its neighbours
    come from that conversation in the order stored, not from every turn stamped at about the same time
    (memory.experience.conversations). A turn with no row lives on its namespace's timeline, as before. Every
    statement is IF NOT EXISTS, so the step may run again after a kill before its version was recorded."""
    db.executescript(
        """
        BEGIN;
        CREATE TABLE IF NOT EXISTS turn_conversations (
            namespace TEXT NOT NULL,
            doc_id TEXT NOT NULL,
            conversation TEXT NOT NULL,
            PRIMARY KEY (namespace, doc_id)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS turn_conversations_members ON turn_conversations (namespace, conversation);
        CREATE TRIGGER IF NOT EXISTS documents_turn_conversations AFTER DELETE ON documents BEGIN
            DELETE FROM turn_conversations WHERE namespace = old.namespace AND doc_id = old.doc_id;
        END;
        COMMIT;
        """
    )


def _lexical_namespaces(db: sqlite_utils.Database) -> None:
    """BM25 statistics per namespace, kept by count_terms on every write (`lexical_terms` was store-wide), counted
    here once from every index row; `chunks_instances` reads a term's postings. One transaction: a kill leaves
    version 5 as it was."""
    db.execute("BEGIN IMMEDIATE")
    try:
        for statement in (
            "DROP TABLE IF EXISTS lexical_terms",
            "CREATE TABLE lexical_terms (ns TEXT NOT NULL, term TEXT NOT NULL, rows INTEGER NOT NULL, "
            "PRIMARY KEY (ns, term)) WITHOUT ROWID",
            "DROP TABLE IF EXISTS lexical_rows",
            "CREATE TABLE lexical_rows (rowid INTEGER PRIMARY KEY, ns TEXT NOT NULL, length INTEGER NOT NULL)",
            "DROP TABLE IF EXISTS lexical_namespaces",
            "CREATE TABLE lexical_namespaces (ns TEXT PRIMARY KEY, rows INTEGER NOT NULL, length INTEGER NOT NULL) "
            "WITHOUT ROWID",
            "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_instances USING fts5vocab(chunks_fts, 'instance')",
        ):
            db.execute(statement)
        last = 0
        while rows := db.execute("SELECT rowid, ns, terms FROM chunks_fts WHERE rowid > ? ORDER BY rowid LIMIT 5000",
                                 [last]).fetchall():
            count_terms(db.conn.executemany, rows, +1)
            last = rows[-1][0]
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', '6')")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _ingest_jobs(db: sqlite_utils.Database) -> None:
    """The queue of ingest jobs (memory.jobs): a job's text is kept until it ends, so a kill loses none."""
    db.executescript(
        """
        BEGIN;
        CREATE TABLE IF NOT EXISTS jobs (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            state TEXT NOT NULL,
            payload TEXT,
            chars INTEGER NOT NULL,
            outcome TEXT,
            error TEXT,
            error_kind TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS jobs_namespace ON jobs (namespace, created_at);
        COMMIT;
        """
    )


def _task_summaries(db: sqlite_utils.Database) -> None:
    """The compaction summaries of each task, one row per version (memory.task.summaries): each compaction writes
    a new version, so what an older one kept or dropped can be traced. They go with their task."""
    db.executescript(
        """
        BEGIN;
        CREATE TABLE IF NOT EXISTS task_summaries (
            namespace TEXT NOT NULL,
            task_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            first INTEGER NOT NULL,  -- the message indexes covered, both included
            last INTEGER NOT NULL,
            digest TEXT NOT NULL,  -- the caller's hash of the covered messages
            text TEXT NOT NULL,
            tokens INTEGER NOT NULL,
            covered_tokens INTEGER NOT NULL,
            sections TEXT NOT NULL DEFAULT '{}',  -- {section name: [item, ...]}
            dropped TEXT NOT NULL DEFAULT '[]',  -- [{"text", "reason"}, ...]
            "references" TEXT NOT NULL DEFAULT '[]',  -- [task item key, ...]
            summariser TEXT NOT NULL,  -- 'extractive' or 'model:<name>'
            PRIMARY KEY (namespace, task_id, version)
        );
        COMMIT;
        """
    )


def _fact_confidence(db: sqlite_utils.Database) -> None:
    """How sure the extractor was of each fact: 1.0 for a rule's (every fact stored before this version), the
    detector's score for one the model-assisted path found (memory.facts.detector). Checked first, so the step
    may run again after a kill before its version was recorded."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(facts)").fetchall()}
    if "confidence" not in columns:
        db.execute("ALTER TABLE facts ADD COLUMN confidence REAL NOT NULL DEFAULT 1.0")


def _chunk_text_index(db: sqlite_utils.Database) -> None:
    """A new chunk reuses the vector of any chunk of its namespace with the same text (memory.experience.writer):
    found by this index rather than a scan of the namespace on every write."""
    db.execute("CREATE INDEX IF NOT EXISTS chunks_text ON chunks (namespace, text_hash)")


def _conversation_state(db: sqlite_utils.Database) -> None:
    """What /v1/context decided about a conversation, kept in the store so that a restart or another replica
    decides the same: the user messages of a task already read for facts (`facts_observed`), digests of deleted
    facts that re-reading a message must not bring back (`fact_tombstones`), how a conversation sent without
    task_id is followed (`context_threads`) and a task's last tool selection (`context_tools`).

    Digests only where a fact's text would otherwise stay: a deleted fact must leave no byte of its text on disk
    (tests/security/test_disk_trace.py). `keys` holds, per fact a message stated, the sha256 of its scope and key.

    The per-task rows, and the facts of scope `session:<task_id>`, go with their task by triggers on `tasks`: every
    path that removes a task row (end_task, expiry of one task or all, a namespace's delete, an expired task
    reopened by an add) then takes them along without each remembering to, and the task tier's code never
    writes the fact tier's table (the tiers are siblings; the schema, below both, is where they may meet).
    """
    db.executescript(
        """
        BEGIN;
        CREATE TABLE IF NOT EXISTS fact_tombstones (
            namespace TEXT NOT NULL,
            digest TEXT NOT NULL,  -- sha256 of the deleted version's key and folded text (memory.facts.tombstones)
            deleted_at TEXT NOT NULL,
            PRIMARY KEY (namespace, digest)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS facts_observed (
            namespace TEXT NOT NULL,
            task_id TEXT NOT NULL,
            message_digest TEXT NOT NULL,  -- sha256 of (task_id, index, text)
            idx INTEGER NOT NULL,
            keys TEXT NOT NULL DEFAULT '[]',  -- JSON list: sha256 of each stated fact's scope and key
            observed_at TEXT NOT NULL,
            PRIMARY KEY (namespace, task_id, message_digest)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS context_threads (
            namespace TEXT NOT NULL,
            task_id TEXT NOT NULL,
            seed TEXT NOT NULL,  -- the caller's digest of how the conversation starts
            length INTEGER NOT NULL,  -- messages in its newest request
            digest TEXT NOT NULL,  -- the caller's digest of those messages
            updated_at TEXT NOT NULL,
            PRIMARY KEY (namespace, task_id)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS context_threads_seed ON context_threads (namespace, seed, digest);
        CREATE TABLE IF NOT EXISTS context_tools (
            namespace TEXT NOT NULL,
            task_id TEXT NOT NULL,
            names TEXT NOT NULL DEFAULT '[]',  -- JSON list of tool names
            PRIMARY KEY (namespace, task_id)
        ) WITHOUT ROWID;
        CREATE TRIGGER IF NOT EXISTS tasks_conversation_state AFTER DELETE ON tasks BEGIN
            DELETE FROM facts_observed WHERE namespace = old.namespace AND task_id = old.task_id;
            DELETE FROM context_threads WHERE namespace = old.namespace AND task_id = old.task_id;
            DELETE FROM context_tools WHERE namespace = old.namespace AND task_id = old.task_id;
            DELETE FROM facts WHERE namespace = old.namespace AND scope = 'session:' || old.task_id;
        END;
        COMMIT;
        """
    )


def _job_leases(db: sqlite_utils.Database) -> None:
    """A running job's lease and progress in its row (memory.jobs): the process that runs it (`owner`), when it
    last reported (`heartbeat_at`: a job whose owner stopped reporting is taken over), its stage and progress, and a
    cancel asked of it (`cancel`), so any process sharing the store sees and stops it. Columns are checked first,
    so the step may run again after a kill before its version was recorded."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(jobs)").fetchall()}
    for name, kind in JOB_LEASE_COLUMNS:
        if name not in columns:
            db.execute(f"ALTER TABLE jobs ADD COLUMN {name} {kind}")


# The columns _job_leases adds, on both backends (memory.database.postgres_schema adds the same).
JOB_LEASE_COLUMNS = (("owner", "TEXT"), ("heartbeat_at", "TEXT"), ("stage", "TEXT"),
                      ("done", "INTEGER NOT NULL DEFAULT 0"), ("total", "INTEGER NOT NULL DEFAULT 0"),
                      ("cancel", "INTEGER NOT NULL DEFAULT 0"))


def _postings_cover(db: sqlite_utils.Database) -> None:
    """Nothing on the SQLite file: PostgreSQL's postings key takes each posting's count and row length at this
    version (memory.database.postgres_schema), and FTS5 keeps its own. Numbered here too, so that a version means
    the same step on both backends and the next one of either is 14."""


SCHEMA_VERSION = 13
MIGRATIONS: tuple[tuple[int, Callable[[sqlite_utils.Database], None]], ...] = (
    (1, _v1), (2, _v2), (3, _v3), (4, _v4),
    (5, _turn_conversations),
    (6, _lexical_namespaces),
    (7, _ingest_jobs),
    (8, _task_summaries),
    (9, _fact_confidence),
    (10, _chunk_text_index),
    (11, _conversation_state),
    (12, _job_leases),
    (13, _postings_cover),
)
