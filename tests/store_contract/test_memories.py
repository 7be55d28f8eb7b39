"""Memories, their history and their keyword search: the same on both stores."""

from __future__ import annotations

import pytest

from memroute.errors import Conflict
from memroute.models.owners import owner_of
from memroute.models.records import MemoryFilter
from memroute.store import NewMemory, Store

NOW = "2026-12-05T10:00:00.000Z"
LATER = "2026-12-05T11:00:00.000Z"


def _add(store: Store, owner: str, content: str, key: str = "", **more: object) -> str:
    memory, created = store.memories.upsert(
        NewMemory(api_key_id=owner, content=content, key=key, **more),  # type: ignore[arg-type]
        now=NOW,
        actor="test",
    )
    assert created
    return memory.id


def test_a_memory_reads_back_as_written_with_its_history(store: Store) -> None:
    memory_id = _add(store, "k1", "Priya is vegetarian", key="profile:diet", metadata={"speaker": "Priya"})
    got = store.memories.get(memory_id)
    assert got is not None
    assert (got.api_key_id, got.content, got.key, got.metadata) == (
        "k1",
        "Priya is vegetarian",
        "profile:diet",
        {"speaker": "Priya"},
    )
    updated = store.memories.update(memory_id, {"content": "Priya is vegan"}, now=LATER, actor="test")
    assert updated is not None and updated.content == "Priya is vegan" and updated.updated_at == LATER
    store.memories.delete(memory_id, now=LATER, actor="test")
    assert store.memories.get(memory_id) is None
    events = [(h.event, h.old_content, h.new_content) for h in store.memories.history(memory_id)]
    assert events == [
        ("ADD", None, "Priya is vegetarian"),
        ("UPDATE", "Priya is vegetarian", "Priya is vegan"),
        ("DELETE", "Priya is vegan", None),
    ]
    added = store.memories.history(memory_id)[0]
    assert (added.memory_id, added.old_key, added.new_key, added.at, added.actor) == (
        memory_id,
        None,
        "profile:diet",
        NOW,
        "test",
    )


def test_a_captured_turns_add_entry_leaves_its_text_out_of_the_history(store: Store) -> None:
    """A kept chat turn is the memory itself; its history says when it came, not again what."""
    turn = store.memories.insert(
        NewMemory(api_key_id="k1", content="We hiked the ridge on Sunday", key="turn:abc"),
        now=NOW,
        actor="capture",
        text_in_history=False,
    )
    entries = [
        (h.event, h.old_content, h.new_content, h.new_key, h.actor) for h in store.memories.history(turn.id)
    ]
    assert entries == [("ADD", None, None, "turn:abc", "capture")]
    assert store.memories.get(turn.id).content == "We hiked the ridge on Sunday"  # type: ignore[union-attr]


def test_an_upsert_by_key_replaces_the_owners_memory_and_keeps_its_id(store: Store) -> None:
    first = _add(store, "k1", "lives in Paris", key="profile:city")
    again, created = store.memories.upsert(
        NewMemory(api_key_id="k1", content="lives in Lyon", key="profile:city"), now=LATER, actor="test"
    )
    assert not created and again.id == first
    assert store.memories.get_by_key("k1", "profile:city").content == "lives in Lyon"  # type: ignore[union-attr]
    other = _add(store, "k2", "lives in Rome", key="profile:city")  # another owner: its own row
    assert other != first
    assert store.memories.count_owner("k1") == 1


def test_a_key_another_memory_of_the_owner_uses_is_refused(store: Store) -> None:
    _add(store, "k1", "likes tea", key="a")
    second = _add(store, "k1", "likes coffee", key="b")
    with pytest.raises(Conflict):
        store.memories.update(second, {"key": "a"}, now=LATER, actor="test")
    assert store.memories.get(second).key == "b"  # type: ignore[union-attr]


def test_keyword_search_sees_only_the_owners_memories(store: Store) -> None:
    _add(store, "k1", "the deploy runs on Kubernetes")
    _add(store, "k2", "the deploy runs on Nomad")
    _add(store, owner_of("k1", "alice"), "alice deploys with Kubernetes too")
    found = store.memories.keyword_search(MemoryFilter("k1", NOW), "how does the deploy run?", limit=10)
    assert [m.content for m, _ in found] == ["the deploy runs on Kubernetes"]
    everyone = store.memories.keyword_search(
        MemoryFilter(None, NOW, admin_view=False), "deploy Kubernetes", limit=10
    )
    # A key's global read: every key's own memories, never an end user's.
    assert sorted(m.api_key_id for m, _ in everyone) == ["k1", "k2"]


def test_keyword_search_ranks_the_better_match_first(store: Store) -> None:
    _add(store, "k1", "a long note on gardening, cooking, travel, music, and one deadline somewhere in it")
    _add(store, "k1", "the project deadline is Friday and the deadline is firm")
    _add(store, "k1", "the garden needs water")
    found = store.memories.keyword_search(MemoryFilter("k1", NOW), "when is the deadline?", limit=10)
    assert [m.content for m, _ in found] == [
        "the project deadline is Friday and the deadline is firm",
        "a long note on gardening, cooking, travel, music, and one deadline somewhere in it",
    ]
    assert found[0][1] < found[1][1]  # a rank: lower is better


def test_an_expired_memory_is_never_found(store: Store) -> None:
    _add(store, "k1", "the door code is 4711", expires_at="2026-12-05T09:00:00.000Z")
    _add(store, "k1", "the door code changes monthly")
    flt = MemoryFilter("k1", NOW)
    assert [m.content for m, _ in store.memories.keyword_search(flt, "door code", limit=10)] == [
        "the door code changes monthly"
    ]
    assert [m.content for m in store.memories.recent(flt, limit=10)] == ["the door code changes monthly"]


def test_a_page_lists_a_key_with_or_without_its_end_users(store: Store) -> None:
    _add(store, "k1", "key's own")
    _add(store, owner_of("k1", "bob"), "bob's")
    _add(store, "k10", "a key whose id starts like k1's")
    own, total, _ = store.memories.page(
        api_key_id="k1", type=None, session_id=None, q=None, limit=10, offset=0
    )
    assert [m.content for m in own] == ["key's own"] and total == 1
    family, total, _ = store.memories.page(
        api_key_id="k1", type=None, session_id=None, q=None, limit=10, offset=0, user_id=None
    )
    assert sorted(m.content for m in family) == ["bob's", "key's own"] and total == 2
    bobs, _, _ = store.memories.page(
        api_key_id=None, type=None, session_id=None, q="BOB", limit=10, offset=0, user_id="bob"
    )
    assert [m.content for m in bobs] == ["bob's"]


def test_a_failed_transaction_leaves_nothing_behind(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        _add(store, "k1", "written, then rolled back")
        raise RuntimeError("boom")
    assert store.memories.count_owner("k1") == 0
    assert store.memories.keyword_search(MemoryFilter("k1", NOW), "rolled back", limit=5) == []


def test_a_failed_nested_write_rolls_back_alone(store: Store) -> None:
    with store.transaction():
        kept = _add(store, "k1", "kept")
        with pytest.raises(RuntimeError), store.transaction():
            _add(store, "k1", "dropped")
            raise RuntimeError("boom")
        assert store.memories.get(kept) is not None  # reads inside see the transaction's writes
    assert [m.content for m in store.memories.recent(MemoryFilter("k1", NOW), limit=5)] == ["kept"]


def test_after_commit_runs_once_committed_and_never_on_rollback(store: Store) -> None:
    ran: list[str] = []
    with store.transaction():
        store.after_commit(lambda: ran.append("committed"))
        assert ran == []
    with pytest.raises(RuntimeError), store.transaction():
        store.after_commit(lambda: ran.append("rolled back"))
        raise RuntimeError("boom")
    store.after_commit(lambda: ran.append("outside"))
    assert ran == ["committed", "outside"]


def test_access_counts_add_up(store: Store) -> None:
    memory_id = _add(store, "k1", "used often")
    store.memories.record_access_counts({memory_id: 2}, now=LATER)
    store.memories.record_access([memory_id], now=LATER)
    got = store.memories.get(memory_id)
    assert got is not None and (got.access_count, got.last_accessed_at) == (3, LATER)


def test_the_least_valuable_are_the_least_used_and_never_summaries(store: Store) -> None:
    used = _add(store, "k1", "used")
    idle = _add(store, "k1", "idle")
    _add(store, "k1", "a summary", key="summary:x")
    # Only what summarising writes is a summary (its keys start "summary:", as
    # `is_summary` reads them), on both stores alike.
    named = _add(store, "k1", "a key the user chose", key="Summary:notes")
    store.memories.record_access([used], now=LATER)
    assert store.memories.least_valuable("k1", limit=5) == [idle, named, used]


def test_every_memory_is_listed_once_in_insertion_order(store: Store) -> None:
    ids = [_add(store, "k1", f"memory {i}") for i in range(7)]
    assert [m.id for m in store.memories.iter_all("k1", batch=3)] == ids
    assert [m.id for m in store.memories.iter_all(None, batch=2)] == ids
