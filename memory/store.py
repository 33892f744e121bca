"""The storage root: one SQLite file (WAL, busy timeout, migrations) and one Chroma client, with an identity."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Any

from memory.bullet import BULLET_FORMAT
from memory.config import Config
from memory.database import Connection, Database, open_database, stored_meta
from memory.embedding import EmbedderIdentity
from memory.erase import Eraser, zero_fresh_memory, zeroing_available
from memory.errors import StoreError, StoreMismatchError
from memory.live_collection import LiveCollection, LiveCollections, SharedLock
from memory.once import Once
from memory.schema import SCHEMA_VERSION

__all__ = ["LiveCollection", "Store", "StoreIdentity", "collection_name", "open_store", "stored_identity"]

_SET_META = "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"


@dataclass(frozen=True)
class StoreIdentity:
    """What built the store; a store is read and written by one model and one tokenizer only."""

    embedding_backend: str
    embedding_model: str
    dimension: int
    tokenizer: str
    schema_version: int = SCHEMA_VERSION

    @property
    def embedder(self) -> EmbedderIdentity:
        """The model part of the identity, as an embedder reports it."""
        return EmbedderIdentity(self.embedding_backend, self.embedding_model, self.dimension)


def collection_name(namespace: str, tier: str = "exp", generation: int = 0) -> str:
    """Chroma collection for one namespace (namespaces are kept out of the hot `where` path this way).

    A re-embed writes generation n + 1 beside generation n and switches the store over in one SQLite commit.
    """
    digest = hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:24]
    return f"{tier}-{digest}" if generation == 0 else f"{tier}-{digest}-g{generation}"


def stored_identity(config: Config) -> StoreIdentity | None:
    """The identity recorded by the configured store; None when there is no store yet."""
    meta = stored_meta(config.store.url, config.data_path.resolve())
    if meta is None or "embedding_model" not in meta:
        return None
    return StoreIdentity(meta["embedding_backend"], meta["embedding_model"], int(meta["dimension"]),
                         meta["tokenizer"], int(meta.get("schema_version", SCHEMA_VERSION)))


class Store:
    """Records in a database (memory.database: the SQLite file by default), vectors in Chroma."""

    def __init__(self, config: Config, identity: StoreIdentity, database: Database | None = None, *,
                 alone: bool = False) -> None:
        self.config = config
        self.identity = identity
        self.root = config.data_path.resolve()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the data folder {self.root}: {exc}") from exc
        self.db_path = self.root / "memory.db"
        self.database: Database = database if database is not None else open_database(
            config.store.url, self.root, config.store.pool_size)
        self._local = threading.local()
        self.write_lock = threading.RLock()  # one writer at a time inside the process; readers go on
        # A collection dropped while another thread holds its handle must not break that thread (see LiveCollection).
        self._live = LiveCollections(self._chroma_collection, lambda name: self.chroma.delete_collection(name))
        try:
            # Held before anything is read: a re-embed (`alone`) is refused while another process has the store
            # open, and no process opens it while one runs.
            self.database.hold(exclusive=alone)
            with self.write_lock:
                self.database.migrate()
            db = self.db
            self._check_identity(db)
            self._check_bullet_format(db)
            row = db.execute("SELECT value FROM meta WHERE key = 'vector_generation'").fetchone()
        except BaseException:  # a store that cannot be opened keeps no connection (nor a pool's threads) behind
            self.database.close()
            raise
        self.generation = int(row[0]) if row else 0
        # Chroma opens on first use: a command that reads SQLite only (memory stats, facts, pin) never pays for
        # it, and a service opens it at start (Memory), so an unreachable server stops it there.
        self._chroma: Once[Any] = Once(self._open_chroma)
        # Deleted data is erased from every file soon after the delete (memory.erase); a pass owed is run now.
        self.eraser = Eraser(self, None if config.chroma.host else self.root / "chroma")
        self.eraser.opened()

    @property
    def db(self) -> Connection:
        """This thread's connection to the records."""
        return self.database.connection()

    @property
    def vector_lock(self) -> SharedLock:
        """Held shared by every call through a collection handle; exclusive by drops and erase passes."""
        return self._live.lock

    def transaction(self, *, commit: bool = True) -> _Transaction:
        """`with store.transaction() as db:` runs the block as one IMMEDIATE transaction under the write lock.

        With `commit` False it is rolled back at the end even when the block succeeds: a dry run. Inside another
        transaction of the same thread it is a SAVEPOINT of that one (committed only when the outer one is).
        """
        return _Transaction(self, commit)

    def _check_identity(self, db: Connection) -> None:
        wanted = {
            "embedding_backend": self.identity.embedding_backend,
            "embedding_model": self.identity.embedding_model,
            "dimension": str(self.identity.dimension),
            "tokenizer": self.identity.tokenizer,
        }
        with self.write_lock:
            stored = dict(db.execute("SELECT key, value FROM meta").fetchall())
            if "embedding_model" not in stored:
                db.executemany(_SET_META, list(wanted.items()))
                return
        differing = [f"{k} is {stored.get(k)!r} in the store but {v!r} in the configuration"
                     for k, v in wanted.items() if stored.get(k) != v]
        if differing:
            raise StoreMismatchError(
                f"the store in {self.database.where if self.config.store.url else self.root} was built with another "
                f"model or tokenizer: {'; '.join(differing)}. "
                "Mixing them would corrupt search; use the store's settings, another --data folder, "
                "or re-embed the store with `memory reembed --backend NAME [--model NAME]`"
            )

    def _check_bullet_format(self, db: Connection) -> None:
        """Stored bullet costs follow memory.bullet; under another BULLET_FORMAT they are cleared for repair."""
        with self.write_lock:
            row = db.execute("SELECT value FROM meta WHERE key = 'bullet_format'").fetchone()
            if row is not None and row[0] == str(BULLET_FORMAT):
                return
            with self.transaction() as tx:
                if row is not None:  # a store that recorded no format was written under the first one
                    tx.execute("UPDATE chunks SET line_tokens = NULL")
                tx.execute(_SET_META, ["bullet_format", str(BULLET_FORMAT)])

    @property
    def zeroes_fresh_memory(self) -> bool:
        """Whether malloc zeroes what it hands out while this store's embedded Chroma runs (chroma.zero_fresh_memory
        "on", Chroma embedded, and a C library that can: memory.erase)."""
        return self.config.chroma.zero_fresh_memory == "on" and not self.config.chroma.host and zeroing_available()

    @property
    def chroma(self) -> Any:
        """The Chroma client of the store's vectors, opened on first use."""
        return self._chroma.get()

    def _open_chroma(self) -> Any:
        import chromadb
        from chromadb.config import Settings

        settings = Settings(anonymized_telemetry=False, allow_reset=False)
        cfg = self.config.chroma
        try:
            if cfg.host:
                return chromadb.HttpClient(host=cfg.host, port=cfg.port, ssl=cfg.ssl, settings=settings,
                                           tenant=cfg.tenant, database=cfg.database)
            if self.zeroes_fresh_memory:  # before the index buffers are allocated: see memory.erase
                zero_fresh_memory()
            return chromadb.PersistentClient(path=str(self.root / "chroma"), settings=settings)
        except Exception as exc:  # chromadb raises bare ValueError/ConnectionError variants
            where = f"{cfg.host}:{cfg.port}" if cfg.host else str(self.root / "chroma")
            if cfg.host and type(exc).__name__ == "NotFoundError":  # the tenant or database is not on the server
                raise StoreError(
                    f"the Chroma server at {where} has no tenant {cfg.tenant!r} with a database {cfg.database!r} "
                    f"([chroma] tenant, database): create them on the server first ({exc})"
                ) from exc
            raise StoreError(f"cannot open Chroma at {where}: {exc}") from exc

    def collection(self, namespace: str, create: bool = True, generation: int | None = None) -> Any | None:
        """The vector collection of a namespace (cosine space, our own vectors only); None if absent."""
        name = collection_name(namespace, generation=self.generation if generation is None else generation)
        live = self._live.handle(name, namespace)
        return live if live.exists(create) else None

    def _chroma_collection(self, name: str, namespace: str, create: bool) -> Any | None:
        if not create:
            try:
                return self.chroma.get_collection(name, embedding_function=None)
            except Exception:  # chromadb raises NotFoundError or ValueError depending on version
                return None
        return self.chroma.get_or_create_collection(
            name,
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine", "ef_search": 200, "ef_construction": 200}},
            # No metadata: Chroma never learns a namespace's name. Its process has written stale heap bytes into
            # another collection's index file, so a name it held could outlive the namespace's delete
            # (tests/security/test_disk_trace.py); the collection name is a digest.
        )

    def drop_collection(self, namespace: str, generation: int | None = None) -> None:
        """Delete a namespace's vectors entirely (waiting for calls on its collection that are under way)."""
        self.drop_collection_named(collection_name(namespace,
                                                   generation=self.generation if generation is None else generation))

    def drop_collection_named(self, name: str) -> None:
        """Delete a collection by its name (one whose namespace nothing in SQLite names any more)."""
        self._live.drop(name)

    def erase_later(self, tx: Connection, *, vectors_of: str | None = None,
                    dropped: str | None = None) -> None:
        """Inside a delete's transaction: owe an erase pass (memory.erase) that clears what the delete left on disk.

        `vectors_of` names a namespace that lost vectors (its index is persisted so Chroma forgets their ids),
        `dropped` one whose collection goes (its folder and rows are purged).
        """
        flush = [] if vectors_of is None else [collection_name(vectors_of, generation=self.generation)]
        gone = [] if dropped is None else [collection_name(dropped, generation=self.generation)]
        self.eraser.note(tx, flush=flush, gone=gone, chroma=dropped is not None)

    def collection_names(self) -> list[str]:
        """The names of every Chroma collection of this store, of every generation."""
        with self.vector_lock.shared():  # an erase pass may be vacuuming Chroma's file (memory.erase)
            return sorted(str(getattr(c, "name", c)) for c in self.chroma.list_collections())

    def switch_identity(self, identity: StoreIdentity, generation: int) -> None:
        """Record another model and vector generation in one commit (the vectors must already be there)."""
        values = {
            "embedding_backend": identity.embedding_backend,
            "embedding_model": identity.embedding_model,
            "dimension": str(identity.dimension),
            "tokenizer": identity.tokenizer,
            "vector_generation": str(generation),
        }
        with self.transaction() as tx:
            tx.executemany(_SET_META, list(values.items()))
        self.identity = identity
        self.generation = generation

    def close(self) -> None:
        """Erase what deletes left (memory.erase; the WAL is truncated), then close every SQLite connection."""
        self.eraser.close()
        self.database.close()
        self._local = threading.local()


class _Transaction:
    """The database's write transaction (Database.begin) under the write lock; inside another transaction of the
    same thread, a SAVEPOINT.

    A caller can so wrap several tiers' writes (each opening its own transaction) in one outer transaction and
    roll them all back together; an inner one rolled back (an exception, or `commit` False) undoes its own
    writes only. The depth is per thread: another thread's transaction waits on the lock, it does not nest.
    """

    def __init__(self, store: Store, commit: bool) -> None:
        self._store = store
        self._commit = commit
        self._savepoint: str | None = None

    def __enter__(self) -> Connection:
        local = self._store._local
        self._store.write_lock.acquire()
        try:
            db = self._store.db
            depth = getattr(local, "depth", 0)
            if depth:
                self._savepoint = f"nested_{depth}"
                db.execute(f"SAVEPOINT {self._savepoint}")
            else:
                self._store.database.begin(db)
        except BaseException:
            self._store.write_lock.release()
            raise
        local.depth = depth + 1
        self._local = local
        self._db = db
        return db

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        keep = exc_type is None and self._commit
        try:
            if self._savepoint is None:
                self._db.execute("COMMIT" if keep else "ROLLBACK")
            else:
                if not keep:
                    self._db.execute(f"ROLLBACK TO {self._savepoint}")
                self._db.execute(f"RELEASE {self._savepoint}")  # a rolled-back savepoint stays open until released
        finally:
            self._local.depth -= 1
            self._store.write_lock.release()


def open_store(config: Config, embedder: EmbedderIdentity, database: Database | None = None) -> Store:
    """Open (creating if needed) the configured store, checking its identity; its records in `database` when
    given, else where [store] url says."""
    identity = StoreIdentity(embedder.backend, embedder.model, embedder.dimension, config.tokenizer.encoding)
    return Store(config, identity, database)
