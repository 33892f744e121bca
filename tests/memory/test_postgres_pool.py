"""PostgreSQL connections are borrowed per statement: threads that come and go (a server's request threads) never
keep one, a transaction keeps its own until it ends, and a session lock's statements share one connection."""

from __future__ import annotations

import threading

import pytest

from bench.postgres_cluster import PostgresCluster
from memory.database.postgres import PostgresDatabase
from memory.errors import StoreError
from tests.conftest import fresh_database


@pytest.fixture()
def small(postgres: PostgresCluster) -> PostgresDatabase:
    """A store's database on a pool of two connections that gives up after two seconds."""
    url = fresh_database(postgres)
    return PostgresDatabase(url, max_connections=2, timeout_s=2.0)


def _in_thread(work: object) -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()  # type: ignore[operator]
        except BaseException as exc:  # handed to the test's thread
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]


def test_threads_that_end_leave_their_connections_to_the_next(small: PostgresDatabase) -> None:
    seen: list[int] = []
    for n in range(10):  # five times the pool: each thread's connection went back when its statement ended
        _in_thread(lambda n=n: seen.append(small.connection().execute("SELECT ? + 1", [n]).fetchone()[0]))
    assert seen == list(range(1, 11))
    small.close()


def test_a_transaction_keeps_its_connection_and_the_pool_serves_the_rest(small: PostgresDatabase) -> None:
    conn = small.connection()
    small.begin(conn)
    conn.execute("INSERT INTO meta (key, value) VALUES ('pool-test', 'x')")
    # The other connection serves any number of statements of other threads meanwhile; they do not see the row.
    for _ in range(5):
        _in_thread(lambda: small.connection().execute("SELECT count(*) FROM meta WHERE key = 'pool-test'").fetchone())
    inside = conn.execute("SELECT count(*) FROM meta WHERE key = 'pool-test'").fetchone()[0]
    conn.execute("ROLLBACK")
    after = conn.execute("SELECT count(*) FROM meta WHERE key = 'pool-test'").fetchone()[0]
    assert (inside, after) == (1, 0)
    small.close()


def test_a_pool_with_every_connection_in_a_transaction_answers_a_store_error(small: PostgresDatabase) -> None:
    held: list[threading.Event] = []
    release = threading.Event()

    def hold() -> None:
        conn = small.connection()
        conn.execute("BEGIN")
        started = threading.Event()
        held.append(started)
        started.set()
        release.wait(30)
        conn.execute("ROLLBACK")

    threads = [threading.Thread(target=hold) for _ in range(2)]
    for thread in threads:
        thread.start()
    while len(held) < 2:
        threading.Event().wait(0.01)
    with pytest.raises(StoreError, match=r"no connection to PostgreSQL .* came free"):
        small.connection().execute("SELECT 1")
    release.set()
    for thread in threads:
        thread.join()
    assert small.connection().execute("SELECT 1").fetchone()[0] == 1
    small.close()


def test_migrating_again_takes_and_releases_its_session_lock_on_one_connection(small: PostgresDatabase) -> None:
    small.migrate()  # already migrated: the lock and its unlock still pair up
    other = PostgresDatabase(small.url, max_connections=1, timeout_s=2.0)
    waiter = threading.Thread(target=other.migrate, daemon=True)  # would wait on a lock left held
    waiter.start()
    waiter.join(20)
    assert not waiter.is_alive(), "the migrator lock was left held"
    other.close()
    small.close()
