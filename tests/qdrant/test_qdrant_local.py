"""Qdrant as the first vector index, through memroute's own connection and sync, against Qdrant's
local mode (`QdrantClient(":memory:")` or a folder): no Qdrant server runs on these
machines. Local mode runs the same client API the adapter uses against a server
(collections, payload filters, upsert, delete, scroll, query_points); it searches by
brute force and ignores quantisation and payload indexes.

Most cases drive the sync by hand (`sync_step()` until idle) so they are
deterministic; the outage case runs the real background workers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import postgres
import pytest
from clocks import ManualClock
from memories import open_memory
from storage import open_parts

from memroute import Memory
from memroute.clock import to_iso
from memroute.config import Config
from memroute.errors import QdrantError
from memroute.models.records import MemoryFilter
from memroute.models.wire import to_wire
from memroute.service.build import Parts
from memroute.service.qdrant import QdrantService
from memroute.vectors import VectorHit
from memroute.vectors.qdrant_pool import QdrantPool
from memroute.vectors.qdrant_settings import QdrantSettings
from memroute.vectors.qdrant_sync import QdrantSyncWorker

ANIMALS = ["cat", "dog", "horse", "parrot", "lizard", "rabbit", "goat", "otter"]


def _open(path: Path, clock: Any, *, workers: bool = False, **env: str) -> Memory:
    config = Config.for_path(path, environ=env)
    return open_memory(config=config, clock=clock, workers=workers)


def _engine(mem: Memory) -> QdrantService:
    return mem.qdrant


def _drain(mem: Memory, limit: int = 1000) -> int:
    """Run the sync until it has nothing left; the number of steps that did work."""
    for step in range(limit):
        if not _engine(mem).sync_step():
            return step
    raise AssertionError("the Qdrant sync never went idle")


def _enable(mem: Memory, host: str = ":memory:", **more: Any) -> None:
    _engine(mem).update_settings({"enabled": True, "host": host, **more})


def _status(mem: Memory) -> dict[str, Any]:
    return to_wire(mem.engine_status().qdrant)


def _semantic(mem: Memory, key: str, query: str) -> Any:
    return mem.retrieve_preview(key, query, strategy="semantic", limit=10)


def _wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not met in time")


@pytest.fixture
def qparts(db_path: Path, clock: ManualClock) -> Iterator[tuple[Memory, Parts]]:
    config = Config.for_path(db_path, environ={}).with_overrides(database_url=postgres.url_for(db_path))
    memory, parts = open_parts(config, clock)
    memory.update_settings(enabled=True, embedding_source="hashing")
    yield memory, parts
    memory.close()


@pytest.fixture
def qmem(qparts: tuple[Memory, Parts]) -> Memory:
    return qparts[0]


def _qdrant_search(qparts: tuple[Memory, Parts], query: str, flt: MemoryFilter, k: int) -> list[VectorHit]:
    """The Qdrant index asked as retrieval asks it (the search step embeds the query)."""
    mem, parts = qparts
    plan = parts.semantic.plan(mem.settings(), query)
    assert plan.indexes and plan.indexes[0].name == "qdrant", plan.reason
    index = plan.indexes[0]
    return index.search(plan.query_vector(index, flt), flt, k)


def _fill(mem: Memory, n: int, keys: tuple[str, ...] = ("k1", "k2", "k3", "k4")) -> list[Any]:
    return [
        mem.add(
            keys[i % len(keys)], f"note {i}: the {ANIMALS[i % len(ANIMALS)]} number {i} sleeps", key=f"n{i}"
        )
        for i in range(n)
    ]


@pytest.mark.both_stores  # the outbox and back-fill of each store
def test_enabling_back_fills_every_existing_memory_then_qdrant_answers(qmem: Memory) -> None:
    memories = _fill(qmem, 1000)
    _enable(qmem)
    assert qmem.settings().vector_store == "qdrant"  # enabling selects the vector store
    # Until the back-fill is done, sqlite-vec answers and says why.
    before = _semantic(qmem, "k1", "the cat number 8 sleeps")
    assert before.items and before.items[0].tier == "vector"
    assert "back-fill in progress" in (before.resolution.fallback_reason or "")
    _drain(qmem)
    status = _status(qmem)
    assert status["serving"] is True and status["healthy"] is True
    assert status["points"] == 1000 and status["collection"] == "memroute_memory_256"
    assert status["backfill"] == {
        "done": True,
        "pending": 0,
        "pushed": 1000,
        "total": 1000,
        "orphansRemoved": 0,
    }
    assert qmem.engine_status().vector_store.backend == "qdrant"
    after = _semantic(qmem, "k1", "the cat number 8 sleeps")
    assert after.resolution.vector_store == "qdrant" and after.resolution.fallback_reason is None
    assert after.items[0].memory.id == memories[8].id and after.items[0].tier == "qdrant"
    hybrid = qmem.retrieve_preview("k1", "the cat number 8 sleeps", strategy="hybrid", limit=10)
    assert hybrid.resolution.vector_store == "qdrant"
    assert hybrid.items[0].memory.id == memories[8].id and hybrid.items[0].tier == "hybrid-rrf"
    assert hybrid.items[0].vec_score is not None and hybrid.items[0].fts_score is not None


def test_the_back_fill_resumes_after_a_restart(db_path: Path, tmp_path: Path, clock: ManualClock) -> None:
    folder = tmp_path / "qdrant"
    mem = _open(db_path, clock)
    mem.update_settings(enabled=True, embedding_source="hashing")
    _fill(mem, 300)
    _enable(mem, f"local:{folder}")
    assert _engine(mem).sync_step() == 64  # one batch, then the process stops
    mem.close()
    mem = _open(db_path, clock)
    try:
        status = _status(mem)
        assert status["backfill"]["pending"] == 300 - 64 and status["serving"] is False
        _drain(mem)
        status = _status(mem)
        assert status["points"] == 300 and status["serving"] is True
        assert status["backfill"]["pushed"] == 300  # resumed, not started again
    finally:
        mem.close()


@pytest.mark.both_stores  # the outbox and back-fill of each store
def test_changes_while_enabled_reach_qdrant_and_carry_the_real_type(qmem: Memory) -> None:
    _enable(qmem)
    _drain(qmem)
    memory = qmem.add("k1", "prefers tabs over spaces", key="style", type="procedural")
    _drain(qmem)
    hits = to_wire(_engine(qmem).search_test("prefers tabs over spaces", 3))["results"]
    assert hits[0]["payload"]["memoryId"] == memory.id
    assert hits[0]["payload"]["type"] == "procedural"  # REF hard-coded "semantic"
    assert hits[0]["payload"]["apiKeyId"] == "k1"
    qmem.update(memory.id, content="prefers spaces over tabs after all", type="episodic")
    _drain(qmem)
    hits = to_wire(_engine(qmem).search_test("prefers spaces over tabs after all", 3))["results"]
    assert hits[0]["payload"]["content"] == "prefers spaces over tabs after all"
    assert hits[0]["payload"]["type"] == "episodic"
    assert _status(qmem)["points"] == 1  # updated in place, not duplicated


@pytest.mark.both_stores  # the outbox and back-fill of each store
def test_a_delete_removes_the_point_and_keeps_the_history(qmem: Memory) -> None:
    _enable(qmem)
    memories = _fill(qmem, 10)
    _drain(qmem)
    assert _status(qmem)["points"] == 10
    assert qmem.delete(memories[3].id)
    assert qmem.clear("k2") == 3  # notes 1, 5, 9
    _drain(qmem)
    assert _status(qmem)["points"] == 6
    hits = to_wire(_engine(qmem).search_test("note the number sleeps", 50))["results"]
    found = {h["payload"]["memoryId"] for h in hits}
    assert memories[3].id not in found and memories[5].id not in found
    assert [e.event for e in qmem.history(memories[3].id)] == ["ADD", "DELETE"]


def test_a_memory_added_a_moment_ago_is_found_before_the_worker_runs(qmem: Memory) -> None:
    _enable(qmem)
    _fill(qmem, 20)
    _drain(qmem)
    fresh = qmem.add("k1", "just bought a red kayak for the lake", key="kayak")
    result = _semantic(qmem, "k1", "just bought a red kayak for the lake")
    assert result.resolution.vector_store == "qdrant"
    assert result.items[0].memory.id == fresh.id and result.items[0].tier == "qdrant"


@pytest.mark.both_stores  # the outbox and back-fill of each store
def test_no_key_ever_gets_another_keys_memory_from_qdrant(
    qparts: tuple[Memory, Parts], clock: ManualClock
) -> None:
    qmem = qparts[0]
    _enable(qmem)
    memories = _fill(qmem, 200)
    _drain(qmem)
    index, why = _engine(qmem).index(qmem.settings())
    assert index is not None, why
    owners = {m.id: m.api_key_id for m in memories}
    for key in ("k1", "k2", "k3", "k4"):
        flt = MemoryFilter(api_key_id=key, now=to_iso(clock()))
        hits = _qdrant_search(qparts, "the dog number sleeps", flt, 100)
        assert len(hits) == 50  # every memory of the key, and only those
        assert {owners[h.memory_id] for h in hits} == {key}
        for item in _semantic(qmem, key, "the dog number sleeps").items:
            assert item.memory.api_key_id == key
    everyone = _qdrant_search(qparts, "dog", MemoryFilter(None, to_iso(clock())), 300)
    assert {owners[h.memory_id] for h in everyone} == {
        "k1",
        "k2",
        "k3",
        "k4",
    }  # global scope reads every key, by definition


def test_qdrant_applies_expiry_retention_session_and_type(
    qparts: tuple[Memory, Parts], clock: ManualClock
) -> None:
    qmem = qparts[0]
    _enable(qmem)
    soon = qmem.add(
        "k1", "the parking spot is B12 today", key="parking", expires_at=to_iso(clock() + timedelta(hours=1))
    )
    old = qmem.add("k1", "the parking garage closes at ten", key="garage")
    clock.advance(days=10)
    fresh = qmem.add("k1", "the parking permit renews in May", key="permit", session_id="s1", type="episodic")
    _drain(qmem)
    index, _ = _engine(qmem).index(qmem.settings())
    assert index is not None

    def found(**flt: Any) -> set[str]:
        return {
            h.memory_id
            for h in _qdrant_search(qparts, "parking", MemoryFilter("k1", to_iso(clock()), **flt), 20)
        }

    assert found() == {old.id, fresh.id}  # the spot expired 10 days ago
    assert found(updated_since=to_iso(clock() - timedelta(days=5))) == {fresh.id}  # retention
    assert found(session_id="s1") == {fresh.id}
    assert found(type="episodic") == {fresh.id}
    assert soon.id not in {i.memory.id for i in _semantic(qmem, "k1", "parking spot").items}


def test_a_new_embedding_dimension_gets_its_own_collection_without_errors(qmem: Memory) -> None:
    _enable(qmem)
    memories = _fill(qmem, 40)
    _drain(qmem)
    assert _status(qmem)["collection"] == "memroute_memory_256"
    # The bundled all-MiniLM-L6-v2 (384-d) replaces the 256-d hashing vectors.
    qmem.update_settings(embedding_source="transformers", transformers_enabled=True)
    result = _semantic(qmem, "k1", "the cat number 8 sleeps")
    assert result.resolution.vector_store == "sqlite-vec"  # Qdrant's new collection is still empty
    assert "back-fill in progress" in (result.resolution.fallback_reason or "")
    _drain(qmem)
    status = _status(qmem)
    assert status["collection"] == "memroute_memory_384" and status["points"] == 40
    assert status["serving"] is True and status["lastError"] is None
    after = _semantic(qmem, "k1", "the cat number 8 sleeps")
    assert after.resolution.vector_store == "qdrant" and after.items[0].memory.id == memories[8].id


def test_disabling_stops_queueing_and_re_enabling_removes_points_of_memories_deleted_meanwhile(
    qmem: Memory,
) -> None:
    _enable(qmem)
    memories = _fill(qmem, 12)
    _drain(qmem)
    _engine(qmem).update_settings({"enabled": False})
    assert qmem.settings().vector_store == "auto"
    qmem.delete(memories[0].id)
    qmem.add("k1", "a memory written while Qdrant was off", key="off")
    assert _status(qmem)["outbox"] == 0  # nothing is queued while disabled
    assert (
        _semantic(qmem, "k1", "a memory written while Qdrant was off").resolution.vector_store == "sqlite-vec"
    )
    _engine(qmem).update_settings({"enabled": True})
    _drain(qmem)
    status = _status(qmem)
    assert status["points"] == 12  # 12 - 1 deleted + 1 added
    assert status["backfill"]["orphansRemoved"] == 1


@pytest.mark.parametrize("quantization", ["int8", "binary"])
def test_quantised_collections_search_with_rescoring(qmem: Memory, quantization: str) -> None:
    _enable(qmem, quantization=quantization)
    memories = _fill(qmem, 30)
    _drain(qmem)
    result = _semantic(qmem, "k2", "the dog number 1 sleeps")
    assert result.resolution.vector_store == "qdrant" and result.items[0].memory.id == memories[1].id


def test_memories_without_a_uuid_or_a_vector_are_handled(qmem: Memory) -> None:
    _enable(qmem)
    report = qmem.import_(
        [
            {
                "id": "legacy-note-7",
                "apiKeyId": "k1",
                "key": "legacy",
                "content": "the old wiki lives on port 8080",
            },
            {"id": "legacy-note-8", "apiKeyId": "k1", "key": "blank", "content": "!!! ???"},
        ]
    )
    assert report.imported == 2
    _drain(qmem)
    assert _status(qmem)["lastError"] is None and _status(qmem)["points"] == 1  # "!!! ???" has no vector
    result = _semantic(qmem, "k1", "the old wiki lives on port 8080")
    assert result.resolution.vector_store == "qdrant" and result.items[0].memory.id == "legacy-note-7"


def test_cleanup_deletes_points_of_expired_and_old_memories_and_says_which(
    qmem: Memory, clock: ManualClock
) -> None:
    _enable(qmem)
    expiring = qmem.add(
        "k1", "the guest wifi password rotates", key="wifi", expires_at=to_iso(clock() + timedelta(hours=1))
    )
    old = qmem.add("k1", "the office moved to the third floor", key="office")
    clock.advance(days=40)
    kept = qmem.add("k1", "the coffee machine was fixed", key="coffee")
    _drain(qmem)
    report = _engine(qmem).cleanup()
    assert report.ok is True and report.retention_days == 30
    assert sorted(report.deleted_ids) == sorted([expiring.id, old.id]) and report.deleted_count == 2
    assert _status(qmem)["points"] == 1
    assert qmem.get(old.id) is not None and qmem.get(kept.id) is not None  # SQLite is untouched


def test_qdrant_down_mid_run_answers_keep_coming_from_sqlite_vec(db_path: Path, clock: ManualClock) -> None:
    mem = _open(db_path, clock, workers=True, QDRANT_RETRY_S="0.3")
    try:
        mem.update_settings(enabled=True, embedding_source="hashing")
        memories = _fill(mem, 100)
        _enable(mem)
        _wait_for(lambda: _status(mem)["serving"])
        assert _semantic(mem, "k2", "the dog number 9 sleeps").resolution.vector_store == "qdrant"
        qdrant = _engine(mem)
        qdrant.connection().close()  # the connection dies under the running server
        down = _semantic(mem, "k2", "the dog number 9 sleeps")
        assert down.items[0].memory.id == memories[9].id and down.items[0].tier == "vector"
        assert down.resolution.vector_store == "sqlite-vec"
        assert "qdrant failed" in (down.resolution.fallback_reason or "")
        assert "falling back to sqlite-vec" in (down.resolution.fallback_reason or "")
        written_during_outage = mem.add("k3", "the ferry leaves at seven", key="ferry")
        during = _semantic(mem, "k3", "the ferry leaves at seven")
        assert during.items[0].memory.id == written_during_outage.id
        # It reconnects by itself; a fresh local Qdrant is empty, so it is back-filled.
        _wait_for(lambda: _status(mem)["serving"] and _status(mem)["points"] == 101)
        back = _semantic(mem, "k3", "the ferry leaves at seven")
        assert (
            back.resolution.vector_store == "qdrant" and back.items[0].memory.id == written_during_outage.id
        )
    finally:
        mem.close()


def test_a_stop_that_comes_while_a_sync_fails_ends_the_worker_at_once() -> None:
    """A server stopped while its sync's call to an unreachable Qdrant is failing stops at
    once, not after the back-off (30 s by default): the stop is not lost with the retry."""
    entered = threading.Event()

    def failing_step() -> int:
        entered.set()
        time.sleep(0.3)  # the call is still failing when the stop comes
        raise QdrantError("Qdrant unreachable: connection refused")

    pool = QdrantPool(lambda: QdrantSettings(enabled=True, host="127.0.0.1"), timeout_s=1, retry_s=30)
    worker = QdrantSyncWorker(failing_step, pool)
    worker.start()
    assert entered.wait(10)
    started = time.monotonic()
    worker.stop()
    assert time.monotonic() - started < 10
    assert not [t for t in threading.enumerate() if t.name == "memroute-qdrant-sync"]
    assert pool.last_error == "Qdrant unreachable: connection refused"


def test_reindex_pushes_every_memory_again_while_qdrant_keeps_serving(qmem: Memory) -> None:
    _enable(qmem)
    memories = _fill(qmem, 100)
    _drain(qmem)
    engine = _engine(qmem)
    lost = memories[4]  # a point lost behind memroute's back (say, an older snapshot restored)
    engine.connection().delete("memroute_memory_256", [lost.id])
    assert _status(qmem)["points"] == 99
    engine.refresh()
    assert _semantic(qmem, "k1", "the lizard number 4 sleeps").resolution.vector_store == "qdrant"
    report = qmem.reindex(wait=True)
    assert report.qdrant is not None
    assert report.qdrant.ok is True and report.qdrant.serving is True
    assert _status(qmem)["points"] == 100
    found = _semantic(qmem, "k1", "the lizard number 4 sleeps")
    assert found.resolution.vector_store == "qdrant" and found.items[0].memory.id == lost.id


def test_doctor_reports_qdrant(db_path: Path, tmp_path: Path, clock: ManualClock) -> None:
    from memroute.service.diagnostics import diagnose

    mem = _open(db_path, clock)
    mem.update_settings(enabled=True, embedding_source="hashing")
    _fill(mem, 5)
    _enable(mem, f"local:{tmp_path / 'qdrant'}")
    _drain(mem)
    mem.close()
    line = diagnose(Config.for_path(db_path, environ={}))["qdrant"]
    assert (
        line.startswith("serving at local mode") and "memroute_memory_256, 5 points, 0 changes queued" in line
    )


def test_a_query_without_a_known_word_finds_nothing_in_qdrant_and_does_not_fail(qmem: Memory) -> None:
    _enable(qmem)
    _fill(qmem, 10)
    _drain(qmem)
    result = qmem.retrieve_preview("k1", "* ^ ???", strategy="semantic", limit=5)
    assert "qdrant returned no match" in (result.resolution.fallback_reason or "")
    assert "failed" not in (result.resolution.fallback_reason or "")
    assert all(item.tier != "qdrant" for item in result.items)  # no score-0 "neighbours"
    assert _status(qmem)["lastError"] is None


def test_changing_collection_settings_keeps_the_connection_and_its_points(qmem: Memory) -> None:
    _enable(qmem)
    _fill(qmem, 20)
    _drain(qmem)
    engine = _engine(qmem)
    before = engine.connection()
    engine.update_settings({"quantization": "int8"})
    assert before.count("memroute_memory_256") == 20  # a search still holding it goes on working
    assert engine.connection() is not before and engine.connection().settings.quantization == "int8"
    _drain(qmem)
    status = _status(qmem)
    assert status["serving"] is True and status["lastError"] is None and status["points"] == 20
    assert _semantic(qmem, "k1", "the cat number 8 sleeps").resolution.vector_store == "qdrant"
