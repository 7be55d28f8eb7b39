"""What only the PostgreSQL store has to get right: recalling memories does not rewrite
their index entries; the memories' write lock, which orders every replica's writes, is
held for the rest of a transaction however its savepoints end; and a chat's turn is
queued without waiting for the log's flush, while every other write waits for it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from memories import open_memory

from memroute.config import Config
from memroute.errors import WouldBlock
from memroute.service.turn_queue import ChatTurn
from memroute.store import NewMemory
from memroute.store.postgres import PostgresStore
from memroute.store.postgres.db import PgDatabase
from memroute.store.postgres.memories import MEMORY_WRITE_LOCK

NOW = "2026-12-06T10:00:00.000Z"


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore.open(pg_url)
    yield opened
    opened.close()


def _pages(url: str) -> dict[str, int]:
    """The heap page each memory's current row is on."""
    with psycopg.connect(url, autocommit=True) as con:
        rows = con.execute("SELECT id, (ctid::text::point)[0]::int FROM memories").fetchall()
    return dict(rows)


def _lock_is_free(url: str) -> bool:
    """Whether another connection (another replica) could take the memories' write lock now."""
    with psycopg.connect(url, autocommit=True) as con:
        row = con.execute("SELECT pg_try_advisory_lock(%s, 1)", (MEMORY_WRITE_LOCK,)).fetchone()
        assert row is not None
        if row[0]:
            con.execute("SELECT pg_advisory_unlock(%s, 1)", (MEMORY_WRITE_LOCK,))
        return bool(row[0])


def test_most_access_bumps_leave_a_memory_on_its_page(store: PostgresStore, pg_url: str) -> None:
    """Every recall bumps the access counts of the memories it injects. A bumped row that
    stays on its page keeps its index entries; one that moves gets a new entry in each of
    the table's indexes, so the indexes grew at every recall. Here every memory is bumped
    at each of eight flushes, the worst case: at least half the bumps must stay."""
    ids = [
        store.memories.insert(
            NewMemory(api_key_id="k1", content=f"Fact number {n}: the user keeps {n} plants on the balcony"),
            now=NOW,
            actor="test",
        ).id
        for n in range(400)
    ]
    moved = 0
    for _ in range(8):
        before = _pages(pg_url)
        store.memories.record_access_counts(dict.fromkeys(ids, 1), now=NOW)
        moved += sum(page != before[i] for i, page in _pages(pg_url).items())
    assert moved <= 8 * len(ids) // 2
    assert {store.memories.get(i).access_count for i in ids[::50]} == {8}  # type: ignore[union-attr]


def test_the_write_lock_is_held_again_after_a_savepoint_that_took_it_rolled_back(
    store: PostgresStore, pg_url: str
) -> None:
    with store.transaction():
        with pytest.raises(RuntimeError), store.transaction():  # a savepoint
            store.memories.by_keys("k1", ["city"])  # a read that decides a write takes the lock
            assert not _lock_is_free(pg_url)
            raise RuntimeError("the nested write fails: its savepoint is rolled back")
        assert _lock_is_free(pg_url)  # rolled back with the savepoint
        store.memories.by_keys("k1", ["city"])
        assert not _lock_is_free(pg_url)  # taken again, until the transaction ends
        store.memories.by_keys("k1", ["city"])
    assert _lock_is_free(pg_url)


TURNS = 40


def _log_flushes(db: PgDatabase, url: str, write: Callable[[], object]) -> int:
    """How often the server flushed its write-ahead log to disk while `write` ran. Each
    backend counts its flushes and hands them to the server's statistics when it goes
    idle, forced here; the store's pool holds one connection in a test's single thread."""

    def flushes() -> int:
        db.fetchone("SELECT pg_stat_force_next_flush()")
        with psycopg.connect(url, autocommit=True) as con:
            row = con.execute("SELECT wal_sync FROM pg_stat_wal").fetchone()
        assert row is not None
        return int(row[0])

    before = flushes()
    write()
    return flushes() - before


def _queue(store: PostgresStore, *, durable: bool) -> None:
    for n in range(TURNS):
        store.jobs.enqueue("k1", "", "user_message", f"I moved to city number {n}", now=NOW, durable=durable)


def test_a_turn_is_queued_without_waiting_for_the_log_flush(store: PostgresStore, pg_url: str) -> None:
    """A chat waits while its turn is queued: that write does not wait for the disk (the
    server flushes it within a moment). A durable one waits, one flush each."""
    assert _log_flushes(store.db, pg_url, lambda: _queue(store, durable=True)) >= TURNS
    assert _log_flushes(store.db, pg_url, lambda: _queue(store, durable=False)) <= TURNS // 4
    assert store.jobs.counts(max_attempts=5) == (2 * TURNS, 0)


def test_no_brief_write_is_made_on_postgresql(store: PostgresStore) -> None:
    """Every write waits for the server: the gateway's event loop never makes one (a turn
    queued by a chat goes to a thread), and nothing is written."""
    with pytest.raises(WouldBlock), store.briefly():
        _queue(store, durable=False)
    assert store.jobs.counts(max_attempts=5) == (0, 0)


def test_full_synchronous_waits_for_the_flush_of_every_turn(pg_url: str) -> None:
    full = PostgresStore.open(pg_url, synchronous="full")
    try:
        assert _log_flushes(full.db, pg_url, lambda: _queue(full, durable=False)) >= TURNS
    finally:
        full.close()


def test_a_turn_queued_inside_a_transaction_leaves_it_durable(store: PostgresStore, pg_url: str) -> None:
    """The turn's relaxed commit is its own statement's: a transaction it joins (with a
    memory written through the API, say) still waits for the flush when it commits."""

    def write() -> None:
        for n in range(TURNS):
            with store.transaction():
                store.memories.insert(NewMemory(api_key_id="k1", content=f"Fact {n}"), now=NOW, actor="test")
                store.jobs.enqueue("k1", "", "user_message", f"Turn {n}", now=NOW, durable=False)

    assert _log_flushes(store.db, pg_url, write) >= TURNS


def test_chat_turns_are_queued_relaxed_and_extractions_asked_through_the_api_durably(
    tmp_path: Path, pg_url: str
) -> None:
    """The API acknowledges an extraction with its job id: that write waits for the disk.
    A chat's turn, which the chat waits for, does not."""
    config = Config.for_path(tmp_path / "m.db").with_overrides(database_url=pg_url)
    with open_memory(config=config) as mem:
        mem.update_settings(enabled=True)
        key, _ = mem.keys.create("app")
        db = mem._store.db
        assert isinstance(db, PgDatabase)

        def chats() -> None:
            for n in range(TURNS):
                mem.enqueue_turn(key.id, ChatTurn(f"I prefer green tea, cup number {n}."))

        def asked() -> None:
            for n in range(TURNS):
                assert mem.enqueue_extraction(key.id, f"I prefer black coffee, cup number {n}.") is not None

        assert _log_flushes(db, pg_url, chats) <= TURNS // 4
        assert mem.extraction_queue().pending == TURNS
        assert _log_flushes(db, pg_url, asked) >= TURNS
        assert mem.extraction_queue().pending == 2 * TURNS
