"""The SQLite store (SPEC §1, §2, §15): schema and migrations, FTS5 sync, WAL,
atomic writes, concurrency and crash durability. Every test runs against a real
database file under tmp_path; nothing in memroute is patched."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest
from clocks import ManualClock
from held import held_on_another_thread
from memories import open_memory
from storage import database

from memroute import Memory, StoreError
from memroute.clock import to_iso, utc_now
from memroute.errors import WouldBlock
from memroute.models.wire import to_wire
from memroute.store import SqliteStore
from memroute.store.db import WAL_SIZE_LIMIT_BYTES
from memroute.store.migrate import available_migrations, migrate
from memroute.store.records import NewMemory

ISO_MS_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")

SPEC_TABLES = {
    "memories",
    "memory_fts",
    "memory_history",
    "settings",
    "memory_vec_meta",
    "api_keys",
    "providers",
    "extraction_jobs",
    "schema_migrations",
}


# -- helpers -------------------------------------------------------------------------


def _raw(db_path: Path) -> apsw.Connection:
    con = apsw.Connection(str(db_path))
    con.set_busy_timeout(10_000)
    return con


def _query(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    con = _raw(db_path)
    try:
        return [tuple(row) for row in con.execute(sql, params)]
    finally:
        con.close()


def _scalar(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> Any:
    return _query(db_path, sql, params)[0][0]


def _counts(db_path: Path) -> tuple[int, int, int]:
    """(memories rows, FTS documents, history rows)."""
    return (
        _scalar(db_path, "SELECT COUNT(*) FROM memories"),
        _scalar(db_path, "SELECT COUNT(*) FROM memory_fts_docsize"),
        _scalar(db_path, "SELECT COUNT(*) FROM memory_history"),
    )


def _fts_consistent(db_path: Path) -> None:
    """FTS5's own check that the index matches the `memories` content exactly."""
    con = _raw(db_path)
    try:
        con.execute("INSERT INTO memory_fts (memory_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        con.close()


def _columns(db_path: Path, table: str) -> set[str]:
    return {row[1] for row in _query(db_path, f"PRAGMA table_info({table})")}


@pytest.fixture
def mem(db_path: Path, clock: ManualClock) -> Iterator[Memory]:
    """A memory with the bundled model off: what keyword search finds is checked here (the
    vectors' side of adding, editing and deleting is checked in test_semantic.py)."""
    with open_memory(db_path, clock=clock, workers=True, model=False) as memory:
        yield memory


def _fts_ids(mem: Memory, owner: str, query: str) -> set[str]:
    """Ids a keyword (FTS5) search finds; the newest-memories fallback is not a match."""
    items = mem.retrieve(owner, query=query, strategy="semantic")
    return {item.memory.id for item in items if item.tier == "fts5"}


def _all_retrieved(mem: Memory, owner: str, query: str) -> set[str]:
    return {item.memory.id for item in mem.retrieve(owner, query=query, strategy="semantic")}


# -- schema and migrations ---------------------------------------------------------------


def test_fresh_open_creates_every_spec_table(mem: Memory, db_path: Path) -> None:
    names = {row[0] for row in _query(db_path, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert names >= SPEC_TABLES

    assert _columns(db_path, "memories") >= {
        "rowid", "id", "api_key_id", "session_id", "type", "key", "content", "metadata",
        "created_at", "updated_at", "expires_at", "needs_reindex", "access_count", "last_accessed_at",
    }  # fmt: skip
    assert _columns(db_path, "memory_history") >= {
        "memory_id", "event", "old_content", "new_content", "old_key", "new_key", "at", "actor",
    }  # fmt: skip
    assert _columns(db_path, "api_keys") >= {
        "id", "name", "key_hash", "prefix", "created_at", "last_used_at", "revoked_at",
    }  # fmt: skip
    assert _columns(db_path, "providers") >= {"id", "base_url", "api_key_env"}
    assert _columns(db_path, "extraction_jobs") >= {
        "api_key_id", "session_id", "source", "text", "created_at", "attempts", "last_error",
    }  # fmt: skip
    assert _columns(db_path, "memory_vec_meta") >= {
        "active_dim", "embedding_signature", "last_reset_at", "vec_ready",
    }  # fmt: skip

    applied = _query(db_path, "SELECT version FROM schema_migrations ORDER BY version")
    assert [v for (v,) in applied] == [m.version for m in available_migrations()]


def test_vec_meta_is_a_singleton_row(mem: Memory, db_path: Path) -> None:
    rows = _query(db_path, "SELECT id, active_dim, embedding_signature, vec_ready FROM memory_vec_meta")
    assert rows == [(1, None, None, 0)]
    con = _raw(db_path)
    try:
        with pytest.raises(apsw.ConstraintError):
            con.execute("INSERT INTO memory_vec_meta (id, vec_ready) VALUES (2, 0)")
    finally:
        con.close()


def test_schema_enforces_type_and_unique_owner_key(mem: Memory, db_path: Path) -> None:
    mem.add("k1", "prefers tabs", key="pref:indent")
    con = _raw(db_path)
    try:
        insert = (
            "INSERT INTO memories (id, api_key_id, type, key, content, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, 'x', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')"
        )
        with pytest.raises(apsw.ConstraintError):
            con.execute(insert, ("dup", "k1", "factual", "pref:indent"))
        with pytest.raises(apsw.ConstraintError):
            con.execute(insert, ("badtype", "k1", "opinion", "other"))
        # Empty keys are not unique: any number of key-less memories may exist.
        con.execute(insert, ("e1", "k1", "factual", ""))
        con.execute(insert, ("e2", "k1", "factual", ""))
    finally:
        con.close()


def test_reopen_is_a_noop(db_path: Path, clock: ManualClock) -> None:
    with open_memory(db_path, clock=clock, workers=True, model=False) as first:
        kept = first.add("k1", "the deploy target is Fly.io", key="fact:deploy")
    migrations_before = _query(db_path, "SELECT version, name, applied_at FROM schema_migrations")
    schema_before = _query(db_path, "SELECT type, name, sql FROM sqlite_master ORDER BY name")

    with open_memory(db_path, clock=clock, workers=True, model=False) as second:
        with database(second) as stored:
            assert migrate(stored.db) == []  # nothing left to apply
        got = second.get(kept.id)
        assert got is not None and got.content == "the deploy target is Fly.io"

    assert _query(db_path, "SELECT version, name, applied_at FROM schema_migrations") == migrations_before
    assert _query(db_path, "SELECT type, name, sql FROM sqlite_master ORDER BY name") == schema_before
    assert _scalar(db_path, "SELECT COUNT(*) FROM memories") == 1


def test_newer_schema_version_is_refused(db_path: Path, clock: ManualClock) -> None:
    with open_memory(db_path, clock=clock, workers=True, model=False) as first:
        first.add("k1", "something to keep")
    con = _raw(db_path)
    con.execute(
        "INSERT INTO schema_migrations (version, name, applied_at)"
        " VALUES (9999, 'from_the_future', '2030-01-01T00:00:00.000Z')"
    )
    con.close()

    with pytest.raises(StoreError, match="9999"):
        open_memory(db_path, clock=clock, workers=True, model=False)

    # The refusal changed nothing and left no lock behind.
    assert _scalar(db_path, "SELECT COUNT(*) FROM memories") == 1
    assert _scalar(db_path, "SELECT MAX(version) FROM schema_migrations") == 9999
    con = _raw(db_path)
    try:
        con.set_busy_timeout(0)
        con.execute("BEGIN IMMEDIATE")
        con.execute("ROLLBACK")
    finally:
        con.close()


def test_wal_journal_mode_is_on(mem: Memory, db_path: Path) -> None:
    assert _scalar(db_path, "PRAGMA journal_mode") == "wal"
    with database(mem) as stored:
        assert stored.db.read().pragma("journal_mode") == "wal"


def test_the_background_checkpoint_copies_the_wal_and_keeps_it_bounded(mem: Memory, db_path: Path) -> None:
    # ~12 MiB written in many commits: past the checkpoint threshold (4 MiB of WAL) thrice.
    for n in range(400):
        mem.add("k", f"note {n} " + "lorem ipsum dolor sit amet " * 1100)
    wal = Path(f"{db_path}-wal")
    deadline = time.monotonic() + 10
    while db_path.stat().st_size < 8 * 1024 * 1024 and time.monotonic() < deadline:
        time.sleep(0.05)  # the checkpoint runs in its own thread
    assert db_path.stat().st_size >= 8 * 1024 * 1024  # the pages reached the database file
    assert wal.stat().st_size <= WAL_SIZE_LIMIT_BYTES + 4 * 1024 * 1024


def test_timestamps_are_iso_utc_with_milliseconds(mem: Memory) -> None:
    m = mem.add("k1", "x marks the spot", expires_at="2026-07-01T10:00:00+02:00")
    assert ISO_MS_Z.match(m.created_at)
    assert ISO_MS_Z.match(m.updated_at)
    assert m.expires_at == "2026-07-01T08:00:00.000Z"


# -- FTS5 ---------------------------------------------------------------------------------


def test_fts_tokenizer_is_porter_unicode61_without_diacritics(mem: Memory, db_path: Path) -> None:
    sql = _scalar(db_path, "SELECT sql FROM sqlite_master WHERE name = 'memory_fts'")
    assert re.search(r"tokenize\s*=\s*'porter unicode61 remove_diacritics 2'", sql)
    assert re.search(r"content\s*=\s*'memories'", sql)
    assert re.search(r"content_rowid\s*=\s*'rowid'", sql)

    cafe = mem.add("k1", "We always meet at the café near the station")
    run = mem.add("k1", "I run five kilometres every morning")
    plain = mem.add("k1", "the resume is on the desk")  # no accent in the content

    assert _fts_ids(mem, "k1", "cafe") == {cafe.id}
    assert _fts_ids(mem, "k1", "CAFÉ") == {cafe.id}
    assert _fts_ids(mem, "k1", "running") == {run.id}
    assert _fts_ids(mem, "k1", "résumé") == {plain.id}


def test_fts_follows_add_update_and_delete(mem: Memory, db_path: Path) -> None:
    kayak = mem.add("k1", "Weekend hobby is kayaking on the lake")
    other = mem.add("k2", "Also into kayaking", key="hobby:water")
    assert _fts_ids(mem, "k1", "kayaking") == {kayak.id}  # another key's memory never shows
    assert _fts_ids(mem, "k2", "kayaking") == {other.id}

    mem.update(kayak.id, content="Weekend hobby is bouldering at the gym")
    assert _fts_ids(mem, "k1", "kayaking") == set()
    assert _fts_ids(mem, "k1", "bouldering") == {kayak.id}

    # The key is indexed too: changing it re-indexes the row.
    mem.update(other.id, key="hobby:zebra-watching")
    assert _fts_ids(mem, "k2", "zebra") == {other.id}
    mem.update(other.id, key="hobby:giraffes")
    assert _fts_ids(mem, "k2", "zebra") == set()
    assert _fts_ids(mem, "k2", "giraffes") == {other.id}

    # An upsert that overwrites the content re-indexes as well.
    mem.add("k2", "Now prefers sailing", key="hobby:giraffes")
    assert _fts_ids(mem, "k2", "kayaking") == set()
    assert _fts_ids(mem, "k2", "sailing") == {other.id}

    assert mem.delete(kayak.id) is True
    assert kayak.id not in _all_retrieved(mem, "k1", "bouldering")
    assert kayak.id not in _all_retrieved(mem, "k1", "weekend hobby")
    assert mem.retrieve("k1", query="bouldering", strategy="semantic") == []
    _fts_consistent(db_path)


def test_access_bumps_do_not_rewrite_fts(mem: Memory, db_path: Path) -> None:
    ids = [mem.add("k1", f"note {i} about the espresso machine", key=f"note:{i}").id for i in range(5)]
    data_before = _scalar(db_path, "SELECT COUNT(*) FROM memory_fts_data")
    docs_before = _scalar(db_path, "SELECT COUNT(*) FROM memory_fts_docsize")

    for _ in range(200):
        found = mem.retrieve("k1", query="espresso", strategy="semantic")
        assert {item.memory.id for item in found} == set(ids)

    assert _scalar(db_path, "SELECT COUNT(*) FROM memory_fts_data") == data_before
    assert _scalar(db_path, "SELECT COUNT(*) FROM memory_fts_docsize") == docs_before
    # The accesses really were recorded, so the FTS rows were spared on purpose.
    counts = {row[0] for row in _query(db_path, "SELECT access_count FROM memories")}
    assert counts == {200}
    _fts_consistent(db_path)


# -- corrupt rows ---------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["{not-json", "[1, 2, 3]", "42", ""])
def test_unparsable_metadata_reads_as_empty_object(mem: Memory, db_path: Path, raw: str) -> None:
    m = mem.add("k1", "metadata will be damaged", metadata={"source": "api"})
    con = _raw(db_path)
    con.execute("UPDATE memories SET metadata = ? WHERE id = ?", (raw, m.id))
    con.close()

    got = mem.get(m.id)
    assert got is not None
    assert got.metadata == {}
    assert got.content == "metadata will be damaged"
    assert mem.list("k1").items[0].metadata == {}
    assert next(mem.export("k1"))["metadata"] == {}
    assert mem.retrieve("k1", "damaged")[0].memory.metadata == {}


def test_metadata_read_back_through_every_path_is_what_was_stored(mem: Memory) -> None:
    # Rows carry their metadata as JSON text until it is first read; each record gets its own dict.
    stored = {"source": "api", "tags": ["a", "b"], "nested": {"n": 1, "ok": True}, "note": "café"}
    m = mem.add("k1", "prefers tea with lemon", metadata=stored)
    other = mem.add("k1", "prefers jazz at work")
    found = mem.retrieve("k1", "tea")[0].memory
    assert found.id == m.id and found.metadata == stored
    assert mem.list("k1").items[1].metadata == stored
    found.metadata["nested"]["n"] = 2  # a caller changing its copy changes nothing stored
    for _ in range(2):  # the first read fills the cache, the second is served from it
        got = mem.get(m.id)
        assert got is not None and got.metadata == stored
        got.metadata["nested"]["n"] = 3
        got.metadata["tags"].append("c")
    assert mem.get(m.id).metadata == stored  # type: ignore[union-attr]  # the cached copy is untouched
    assert mem.get(other.id).metadata == {}  # type: ignore[union-attr]
    assert to_wire(mem.retrieve("k1", "tea")[0].memory)["metadata"] == stored


# -- atomicity --------------------------------------------------------------------------------


def test_failed_transaction_leaves_nothing_behind(mem: Memory, db_path: Path) -> None:
    mem.add("k1", "committed before")
    before = _counts(db_path)
    with pytest.raises(RuntimeError, match="boom"), mem.transaction():
        added = mem.add("k1", "never committed", key="ghost")
        mem.add("k1", "also never committed")
        raise RuntimeError("boom")

    assert _counts(db_path) == before
    assert mem.get(added.id) is None
    assert mem.history(added.id) == []
    assert mem.list("k1").total == 1
    assert _fts_ids(mem, "k1", "never") == set()
    _fts_consistent(db_path)


def test_rolled_back_add_is_not_served_from_read_cache(mem: Memory, db_path: Path) -> None:
    with pytest.raises(RuntimeError), mem.transaction():
        ghost = mem.add("k1", "phantom memory")
        assert mem.get(ghost.id) is not None  # visible inside its own transaction
        raise RuntimeError("abort")

    assert _scalar(db_path, "SELECT COUNT(*) FROM memories") == 0
    assert mem.get(ghost.id) is None


def test_rolled_back_update_is_not_served_from_read_cache(mem: Memory) -> None:
    m = mem.add("k1", "original text")
    with pytest.raises(RuntimeError), mem.transaction():
        mem.update(m.id, content="text that was rolled back")
        assert mem.get(m.id).content == "text that was rolled back"  # type: ignore[union-attr]
        raise RuntimeError("abort")

    got = mem.get(m.id)
    assert got is not None and got.content == "original text"


def test_reads_inside_a_transaction_see_its_own_writes(mem: Memory) -> None:
    m = mem.add("k1", "before the batch")
    assert mem.get(m.id) is not None  # now in the read cache
    with mem.transaction():
        mem.update(m.id, content="changed inside the batch")
        got = mem.get(m.id)
        assert got is not None and got.content == "changed inside the batch"
        mem.delete(m.id)
        assert mem.get(m.id) is None
    assert mem.get(m.id) is None


def test_a_successful_outer_transaction_commits_everything(mem: Memory, db_path: Path) -> None:
    with mem.transaction():
        a = mem.add("k1", "first in batch")
        b = mem.add("k1", "second in batch")
        mem.update(a.id, content="first in batch, edited")
    assert _counts(db_path) == (2, 2, 3)
    assert mem.get(a.id).content == "first in batch, edited"  # type: ignore[union-attr]
    assert mem.get(b.id) is not None


def test_a_transaction_without_savepoints_is_still_all_or_nothing(db_path: Path) -> None:
    # The extraction worker's transactions let nested writes join them (no savepoints, which
    # make FTS5 write a new index segment each): an error still leaves nothing behind.
    now = to_iso(utc_now())
    with database(db_path) as store:
        with pytest.raises(RuntimeError, match="boom"), store.db.write(savepoints=False):
            store.memories.insert(NewMemory("k1", "never committed"), now=now, actor="test")
            store.memories.insert(NewMemory("k1", "also never committed"), now=now, actor="test")
            raise RuntimeError("boom")
        assert _counts(db_path) == (0, 0, 0)
        with store.db.write(savepoints=False):
            for text in ("kept one", "kept two", "kept three"):
                store.memories.insert(NewMemory("k1", text), now=now, actor="test")
    assert _counts(db_path) == (3, 3, 3)
    _fts_consistent(db_path)
    with open_memory(db_path) as mem:
        assert {m.content for m in mem.retrieve("k1", "kept", strategy="semantic")} == {
            "kept one",
            "kept two",
            "kept three",
        }


# -- concurrency --------------------------------------------------------------------------------


def _run_threads(targets: list[Any]) -> list[BaseException]:
    errors: list[BaseException] = []

    def guard(fn: Any) -> Any:
        def run() -> None:
            try:
                fn()
            except BaseException as exc:
                errors.append(exc)

        return run

    threads = [threading.Thread(target=guard(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


def test_a_brief_write_that_would_wait_long_raises_would_block_and_writes_nothing(db_path: Path) -> None:
    # The gateway's event loop queues a chat's turn only when the write lock is free at once
    # or within a few ms (another thread's short transaction): never for another process.
    now = to_iso(utc_now())

    def insert(store: SqliteStore, text: str) -> None:
        with store.transaction():
            store.memories.insert(NewMemory("k1", text), now=now, actor="test")

    with database(db_path) as store:
        with (
            held_on_another_thread(store.transaction),
            store.briefly(),
            pytest.raises(WouldBlock, match="another thread"),
        ):
            insert(store, "while another thread writes")
        other = apsw.Connection(str(db_path))
        other.execute("BEGIN IMMEDIATE")
        try:
            with store.briefly(), pytest.raises(WouldBlock, match="another process"):
                insert(store, "while another process writes")
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert _counts(db_path) == (0, 0, 0)
        with store.briefly():
            insert(store, "once the lock is free")
        insert(store, "and as usual afterwards, waiting when it must")
    assert _counts(db_path)[0] == 2
    full = SqliteStore.open(db_path, synchronous="full")  # each commit waits for the disk
    try:
        with full.briefly(), pytest.raises(WouldBlock, match="disk"):
            insert(full, "never written")
    finally:
        full.close()
    assert _counts(db_path)[0] == 2


def test_concurrent_writers_and_readers_on_one_memory(mem: Memory, db_path: Path) -> None:
    writers_done = threading.Event()
    added: list[str] = []
    reads = [0, 0]

    def writer(n: int) -> Any:
        def run() -> None:
            for i in range(100):
                keyed = f"w{n}:{i}" if i % 2 else ""
                added.append(mem.add("k1", f"writer {n} fact {i} about llamas", key=keyed).id)

        return run

    def reader(slot: int) -> Any:
        def run() -> None:
            while True:  # at least one pass, then until the writers are done
                page = mem.list("k1", limit=5)
                for item in page.items:
                    assert mem.get(item.id) is not None
                mem.retrieve("k1", query="llamas", strategy="semantic", record_access=slot == 0)
                reads[slot] += 1
                if writers_done.is_set():
                    break

        return run

    def writers() -> None:
        try:
            assert not _run_threads([writer(n) for n in range(4)])
        finally:
            writers_done.set()

    errors = _run_threads([writers, reader(0), reader(1)])
    assert errors == [], [repr(e) for e in errors]
    assert all(r > 0 for r in reads)
    assert len(set(added)) == 400
    assert mem.list("k1", limit=1).total == 400
    assert _counts(db_path) == (400, 400, 400)
    _fts_consistent(db_path)


def test_two_memory_objects_on_one_file_write_concurrently(
    mem: Memory, db_path: Path, clock: ManualClock
) -> None:
    other = open_memory(db_path, clock=clock, workers=True, model=False)
    try:

        def writer(target: Memory, owner: str) -> Any:
            def run() -> None:
                for i in range(100):
                    target.add(owner, f"{owner} remembers item {i}")
                    target.add("shared", f"shared upsert by {owner} #{i}", key="shared:key")

            return run

        errors = _run_threads([writer(mem, "a"), writer(other, "b"), writer(mem, "c"), writer(other, "d")])
        assert errors == [], [repr(e) for e in errors]
        for owner in "abcd":
            assert mem.list(owner, limit=1).total == 100
            assert other.list(owner, limit=1).total == 100
        # Four writers upserted the same key 400 times: still exactly one memory.
        assert mem.list("shared").total == 1
    finally:
        other.close()
    _fts_consistent(db_path)


# -- durability ---------------------------------------------------------------------------------


def test_acknowledged_memories_survive_close_and_reopen(db_path: Path, clock: ManualClock) -> None:
    with open_memory(db_path, clock=clock, workers=True, model=False) as first:
        ids = {first.add("k1", f"durable fact number {i} about otters").id: i for i in range(20)}
    with open_memory(db_path, clock=clock, workers=True, model=False) as second:
        for memory_id, i in ids.items():
            got = second.get(memory_id)
            assert got is not None and got.content == f"durable fact number {i} about otters"
        assert _fts_ids(second, "k1", "otters") == set(ids)


_CHILD = textwrap.dedent(
    """
    import os, signal, sys, threading
    from memroute import Memory

    mem = Memory.open(sys.argv[1])

    def churn():  # unacknowledged writes in flight when the kill lands
        i = 0
        while True:
            mem.add("bg", f"background note {i}", key=f"bg:{i % 5}")
            mem.add("bg", f"background loose note {i}")
            i += 1

    threading.Thread(target=churn, daemon=True).start()
    for i in range(40):
        m = mem.add("owner", f"acknowledged fact number {i}", key=f"fact:{i}" if i % 2 else "")
        print(m.id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def _check_after_crash(db_path: Path, acknowledged: list[str], clock: ManualClock) -> None:
    assert _scalar(db_path, "PRAGMA integrity_check") == "ok"
    with open_memory(db_path, clock=clock, workers=True, model=False) as reopened:
        for memory_id in acknowledged:
            got = reopened.get(memory_id)
            assert got is not None, f"acknowledged memory {memory_id} was lost"
            assert got.content.startswith("acknowledged fact number")
        assert reopened.list("owner", limit=1).total >= len(acknowledged)
    _fts_consistent(db_path)


def test_sigkill_after_acknowledgement_loses_nothing(
    db_path: Path, tmp_path: Path, clock: ManualClock
) -> None:
    # Migrated up front, like a running server.
    open_memory(db_path, clock=clock, workers=True, model=False).close()
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(db_path)],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    acknowledged = done.stdout.split()
    assert len(acknowledged) == 40
    _check_after_crash(db_path, acknowledged, clock)


def test_sigkill_from_outside_mid_write_loses_nothing(
    db_path: Path, tmp_path: Path, clock: ManualClock
) -> None:
    script = _CHILD.replace("range(40)", "range(10**9)")  # keeps writing until killed
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(db_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    acknowledged: list[str] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            acknowledged.append(line.strip())
            if len(acknowledged) == 60:
                break
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(30)
        child.stdout.close()  # type: ignore[union-attr]
        child.stderr.close()  # type: ignore[union-attr]
    assert len(acknowledged) == 60, "child died early"
    assert child.returncode == -signal.SIGKILL
    _check_after_crash(db_path, acknowledged, clock)


def test_read_connections_of_finished_threads_are_closed(tmp_path: Path) -> None:
    # Thread pools retire idle workers and start new ones; each new thread opens a read
    # connection. Those of finished threads must not pile up (page cache, 2 fds each).
    import threading

    store = SqliteStore.open(tmp_path / "m.db")

    def open_files() -> int:
        fds = Path("/proc/self/fd")
        return sum(1 for fd in fds.iterdir() if str(tmp_path) in os.path.realpath(fd))

    try:
        before = open_files()
        for _ in range(50):
            worker = threading.Thread(target=lambda: store.db.read().execute("SELECT 1").fetchall())
            worker.start()
            worker.join()
        assert open_files() - before <= 4  # one finished thread's connection at most
    finally:
        store.close()
