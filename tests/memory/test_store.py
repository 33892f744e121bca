"""The storage root: WAL SQLite with migrations, embedded Chroma, and a recorded identity."""

from __future__ import annotations

import dataclasses
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from memory import TextInput
from memory.bullet import BULLET_FORMAT, body_cost
from memory.config import Config
from memory.embedding import MINILM, Embedder, EmbedderIdentity
from memory.errors import StoreMismatchError
from memory.experience import lexical
from memory.experience.model import indexed_text
from memory.schema import SCHEMA_VERSION
from memory.service import Memory
from memory.store import collection_name, open_store


def test_sqlite_is_wal_with_busy_timeout_and_migrated(config: Config) -> None:
    store = open_store(config, MINILM)
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000
    assert store.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    assert {"facts", "tasks", "task_items", "documents", "chunks"} <= set(store.db.sqlite.table_names())
    store.close()


def test_reopening_is_idempotent(config: Config) -> None:
    open_store(config, MINILM).close()
    store = open_store(config, MINILM)
    assert store.db.execute("SELECT count(*) FROM facts").fetchone()[0] == 0
    store.close()


@pytest.mark.parametrize(
    ("identity", "tokenizer", "named"),
    [
        (dataclasses.replace(MINILM, model="multilingual-e5-small"), "cl100k_base", "embedding_model"),
        (dataclasses.replace(MINILM, dimension=768), "cl100k_base", "dimension"),
        (MINILM, "o200k_base", "tokenizer"),
    ],
)
def test_a_different_model_or_tokenizer_is_refused(config: Config, identity: EmbedderIdentity, tokenizer: str,
                                                   named: str) -> None:
    open_store(config, MINILM).close()
    other = config.replace("tokenizer", encoding=tokenizer)
    with pytest.raises(StoreMismatchError, match=named):
        open_store(other, identity)


def test_a_newer_schema_is_refused(config: Config) -> None:
    store = open_store(config, MINILM)
    store.db.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    store.close()
    with pytest.raises(StoreMismatchError, match="newer"):
        open_store(config, MINILM)


def test_a_version_1_store_is_migrated_to_version_2(config: Config) -> None:
    store = open_store(config, MINILM)
    with store.transaction() as db:
        for namespace, n in (("a", 3), ("b", 1)):
            for i in range(n):
                db.execute(
                    "INSERT INTO chunks (id, namespace, doc_id, doc_version, ordinal, text, text_hash, tokens, "
                    "created_at, updated_at) VALUES (?, ?, 'd', 1, ?, 't', 'h', 1, 'x', 'x')",
                    [f"{namespace}{i}", namespace, i],
                )
    # Back to what version 1 had: no count table, no triggers, no line_tokens column.
    store.db.sqlite.executescript(
        "DROP TRIGGER chunks_counted; DROP TRIGGER chunks_uncounted; DROP TABLE namespace_chunks; "
        "ALTER TABLE chunks DROP COLUMN line_tokens; UPDATE meta SET value = '1' WHERE key = 'schema_version';"
    )
    store.close()
    store = open_store(config, MINILM)
    assert dict(store.db.execute("SELECT namespace, chunks FROM namespace_chunks").fetchall()) == {"a": 3, "b": 1}
    # Chunks written before have no stored bullet cost (recall counts them itself).
    assert store.db.execute("SELECT count(*) FROM chunks WHERE line_tokens IS NULL").fetchone()[0] == 4
    with store.transaction() as db:
        db.execute("DELETE FROM chunks WHERE namespace = 'b'")
    assert dict(store.db.execute("SELECT namespace, chunks FROM namespace_chunks").fetchall()) == {"a": 3}
    store.close()


def test_a_version_2_store_gets_its_term_counts(config: Config) -> None:
    store = open_store(config, MINILM)
    with store.transaction() as db:
        lexical.index(db, [(1, "a", "alpha beta alpha"), (2, "a", "alpha 饺子"), (3, "b", "beta")])
    store.db.sqlite.executescript("DROP TABLE lexical_terms; UPDATE meta SET value = '2' WHERE key = 'schema_version';")
    store.close()
    store = open_store(config, MINILM)
    a, b = lexical.namespace_token("a"), lexical.namespace_token("b")
    assert sorted(store.db.execute("SELECT ns, term, rows FROM lexical_terms").fetchall()) == sorted(
        [(a, "alpha", 2), (a, "beta", 1), (a, "饺子", 1), (b, "beta", 1)]
    )
    assert lexical.statistics(store.db, "a", ("alpha", "饺子", "gamma")).frequencies == {
        "alpha": 2, "饺子": 1, "gamma": 0
    }
    store.close()


@pytest.mark.parametrize("text", ["The loader retries a failed batch twice.", "加载器会把失败的批次重试两次。"],
                         ids=["en", "zh"])
def test_stored_bullet_costs_are_recounted_under_another_bullet_format(
    config: Config, embedder: Embedder, text: str
) -> None:
    with Memory(config, embedder=embedder) as memory:
        memory.add_document("ns", TextInput(text, title="Ops"))
        db = memory.store.db
        assert db.execute("SELECT value FROM meta WHERE key = 'bullet_format'").fetchone()[0] == str(BULLET_FORMAT)
        # A store written under another bullet format, whose stored costs no longer match the renderer.
        db.execute("UPDATE meta SET value = '0' WHERE key = 'bullet_format'")
        db.execute("UPDATE chunks SET line_tokens = 9999")
    with Memory(config, embedder=embedder) as memory:
        rows = memory.store.db.execute("SELECT text, heading, line_tokens FROM chunks").fetchall()
        assert rows and all(cost == body_cost(indexed_text(t, h), memory.counter) for t, h, cost in rows)
        assert memory.store.db.execute("SELECT value FROM meta WHERE key = 'bullet_format'").fetchone()[0] == str(BULLET_FORMAT)
        assert memory.recall("ns", text, 200).items[0].tokens < 9999


def test_collections_are_per_namespace_and_keep_our_vectors(config: Config) -> None:
    store = open_store(config, MINILM)
    assert collection_name("alice") != collection_name("bob")
    vectors = np.eye(384, dtype=np.float32)[:2]
    store.collection("alice").add(ids=["a1", "a2"], embeddings=vectors)
    assert store.collection("alice").count() == 2
    assert store.collection("bob", create=False) is None
    found = store.collection("alice").query(query_embeddings=vectors[:1], n_results=1)
    assert found["ids"] == [["a1"]]
    store.drop_collection("alice")
    assert store.collection("alice", create=False) is None
    store.close()


def test_memory_reports_health(memory: Memory) -> None:
    health = memory.health()
    assert health.model == MINILM.model
    assert health.store.endswith("memory.db")
    assert set(health.counts) >= {"facts", "documents", "chunks", "task_items"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_http_client_against_a_real_chroma_server(tmp_path: Path, config: Config, embedder: Embedder) -> None:
    port = _free_port()
    chroma = Path(sys.executable).with_name("chroma")
    server = subprocess.Popen(
        [str(chroma), "run", "--path", str(tmp_path / "server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        remote = config.replace("chroma", host="127.0.0.1", port=port)
        with Memory(remote, embedder=embedder) as memory:
            assert memory.health().chroma == f"http://127.0.0.1:{port}"
            collection = memory.store.collection("alice")
            collection.add(ids=["x"], embeddings=embedder.encode_documents(["remote vectors"]))
            assert memory.store.collection("alice").count() == 1
        assert not (Path(config.service.data_dir) / "chroma").exists()
    finally:
        server.terminate()
        server.wait(timeout=30)
