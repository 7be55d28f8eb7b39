"""The store's vector table (sqlite-vec in the file, pgvector on PostgreSQL): the same
answers on both stores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import postgres
from memories import open_memory

from memroute.config import Config
from memroute.models.records import MemoryFilter
from memroute.store import NewMemory, Store

NOW = "2026-12-05T10:00:00.000Z"
DIM = 8


def _unit(*values: float) -> bytes:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(values)] = values
    return (vector / np.linalg.norm(vector)).astype(np.float32).tobytes()


def _add(store: Store, owner: str, content: str, vector: bytes, **more: object) -> str:
    memory, _ = store.memories.upsert(
        NewMemory(api_key_id=owner, content=content, **more),  # type: ignore[arg-type]
        now=NOW,
        actor="test",
    )
    [pending] = [p for p in store.vectors.pending(owner, 100) if p.id == memory.id]
    store.vectors.store([(pending, vector)])
    return memory.id


def test_a_reset_marks_every_memory_pending_and_names_its_model(store: Store) -> None:
    assert store.vectors.available
    store.memories.upsert(NewMemory(api_key_id="k1", content="one"), now=NOW, actor="t")
    assert store.vectors.reset("hashing:test:8", DIM, int8=False, now=NOW) == 1
    meta = store.vectors.meta()
    assert (meta.ready, meta.signature, meta.active_dim) == (True, "hashing:test:8", DIM)
    assert store.vectors.reset_unless_current("hashing:test:8", DIM, int8=False, now=NOW) is None
    assert [p.content for p in store.vectors.pending(None, 10)] == ["one"]


def test_the_nearest_are_the_owners_and_pass_the_filter(store: Store) -> None:
    store.vectors.reset("hashing:test:8", DIM, int8=False, now=NOW)
    near = _add(store, "k1", "near", _unit(1, 0.1))
    far = _add(store, "k1", "far", _unit(0, 1))
    _add(store, "k2", "another key's, nearest of all", _unit(1, 0))
    _add(store, "k1", "expired", _unit(1, 0.05), expires_at="2026-12-05T09:00:00.000Z")
    hits = store.vectors.knn(_unit(1, 0), MemoryFilter("k1", NOW), 5)
    assert [h.memory_id for h in hits] == [near, far]
    assert hits[0].distance < hits[1].distance
    assert hits[0].memory.content == "near"  # read whole with the hit
    assert store.vectors.count() == 4 and store.vectors.pending(None, 10) == []


def test_memories_the_filter_drops_take_no_place_among_the_k_nearest(store: Store) -> None:
    store.vectors.reset("hashing:test:8", DIM, int8=False, now=NOW)
    _add(store, "k1", "expired, nearest", _unit(1, 0), expires_at="2026-12-05T09:00:00.000Z")
    _add(store, "k1", "expired too", _unit(1, 0.01), expires_at="2026-12-05T09:00:00.000Z")
    _add(store, "k1", "other session, next", _unit(1, 0.05), session_id="s2")
    _add(store, "k1", "second", _unit(1, 0.2), session_id="s1")
    _add(store, "k1", "third", _unit(1, 0.4))
    _add(store, "k1", "farthest", _unit(0, 1))

    def nearest(flt: MemoryFilter, k: int) -> list[str]:
        return [h.memory.content for h in store.vectors.knn(_unit(1, 0), flt, k)]

    assert nearest(MemoryFilter("k1", NOW), 1) == ["other session, next"]
    assert nearest(MemoryFilter("k1", NOW), 2) == ["other session, next", "second"]
    assert nearest(MemoryFilter("k1", NOW), 3) == ["other session, next", "second", "third"]
    in_session = MemoryFilter("k1", NOW, session_id="s1")
    assert nearest(in_session, 1) == ["second"]


def test_a_keys_vectors_load_whole_and_follow_its_generation(store: Store) -> None:
    store.vectors.reset("hashing:test:8", DIM, int8=False, now=NOW)
    before = store.vectors.generation("k1")
    first = _add(store, "k1", "first", _unit(1, 2, 3))
    _add(store, "k1", "second", _unit(3, 2, 1))
    loaded = store.vectors.load_key("k1", DIM, int8=False)
    assert loaded is not None and loaded.generation == before + 2
    assert loaded.vectors.shape == (2, DIM)
    by_rowid = dict(zip(loaded.rowids.tolist(), loaded.vectors, strict=True))
    assert any(np.allclose(v, np.frombuffer(_unit(1, 2, 3), dtype=np.float32)) for v in by_rowid.values())
    store.memories.delete(first, now=NOW, actor="t")  # its vector goes with it
    assert store.vectors.generation("k1") == before + 3
    assert [h.memory.content for h in store.vectors.knn(_unit(1, 2, 3), MemoryFilter("k1", NOW), 5)] == [
        "second"
    ]


def test_an_edited_memory_waits_for_a_new_vector(store: Store) -> None:
    store.vectors.reset("hashing:test:8", DIM, int8=False, now=NOW)
    memory_id = _add(store, "k1", "old text", _unit(1))
    [pending] = store.vectors.pending("k1", 5) or [None]
    assert pending is None
    store.memories.update(memory_id, {"content": "new text"}, now=NOW, actor="t")
    [waiting] = store.vectors.pending("k1", 5)
    stale = type(waiting)(waiting.rowid, waiting.id, waiting.api_key_id, "old text")
    assert store.vectors.store([(stale, _unit(0, 1))]) == {}  # embedded from the old text: skipped
    assert store.vectors.admitted([waiting.rowid], MemoryFilter("k1", NOW)) == {waiting.rowid: memory_id}
    assert store.vectors.admitted([waiting.rowid], MemoryFilter("k2", NOW)) == {}


def test_without_pgvector_the_store_says_why_and_searches_keywords(tmp_path: Path) -> None:
    """A database whose user may not create the pgvector extension (a managed service where
    nobody allowed it): memroute still opens it, keeps no vectors, and says why."""
    url = postgres.database_without_extensions()
    try:
        config = Config.for_path(tmp_path / "m.db", {}).with_overrides(database_url=url)
        with open_memory(config=config) as mem:
            status = mem.engine_status()
            assert status.vector_store.available is False and status.vector_store.backend == "none"
            assert "pgvector is not available" in status.vector_store.reason
            assert "using PostgreSQL full-text only" in status.vector_store.reason
            mem.add("k1", "the deploy runs on Kubernetes")
            [found] = mem.retrieve("k1", "how do we deploy?")
            assert found.memory.content == "the deploy runs on Kubernetes"
    finally:
        postgres.drop_database(url)
