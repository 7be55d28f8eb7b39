"""`memroute store copy`: an SQLite file's memory moved into PostgreSQL, whole (ids,
timestamps, history, access counts, key hashes, providers, settings, waiting jobs),
resumable, and checked by counts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from clocks import ManualClock
from memories import open_memory

from memroute import Memory
from memroute.config import Config
from memroute.models.owners import owner_of
from memroute.store import SqliteStore
from memroute.store.copy import copy_store
from memroute.store.postgres import PostgresStore


def _filled(db: Path) -> tuple[str, str, list[str]]:
    """A file with a bit of everything: (key id, its secret, the ids of its memories)."""
    with open_memory(db, clock=ManualClock(), model=False) as mem:
        mem.update_settings(maxTokens=900)
        key, secret = mem.keys.create("team")
        mem.providers.add("claude", "https://api.anthropic.test", api_key="sk-ant-stored", format="anthropic")
        kept = mem.add(key.id, "prefers tea", key="preference:drink", metadata={"source": "test"})
        mem.update(kept.id, content="prefers green tea")
        gone = mem.add(key.id, "lives in Porto", key="profile:city")
        mem.delete(gone.id)
        for i in range(25):
            mem.add(key.id, f"note number {i}", key=f"note:{i}")
        mem.add(owner_of(key.id, "ann"), "Ann likes chess", key="profile:hobby")
        mem.record_access([kept.id])
        ids = [r["id"] for r in mem.export(key.id)]
    store = SqliteStore.open(db)  # a turn still waiting to be learned from (closing drains the queue)
    store.jobs.enqueue(key.id, "s1", "user_message", "I moved to Lyon.", now="2026-12-05T10:00:00.000Z")
    store.close()
    return key.id, secret, ids


def _on_postgres(tmp_path: Path, url: str) -> Memory:
    config = Config.for_path(tmp_path / "pg" / "memroute.db", {}).with_overrides(database_url=url)
    return open_memory(config=config, clock=ManualClock(), model=False)  # the clock the file was written by


def test_a_copy_moves_everything_and_checks_the_counts(tmp_path: Path, pg_url: str) -> None:
    db = tmp_path / "memroute.db"
    key_id, secret, ids = _filled(db)
    with open_memory(db, model=False) as before:
        exported = {r["id"]: r for r in before.export(key_id)}
        history = {i: before.history(i) for i in ids}
    done = subprocess.run(
        [sys.executable, "-m", "memroute", "store", "copy", "--from", str(db), "--to", pg_url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    tables = {t["table"]: t for t in json.loads(done.stdout)["tables"]}
    assert tables["memories"]["copied"] == tables["memories"]["source"] == 27
    assert tables["memory_history"]["target"] == tables["memory_history"]["source"]
    with _on_postgres(tmp_path, pg_url) as after:
        assert {r["id"]: r for r in after.export(key_id)} == exported  # ids, timestamps, counts, metadata
        assert {i: after.history(i) for i in ids} == history
        assert after.keys.authenticate(secret).id == key_id  # type: ignore[union-attr]
        assert after.settings().max_tokens == 900
        assert [p.id for p in after.providers.list()] == ["claude"]
        assert after.extraction_queue().pending == 1
        assert after.retrieve(key_id, "which tea?")[0].memory.content == "prefers green tea"
    # Vacuumed and analyzed, as autovacuum would do later: the first searches of the copy
    # read rows already marked as visible, with the planner's statistics of what was loaded.
    with psycopg.connect(pg_url, autocommit=True) as con:
        row = con.execute(
            "SELECT last_vacuum IS NOT NULL, last_analyze IS NOT NULL FROM pg_stat_user_tables"
            " WHERE relname = 'memories'"
        ).fetchone()
    assert row == (True, True)


def test_a_copy_that_stopped_resumes_without_copying_twice(tmp_path: Path, pg_url: str) -> None:
    db = tmp_path / "memroute.db"
    key_id, _secret, _ids = _filled(db)
    source = SqliteStore.open(db)
    target = PostgresStore.open(pg_url)
    try:

        def stop_after_two_batches(table: str, rows: int) -> None:
            if table == "memories" and rows >= 10:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            copy_store(source, target, source_name="the-file", progress=stop_after_two_batches, batch=5)
        assert target.memories.count_owner(key_id) == 10  # two batches committed, then stopped
        report = {t.name: t for t in copy_store(source, target, source_name="the-file", batch=5)}
        assert report["memories"].copied == 17 and report["memories"].target == report["memories"].source
        assert report["api_keys"].copied == 0  # copied by the first run
        assert target.memories.count_owner(key_id) == 27
    finally:
        source.close()
        target.close()


def test_bad_arguments_are_refused_with_a_clear_message(tmp_path: Path) -> None:
    def copy(source: Path, target: str) -> subprocess.CompletedProcess[str]:
        command = ["memroute", "store", "copy", "--from", str(source), "--to", target]
        return subprocess.run([sys.executable, "-m", *command], capture_output=True, text=True, timeout=60)

    missing = copy(tmp_path / "none.db", "postgresql://x/y")
    assert missing.returncode == 2 and "no SQLite database" in missing.stderr
    (tmp_path / "m.db").write_bytes(b"")
    not_postgres = copy(tmp_path / "m.db", "mysql://x")
    assert not_postgres.returncode == 2 and "postgresql://" in not_postgres.stderr
