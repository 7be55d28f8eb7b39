"""What only the PostgreSQL store has to get right: recalling memories does not rewrite
their index entries, and the memories' write lock, which orders every replica's
writes, is held for the rest of a transaction however its savepoints end."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from memroute.store import NewMemory
from memroute.store.postgres import PostgresStore
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
