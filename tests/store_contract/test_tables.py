"""Keys, providers, settings, dashboard sessions, leases, the job queue, the change log and
the Qdrant outbox: the same on both stores."""

from __future__ import annotations

import threading

import pytest

from memroute.config import Config
from memroute.errors import InvalidInput
from memroute.models.records import ProviderRecord
from memroute.store import NewMemory, Store

NOW = "2026-12-05T10:00:00.000Z"


def test_a_key_is_found_by_its_hash_and_refused_once_revoked(store: Store) -> None:
    store.keys.create("id1", "ci", "hash1", "mr-abcd", now=NOW)
    assert store.keys.find_by_hash("hash1").id == "id1"  # type: ignore[union-attr]
    assert store.keys.find_by_hash("other") is None
    assert store.keys.set_limits("id1", max_concurrent=2, requests_per_minute=60, requires_user_id=True)
    key = store.keys.get("id1")
    assert key is not None and (key.max_concurrent, key.requests_per_minute, key.requires_user_id) == (
        2,
        60,
        True,
    )
    assert store.keys.revoke("id1", now=NOW)
    assert not store.keys.revoke("id1", now=NOW)  # once
    assert store.keys.get("id1").revoked_at == NOW  # type: ignore[union-attr]


def test_one_provider_is_the_default(store: Store) -> None:
    for name in ("a", "b"):
        store.providers.upsert(ProviderRecord(name, f"http://{name}", None, "sk-x", True, NOW, NOW))
    assert [(p.id, p.is_default) for p in store.providers.list()] == [("a", False), ("b", True)]
    assert store.providers.delete("a") and not store.providers.delete("a")


def test_settings_written_are_read_back(store: Store) -> None:
    store.settings.write({"maxTokens": 900, "enabled": False}, now=NOW)
    store.settings.write({"maxTokens": 1200}, now=NOW)
    assert store.settings.read_all() == {"maxTokens": 1200, "enabled": False}


def test_a_session_is_taken_once(store: Store) -> None:
    store.sessions.create("h1", "fp", now=NOW, expires_at="2026-12-06T10:00:00.000Z")
    assert store.sessions.expires_at("h1", "fp", now=NOW) == "2026-12-06T10:00:00.000Z"
    assert store.sessions.expires_at("h1", "another admin token", now=NOW) is None
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda: results.append(store.sessions.take("h1", "fp", now=NOW)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, False, False, True]


def test_a_lease_is_held_by_one_holder_until_it_expires(store: Store) -> None:
    never = lambda _holder: False  # noqa: E731
    assert store.leases.take("reindex", "a", ttl_s=10, now=100.0, replaceable=never)
    assert not store.leases.take("reindex", "b", ttl_s=10, now=105.0, replaceable=never)
    assert store.leases.take("reindex", "a", ttl_s=10, now=105.0, replaceable=never)  # renewed
    assert store.leases.take("reindex", "b", ttl_s=10, now=116.0, replaceable=never)  # expired
    store.leases.release("reindex", "a")  # not a's any more: nothing happens
    assert not store.leases.take("reindex", "a", ttl_s=10, now=117.0, replaceable=never)
    assert store.leases.take("reindex", "a", ttl_s=10, now=117.0, replaceable=lambda holder: holder == "b")


def test_a_job_is_finished_once_and_a_failed_one_is_counted(store: Store) -> None:
    first = store.jobs.enqueue("k1", "s", "user_message", "I live in Lyon", now=NOW, speaker="Ann")
    second = store.jobs.enqueue("k1", "s", "user_message", "I like tea", now=NOW, capture=True)
    batch = store.jobs.next_batch(max_attempts=3, limit=10)
    assert [(j.id, j.text, j.speaker, j.capture) for j in batch] == [
        (first, "I live in Lyon", "Ann", False),
        (second, "I like tea", "", True),
    ]
    assert store.jobs.finish([first, 12345]) == {first}  # a job that is not there is left out
    assert store.jobs.finish([first]) == set()  # once
    store.jobs.fail(second, "boom")
    assert store.jobs.counts(max_attempts=3) == (1, 0)
    for _ in range(2):
        store.jobs.fail(second, "boom")
    assert store.jobs.counts(max_attempts=3) == (0, 1)
    assert store.jobs.next_batch(max_attempts=3, limit=10) == []


@pytest.mark.parametrize("durable", [True, False])
def test_a_job_queued_alone_is_kept_and_one_queued_in_a_failed_transaction_is_not(
    store: Store, durable: bool
) -> None:
    kept = store.jobs.enqueue("k1", "s", "user_message", "I live in Lyon", now=NOW, durable=durable)
    with pytest.raises(RuntimeError), store.transaction():
        store.jobs.enqueue("k1", "s", "user_message", "I like tea", now=NOW, durable=durable)
        raise RuntimeError("the write fails after the job was queued")
    queued = store.jobs.next_batch(max_attempts=3, limit=10)
    assert [(j.id, j.text) for j in queued] == [(kept, "I live in Lyon")]


def test_the_change_log_lists_a_keys_changes_in_order(store: Store) -> None:
    with store.changes.snapshot("k1") as (start, rows):
        assert list(rows) == []
    a, _ = store.memories.upsert(NewMemory(api_key_id="k1", content="one"), now=NOW, actor="t")
    store.memories.upsert(NewMemory(api_key_id="k2", content="other key"), now=NOW, actor="t")
    store.memories.update(a.id, {"content": "one, edited"}, now=NOW, actor="t")
    store.memories.record_access([a.id], now=NOW)  # not a change
    changes, pruned = store.changes.since("k1", start)
    assert pruned == 0 and len(changes) == 2 and changes[0][0] < changes[1][0]
    assert store.changes.since("k1", start, 1) == ([changes[0]], 0)  # the first, when limited
    rowid = changes[0][1]
    assert {r for _, r in changes} == {rowid}
    assert store.changes.rows("k1", [rowid])[rowid][5] == "one, edited"  # COLUMNS: content is 6th
    assert store.changes.rows("k2", [rowid]) == {}  # another owner's rows are never read
    store.memories.delete(a.id, now=NOW, actor="t")
    assert store.changes.rows("k1", [rowid]) == {}
    assert store.changes.count("k1") == 0 and store.changes.count("k2", upto=5) == 1


def test_the_qdrant_outbox_queues_changes_only_while_enabled(store: Store) -> None:
    store.memories.upsert(NewMemory(api_key_id="k1", content="before"), now=NOW, actor="t")
    assert store.qdrant.outbox_count() == 0
    store.qdrant.save_settings({"qdrantEnabled": True}, now=NOW)
    assert store.qdrant.state().backfill_next == 0 and store.qdrant.state().backfill_total == 1
    m, _ = store.memories.upsert(NewMemory(api_key_id="k1", content="after"), now=NOW, actor="t")
    [entry] = store.qdrant.outbox(10)
    assert (entry.memory_id, entry.op) == (m.id, "upsert")
    store.memories.update(m.id, {"content": "after, edited"}, now=NOW, actor="t")  # queued again
    store.qdrant.ack([entry])  # the older entry: the new one stays
    [again] = store.qdrant.outbox(10, api_key_id="k1")
    store.qdrant.ack([again])
    store.memories.delete(m.id, now=NOW, actor="t")
    assert [e.op for e in store.qdrant.outbox(10)] == ["delete"]
    store.qdrant.save_settings({"qdrantEnabled": False}, now=NOW)
    assert store.qdrant.outbox_count() == 0


def test_the_database_url_is_checked_and_its_password_never_shown() -> None:
    env = {"MEMROUTE_DATABASE_URL": "postgresql://memroute:s3cret-pass@db.internal:5432/memroute"}
    config = Config.from_env(env, data_dir="/tmp/unused")
    assert config.database_shown == "postgresql://memroute:***@db.internal:5432/memroute"
    assert "s3cret" not in repr(config)
    with pytest.raises(InvalidInput, match="postgresql://"):
        Config.from_env({"MEMROUTE_DATABASE_URL": "mysql://x/y"}, data_dir="/tmp/unused")
    assert Config.from_env({}, data_dir="/tmp/unused").database_shown.endswith("memroute.db")
