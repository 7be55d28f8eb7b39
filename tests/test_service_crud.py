"""The library CRUD API of `Memory` (SPEC §2, §14, §15; REF §2, §14 store/route/stats
tests): upsert, get/update/delete, history, list, stats and the read cache, input
validation, export/import. Real SQLite files under tmp_path, nothing patched."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import apsw
import pytest
from clocks import ManualClock
from memories import open_memory
from storage import scalar

from memroute import Conflict, InvalidInput, Memory, NotFound
from memroute.config import Config
from memroute.models.results import VerifyReport
from memroute.models.wire import to_wire

EXPORT_FIELDS = {
    "id", "apiKeyId", "userId", "sessionId", "type", "key", "content", "metadata",
    "createdAt", "updatedAt", "expiresAt", "accessCount", "lastAccessedAt", "provenance",
}  # fmt: skip


def _scalar(db_path: Path, sql: str, params: tuple[Any, ...] = ()) -> Any:
    con = apsw.Connection(str(db_path))
    try:
        con.set_busy_timeout(10_000)
        return con.execute(sql, params).fetchone()[0]
    finally:
        con.close()


def _counts(db_path: Path) -> tuple[int, int, int]:
    """(memories rows, FTS documents, history rows)."""
    return (
        _scalar(db_path, "SELECT COUNT(*) FROM memories"),
        _scalar(db_path, "SELECT COUNT(*) FROM memory_fts_docsize"),
        _scalar(db_path, "SELECT COUNT(*) FROM memory_history"),
    )


@pytest.fixture
def mem(db_path: Path, clock: ManualClock) -> Iterator[Memory]:
    """A memory with the bundled model off: what keyword search finds is checked here (the
    vectors' side of adding, editing and deleting is checked in test_semantic.py)."""
    with open_memory(db_path, clock=clock, workers=True, model=False) as memory:
        yield memory


def _fts_ids(mem: Memory, owner: str, query: str) -> set[str]:
    items = mem.retrieve(owner, query=query, strategy="semantic", record_access=False)
    return {item.memory.id for item in items if item.tier == "fts5"}


def _contents(page: Any) -> list[str]:
    return [m.content for m in page.items]


# -- upsert ----------------------------------------------------------------------------------


def test_upsert_keeps_identity_and_updates_fields(mem: Memory, clock: ManualClock) -> None:
    first = mem.add(
        "k1", "uses vim", key="pref:editor", type="factual", session_id="s1",
        metadata={"source": "chat", "nested": {"x": 1}, "keep": "yes"},
    )  # fmt: skip
    clock.advance(days=2)
    second = mem.add(
        "k1", "uses helix now", key="pref:editor", type="semantic", session_id="s2",
        metadata={"nested": {"y": 2}, "extra": True}, expires_at="2026-12-31T00:00:00Z", actor="cli",
    )  # fmt: skip

    assert second.id == first.id
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    stored = mem.get(first.id)
    assert stored is not None
    assert to_wire(stored) == to_wire(second)
    assert stored.content == "uses helix now"
    assert stored.type == "semantic"
    assert stored.session_id == "s2"
    assert stored.expires_at == "2026-12-31T00:00:00.000Z"
    assert stored.created_at == first.created_at
    # Shallow merge: new top-level keys win whole, old ones stay.
    assert stored.metadata == {"source": "chat", "nested": {"y": 2}, "keep": "yes", "extra": True}
    assert mem.list("k1").total == 1

    history = mem.history(first.id)
    assert [(h.event, h.old_content, h.new_content, h.actor) for h in history] == [
        ("ADD", None, "uses vim", "api"),
        ("UPDATE", "uses vim", "uses helix now", "cli"),
    ]
    assert history[1].old_key == history[1].new_key == "pref:editor"
    # The overwritten words are no longer searchable, the new ones are.
    assert _fts_ids(mem, "k1", "vim") == set()
    assert _fts_ids(mem, "k1", "helix") == {first.id}


def test_upsert_with_non_null_expiry_works(mem: Memory) -> None:
    first = mem.add("k1", "trial ends soon", key="plan:trial", expires_at=datetime(2026, 9, 1, tzinfo=UTC))
    again = mem.add("k1", "trial extended", key="plan:trial", expires_at=datetime(2026, 10, 1, tzinfo=UTC))
    assert again.id == first.id
    assert mem.get(first.id).expires_at == "2026-10-01T00:00:00.000Z"  # type: ignore[union-attr]
    third = mem.add("k1", "trial extended again", key="plan:trial", expires_at=date(2026, 11, 1))
    assert third.id == first.id
    assert mem.get(first.id).expires_at == "2026-11-01T00:00:00.000Z"  # type: ignore[union-attr]


def test_same_key_for_two_api_keys_gives_two_memories(mem: Memory) -> None:
    a = mem.add("key-a", "likes TypeScript", key="preference:typescript")
    b = mem.add("key-b", "dislikes TypeScript", key="preference:typescript")
    assert a.id != b.id
    assert _contents(mem.list("key-a")) == ["likes TypeScript"]
    assert _contents(mem.list("key-b")) == ["dislikes TypeScript"]


def test_empty_key_always_inserts(mem: Memory) -> None:
    a = mem.add("k1", "drinks coffee")
    b = mem.add("k1", "drinks coffee")
    c = mem.add("k1", "drinks coffee", key="   ")  # a blank key is no key
    assert len({a.id, b.id, c.id}) == 3
    assert mem.list("k1").total == 3


def test_fifty_upserts_leave_exactly_one_row(mem: Memory, db_path: Path) -> None:
    ids = {mem.add("k1", f"version {i}", key="upsert:test").id for i in range(50)}
    assert len(ids) == 1
    assert _scalar(db_path, "SELECT COUNT(*) FROM memories WHERE api_key_id='k1' AND key='upsert:test'") == 1
    (only,) = ids
    assert mem.get(only).content == "version 49"  # type: ignore[union-attr]
    history = mem.history(only)
    assert [h.event for h in history] == ["ADD"] + ["UPDATE"] * 49
    assert [h.new_content for h in history] == [f"version {i}" for i in range(50)]


# -- get / update / delete --------------------------------------------------------------------


def test_crud_round_trip(mem: Memory, clock: ManualClock) -> None:
    created = mem.add(
        "k1", "prefers TypeScript", key="pref:ts", type="factual", session_id="s1",
        metadata={"source": "test", "n": 1, "tags": ["a", "b"]}, expires_at="2026-04-06T00:00:00.000Z",
    )  # fmt: skip
    got = mem.get(created.id)
    assert got is not None
    assert to_wire(got) == to_wire(created)
    assert got.expires_at == "2026-04-06T00:00:00.000Z"
    assert got.metadata == {"source": "test", "n": 1, "tags": ["a", "b"]}
    assert (got.api_key_id, got.session_id, got.key, got.type) == ("k1", "s1", "pref:ts", "factual")

    clock.advance(hours=1)
    updated = mem.update(
        created.id, type="episodic", key="pref:typescript", content="loves TypeScript",
        metadata={"edited": True}, expires_at=None, session_id="s9", actor="cli",
    )  # fmt: skip
    again = mem.get(created.id)
    assert again is not None
    assert to_wire(again) == to_wire(updated)
    assert (again.type, again.key, again.content) == ("episodic", "pref:typescript", "loves TypeScript")
    assert again.metadata == {"edited": True}  # update replaces metadata
    assert again.expires_at is None
    assert again.session_id == "s9"
    assert again.created_at == created.created_at
    assert again.updated_at > created.updated_at

    mem.update(created.id, expires_at="2027-01-01")
    assert mem.get(created.id).expires_at == "2027-01-01T00:00:00.000Z"  # type: ignore[union-attr]

    history = mem.history(created.id)
    assert [h.event for h in history] == ["ADD", "UPDATE"]
    change = history[1]
    assert (change.old_content, change.new_content) == ("prefers TypeScript", "loves TypeScript")
    assert (change.old_key, change.new_key, change.actor) == ("pref:ts", "pref:typescript", "cli")

    assert mem.delete(created.id) is True
    assert mem.get(created.id) is None
    assert mem.delete(created.id) is False


def test_update_to_a_key_taken_by_the_same_owner_conflicts(mem: Memory) -> None:
    a = mem.add("k1", "first", key="slot:a")
    b = mem.add("k1", "second", key="slot:b")
    mem.add("k2", "other owner", key="slot:c")
    with pytest.raises(Conflict):
        mem.update(b.id, key="slot:a", content="would clobber")
    assert mem.get(b.id).key == "slot:b"  # type: ignore[union-attr]
    assert mem.get(b.id).content == "second"  # type: ignore[union-attr]
    assert mem.get(a.id).content == "first"  # type: ignore[union-attr]
    # Another owner's key is no obstacle, and a memory may keep its own key.
    assert mem.update(b.id, key="slot:c").key == "slot:c"
    assert mem.update(a.id, key="slot:a", content="first, again").content == "first, again"


def test_update_or_get_of_a_missing_id(mem: Memory) -> None:
    with pytest.raises(NotFound):
        mem.update("missing-id", content="anything")
    assert mem.get("missing-id") is None
    assert mem.delete("missing-id") is False
    assert mem.list("unknown-key").items == []
    assert mem.list("unknown-key").total == 0


def test_delete_keeps_the_old_text_in_history(mem: Memory, db_path: Path) -> None:
    m = mem.add("k1", "the wifi router is in the hallway", key="secret:wifi")
    assert mem.delete(m.id, actor="mcp") is True
    history = mem.history(m.id)
    assert [h.event for h in history] == ["ADD", "DELETE"]
    assert history[1].old_content == "the wifi router is in the hallway"
    assert history[1].new_content is None
    assert history[1].old_key == "secret:wifi"
    assert history[1].actor == "mcp"
    assert _counts(db_path) == (0, 0, 2)


# -- list ----------------------------------------------------------------------------------------


@pytest.fixture
def listing(mem: Memory, clock: ManualClock) -> dict[str, str]:
    """key-a: 3 memories in two sessions and two types; key-b: 1; unowned: 1."""
    ids = {}
    for name, owner, content, key, type_, session in [
        ("mem-1", "key-a", "TypeScript is the main language", "typescript:guide", "factual", "s1"),
        ("mem-2", "key-a", "Went hiking on Sunday", "", "episodic", "s2"),
        ("mem-3", "key-a", "Lint with ruff before commit", "typescript:tooling", "semantic", "s1"),
        ("mem-4", "key-b", "TypeScript everywhere", "typescript:guide", "factual", "s1"),
        ("mem-5", "", "a dashboard note", "", "procedural", ""),
    ]:
        ids[name] = mem.add(owner, content, key=key, type=type_, session_id=session).id
        clock.tick()
    return ids


def test_list_filters_and_orders_newest_first(mem: Memory, listing: dict[str, str]) -> None:
    page = mem.list("key-a")
    assert [m.id for m in page.items] == [listing["mem-3"], listing["mem-2"], listing["mem-1"]]
    assert page.total == 3
    assert page.by_type == {"factual": 1, "episodic": 1, "semantic": 1}

    assert [m.id for m in mem.list("key-a", type="episodic").items] == [listing["mem-2"]]
    assert [m.id for m in mem.list("key-a", session_id="s1").items] == [listing["mem-3"], listing["mem-1"]]
    assert [m.id for m in mem.list(session_id="s1").items] == [
        listing["mem-4"], listing["mem-3"], listing["mem-1"],
    ]  # fmt: skip
    assert mem.list("key-b").total == 1
    # "" is the unowned bucket, never "every key".
    assert [m.id for m in mem.list("").items] == [listing["mem-5"]]
    assert mem.list().total == 5

    by_query = mem.list("key-a", q="typescript", limit=20, page=1)
    assert [m.key for m in by_query.items] == ["typescript:tooling", "typescript:guide"]
    assert by_query.total == 2
    assert by_query.by_type == {"factual": 1, "semantic": 1}


def test_list_query_is_case_insensitive_beyond_ascii(mem: Memory, clock: ManualClock) -> None:
    ecole = mem.add("k1", "Les enfants vont à l'école à pied")
    clock.tick()
    strasse = mem.add("k1", "Wohnt in der Hauptstraße")
    clock.tick()
    mem.add("k1", "nothing relevant here")

    for q in ("ÉCOLE", "école", "  École "):
        assert [m.id for m in mem.list("k1", q=q).items] == [ecole.id], q
    assert [m.id for m in mem.list("k1", q="HAUPTSTRASSE").items] == [strasse.id]
    assert mem.list("k1", q="ecole").total == 0  # accents are not ignored by the list filter


def test_list_query_wildcards_are_literal(mem: Memory, clock: ManualClock) -> None:
    percent = mem.add("k1", "I am 100% sure")
    clock.tick()
    mem.add("k1", "I am 100 percent sure")
    clock.tick()
    underscore = mem.add("k1", "variables use snake_case")
    clock.tick()
    mem.add("k1", "variables use snakeXcase")

    assert [m.id for m in mem.list("k1", q="%").items] == [percent.id]
    assert [m.id for m in mem.list("k1", q="100%").items] == [percent.id]
    assert [m.id for m in mem.list("k1", q="snake_case").items] == [underscore.id]
    assert [m.id for m in mem.list("k1", q="_").items] == [underscore.id]


def test_list_pagination(mem: Memory, clock: ManualClock) -> None:
    ids = {}
    for name in ("pg-1", "pg-2", "pg-3"):
        ids[name] = mem.add("k1", name).id
        clock.tick()

    assert _contents(mem.list("k1", limit=2, page=1)) == ["pg-3", "pg-2"]
    second = mem.list("k1", limit=2, page=2)
    assert _contents(second) == ["pg-1"]
    assert (second.page, second.limit, second.total, second.total_pages) == (2, 2, 3, 2)
    far = mem.list("k1", limit=2, page=99)
    assert far.items == []
    assert far.total == 3
    assert far.by_type == {"factual": 3}

    by_offset = mem.list("k1", limit=1, offset=1)
    assert _contents(by_offset) == ["pg-2"]
    assert (by_offset.page, by_offset.total) == (2, 3)
    assert _contents(mem.list("k1", limit=1, offset=1, page=3)) == ["pg-2"]  # offset wins
    assert mem.list("k1", limit=2, offset=2).page == 2
    assert _contents(mem.list("k1", offset=1)) == ["pg-2", "pg-1"]
    assert _contents(mem.list("k1", limit="1", page="3")) == ["pg-1"]  # query strings are fine
    assert mem.list("k1").limit == 50


@pytest.mark.parametrize(
    "paging",
    [
        {"limit": 0}, {"limit": 201}, {"limit": -1}, {"limit": "x"}, {"limit": 1.5}, {"limit": True},
        {"page": 0}, {"page": -3}, {"page": "two"}, {"page": False},
        {"offset": -1}, {"offset": "x"}, {"offset": True},
    ],
)  # fmt: skip
def test_list_rejects_bad_paging(mem: Memory, paging: dict[str, Any]) -> None:
    mem.add("k1", "something")
    with pytest.raises(InvalidInput):
        mem.list("k1", **paging)


def test_list_rejects_bad_filters(mem: Memory) -> None:
    with pytest.raises(InvalidInput):
        mem.list("k1", type="opinion")
    with pytest.raises(InvalidInput):
        mem.list("k1", q=["typescript"])  # type: ignore[arg-type]


# -- stats and the read cache -------------------------------------------------------------------------


def test_stats_tokens_and_types(mem: Memory) -> None:
    assert mem.stats().tokens_used == 0
    assert mem.stats().total == 0

    mem.add("key-a", "aaaa")  # 1
    mem.add("key-a", "aaaaaaaa", type="episodic")  # 2
    for part in ("hello,", "world!", "ab"):  # 2 + 2 + 1
        mem.add("key-b", part)
    mem.add("key-c", "Hello World")  # 11 chars -> 3
    mem.add("key-d", "héllo")  # counted in characters, not bytes -> 2

    assert mem.stats("key-a").tokens_used == 3
    assert mem.stats("key-b").tokens_used == 5
    assert mem.stats("key-c").tokens_used == 3
    assert mem.stats("key-d").tokens_used == 2
    assert mem.stats("nobody").tokens_used == 0
    assert mem.stats("nobody").total == 0

    everything = mem.stats()
    assert everything.tokens_used == 13
    assert everything.total == 7
    assert everything.by_type == {"factual": 6, "episodic": 1}
    assert to_wire(mem.stats("key-a"))["byType"] == {"factual": 1, "episodic": 1}
    assert to_wire(mem.stats("key-a"))["tokensUsed"] == 3


def test_hit_rate_counts_read_cache_hits(mem: Memory) -> None:
    m = mem.add("k1", "cached memory")
    assert mem.stats().hit_rate == 0.0
    assert mem.get(m.id) is not None  # miss, loads the cache
    assert mem.get(m.id) is not None  # hit
    stats = mem.stats()
    assert (stats.cache_hits, stats.cache_misses) == (1, 1)
    assert to_wire(stats)["hitRate"] == 0.5
    for _ in range(2):
        mem.get(m.id)
    assert mem.stats().hit_rate == 0.75


def test_write_through_another_memory_object_invalidates_the_cache(
    mem: Memory, db_path: Path, tmp_path: Path, clock: ManualClock
) -> None:
    m = mem.add("k1", "version one")
    assert mem.get(m.id).content == "version one"  # type: ignore[union-attr]
    assert mem.get(m.id).content == "version one"  # type: ignore[union-attr]  # served by the cache

    other = open_memory(db_path, clock=clock, workers=True)
    link = tmp_path / "via-link"
    os.symlink(tmp_path, link)
    third = open_memory(link / db_path.name, clock=clock, workers=True)  # the same file by another path
    try:
        other.update(m.id, content="version two")
        assert mem.get(m.id).content == "version two"  # type: ignore[union-attr]
        third.update(m.id, content="version three", metadata={"v": 3})
        got = mem.get(m.id)
        assert got is not None and (got.content, got.metadata) == ("version three", {"v": 3})
        other.add("k1", "version four", key="")  # unrelated insert does not disturb it
        assert other.delete(m.id) is True
        assert mem.get(m.id) is None
    finally:
        other.close()
        third.close()


def test_cached_record_cannot_be_mutated_by_the_caller(mem: Memory) -> None:
    m = mem.add("k1", "immutable", metadata={"a": 1})
    first = mem.get(m.id)
    assert first is not None
    first.metadata["a"] = 999
    first.content = "tampered"
    again = mem.get(m.id)
    assert again is not None and (again.content, again.metadata) == ("immutable", {"a": 1})


# -- bad input ------------------------------------------------------------------------------------------


BIG = 64 * 1024


@pytest.mark.parametrize(
    "kwargs",
    [
        {"type": "opinion"},
        {"type": "FACTUAL"},
        {"content": ""},
        {"content": "   \n\t "},
        {"content": None},
        {"content": 42},
        {"content": b"bytes"},
        {"content": ["list"]},
        {"content": "a" * (BIG + 1)},
        {"content": "é" * (BIG // 2 + 1)},  # 32769 characters, 65538 bytes
        {"content": "nul\x00inside"},
        {"expires_at": "not a date"},
        {"expires_at": "2026-13-01"},
        {"expires_at": "2026-02-30T00:00:00Z"},
        {"expires_at": 1767225600},
        {"expires_at": True},
        {"expires_at": ""},
        {"metadata": [1, 2]},
        {"metadata": "a string"},
        {"metadata": 7},
        {"metadata": {"when": object()}},
        {"key": 5},
        {"session_id": 5},
        {"api_key_id": 5},
    ],
    ids=lambda kw: f"{next(iter(kw))}={next(iter(kw.values()))!r:.20}",
)
def test_bad_input_on_add_writes_nothing(mem: Memory, db_path: Path, kwargs: dict[str, Any]) -> None:
    args: dict[str, Any] = {"api_key_id": "k1", "content": "a valid memory", "key": "k:bad"}
    args.update(kwargs)
    with pytest.raises(InvalidInput):
        mem.add(**args)
    assert _counts(db_path) == (0, 0, 0)
    assert mem.list().total == 0


def test_content_limit_counts_bytes(mem: Memory) -> None:
    assert len(mem.add("k1", "a" * BIG).content) == BIG
    assert len(mem.add("k1", "é" * (BIG // 2)).content) == BIG // 2


@pytest.mark.parametrize(
    "changes",
    [
        {"content": ""},
        {"content": "x" * (BIG + 1)},
        {"type": "opinion"},
        {"metadata": ["not", "a", "dict"]},
        {"expires_at": "yesterday-ish"},
        {"key": 12},
        {"session_id": {"nested": 1}},
    ],
    ids=lambda kw: next(iter(kw)),
)
def test_bad_input_on_update_changes_nothing(mem: Memory, db_path: Path, changes: dict[str, Any]) -> None:
    m = mem.add("k1", "stays intact", key="k:keep", metadata={"v": 1}, expires_at="2026-12-01")
    before = (_counts(db_path), mem.get(m.id))
    with pytest.raises(InvalidInput):  # a valid field next to a bad one must not land either
        mem.update(m.id, **{"content": "valid but must not land", **changes})
    assert (_counts(db_path), mem.get(m.id)) == before
    assert _fts_ids(mem, "k1", "intact") == {m.id}
    assert _fts_ids(mem, "k1", "land") == set()


def test_custom_content_limit_from_config(db_path: Path, clock: ManualClock) -> None:
    cfg = Config.for_path(db_path, environ={"MEMROUTE_MAX_CONTENT_BYTES": "100"})
    with open_memory(db_path, config=cfg, clock=clock, workers=True) as small:
        ok = small.add("k1", "a" * 100)
        for too_big in ("a" * 101, "é" * 51):
            with pytest.raises(InvalidInput):
                small.add("k1", too_big)
        with pytest.raises(InvalidInput):
            small.update(ok.id, content="b" * 101)
        report = small.import_([json.dumps({"apiKeyId": "k1", "content": "c" * 101})])
        assert (report.imported, [e.line for e in report.errors]) == (0, [1])
        assert small.get(ok.id).content == "a" * 100  # type: ignore[union-attr]
    assert _counts(db_path) == (1, 1, 1)


# -- export / import --------------------------------------------------------------------------------------


def _seed_for_export(mem: Memory, clock: ManualClock) -> list[str]:
    ids = [
        mem.add("key-a", "prefers dark mode", key="pref:theme", session_id="s1",
                metadata={"source": "user_message"}, expires_at="2027-01-01T00:00:00Z").id,
        mem.add("key-a", "deploys on Fridays", type="procedural", key="habit:deploy").id,
        mem.add("key-b", "other key's memory", key="pref:theme").id,
    ]  # fmt: skip
    clock.advance(days=3)
    mem.update(ids[1], content="never deploys on Fridays")
    mem.retrieve("key-a", query="dark mode", strategy="semantic")  # bumps access counters
    return ids


def test_export_yields_camel_case_records_with_every_field(mem: Memory, clock: ManualClock) -> None:
    ids = _seed_for_export(mem, clock)
    exported = list(mem.export("key-a"))
    assert [e["id"] for e in exported] == ids[:2]
    for record in exported:
        assert set(record) == EXPORT_FIELDS
        assert record == to_wire(mem.get(record["id"]))
        json.dumps(record)  # JSONL-ready
    theme = exported[0]
    assert theme["apiKeyId"] == "key-a"
    assert theme["sessionId"] == "s1"
    assert theme["metadata"] == {"source": "user_message"}
    assert theme["expiresAt"] == "2027-01-01T00:00:00.000Z"
    assert theme["accessCount"] == 1
    assert theme["lastAccessedAt"] is not None
    assert exported[1]["createdAt"] < exported[1]["updatedAt"]
    assert {e["apiKeyId"] for e in mem.export()} == {"key-a", "key-b"}
    assert list(mem.export("nobody")) == []


def test_import_jsonl_and_dicts_reports_bad_lines(mem: Memory) -> None:
    lines = [
        json.dumps({"apiKeyId": "k1", "content": "likes green tea", "key": "pref:tea"}),
        "{not json",
        json.dumps({"apiKeyId": "k1", "type": "factual", "key": "no:content"}),
        json.dumps({"apiKeyId": "k1", "content": "bad type here", "type": "opinion"}),
        "",
        json.dumps({"apiKeyId": "k1", "content": "walks the dog at 7", "type": "procedural",
                    "sessionId": "s3", "metadata": {"source": "import"}}),
        json.dumps(["not", "an", "object"]),
    ]  # fmt: skip
    report = mem.import_(lines)
    assert report.imported == 2
    assert report.skipped == 0
    assert [e.line for e in report.errors] == [2, 3, 4, 7]
    messages = {e.line: e.error for e in report.errors}
    assert "JSON" in messages[2]
    assert "content" in messages[3]
    assert "type" in messages[4]
    assert to_wire(report)["imported"] == 2

    stored = {m.content: m for m in mem.list("k1").items}
    assert set(stored) == {"likes green tea", "walks the dog at 7"}
    dog = stored["walks the dog at 7"]
    assert (dog.type, dog.session_id, dog.metadata) == ("procedural", "s3", {"source": "import"})
    assert [h.actor for h in mem.history(dog.id)] == ["import"]

    from_dicts = mem.import_([
        {"apiKeyId": "k1", "content": "likes jasmine tea", "key": "pref:tea"},  # upsert
        {"apiKeyId": "k1", "content": "  "},
    ])  # fmt: skip
    assert (from_dicts.imported, [e.line for e in from_dicts.errors]) == (1, [2])
    tea = mem.list("k1", q="tea").items
    assert [m.content for m in tea] == ["likes jasmine tea"]
    assert [(h.event, h.old_content) for h in mem.history(tea[0].id)] == [
        ("ADD", None), ("UPDATE", "likes green tea"),
    ]  # fmt: skip


def test_reimporting_a_keyed_export_skips_everything(mem: Memory, clock: ManualClock, db_path: Path) -> None:
    _seed_for_export(mem, clock)
    exported = [json.dumps(r) for r in mem.export()]
    before = _counts(db_path)
    report = mem.import_(exported)
    assert (report.imported, report.skipped, report.errors) == (0, 3, [])
    assert _counts(db_path) == before


def test_reimporting_an_export_with_unkeyed_memories_skips_everything(
    mem: Memory, clock: ManualClock, db_path: Path
) -> None:
    _seed_for_export(mem, clock)
    mem.add("key-a", "a fact without a key")
    mem.add("key-b", "another fact without a key", type="episodic")
    exported = [json.dumps(r) for r in mem.export()]
    before = _counts(db_path)
    report = mem.import_(exported)
    assert (report.imported, report.skipped, report.errors) == (0, 5, [])
    assert _counts(db_path) == before
    assert mem.list("key-a").total == 3


def test_timestamps_survive_export_and_import_into_a_fresh_database(
    mem: Memory, clock: ManualClock, tmp_path: Path
) -> None:
    ids = _seed_for_export(mem, clock)
    mem.add("key-a", "keyless memory also travels", type="episodic", session_id="s7")
    original = {r["content"]: r for r in mem.export()}
    lines = [json.dumps(r) + "\n" for r in original.values()]

    later = ManualClock(datetime(2027, 3, 1, tzinfo=UTC))
    with open_memory(tmp_path / "fresh.db", clock=later, workers=True) as fresh:
        report = fresh.import_(lines)
        assert (report.imported, report.errors) == (4, [])
        copied = {r["content"]: r for r in fresh.export()}
    assert set(copied) == set(original)
    for content, before in original.items():
        after = copied[content]
        for field in (
            "apiKeyId",
            "sessionId",
            "type",
            "key",
            "metadata",
            "createdAt",
            "updatedAt",
            "expiresAt",
        ):
            assert after[field] == before[field], (content, field)
    assert ids  # the seeded memories were all part of the round trip


def test_import_with_an_owner_override(mem: Memory) -> None:
    lines = [
        json.dumps({"apiKeyId": "old-owner", "content": "one", "key": "n:1"}),
        json.dumps({"content": "two"}),
        {"api_key_id": "someone", "content": "three"},
    ]
    report = mem.import_(lines, api_key_id="new-owner")
    assert (report.imported, report.errors) == (3, [])
    assert sorted(_contents(mem.list("new-owner"))) == ["one", "three", "two"]
    assert mem.list("old-owner").total == 0
    assert mem.list("someone").total == 0
    assert mem.list("").total == 0


def test_import_reports_a_bad_timestamp_under_its_own_name(mem: Memory) -> None:
    report = mem.import_([
        json.dumps({"apiKeyId": "k1", "content": "x", "createdAt": "not-a-date"}),
        json.dumps({"apiKeyId": "k1", "content": "y", "updatedAt": "also-not-a-date"}),
        json.dumps({"apiKeyId": "k1", "content": "z", "expiresAt": "never"}),
    ])  # fmt: skip
    assert report.imported == 0
    errors = [e.error for e in report.errors]
    assert "createdAt" in errors[0]
    assert "updatedAt" in errors[1]
    assert "expiresAt" in errors[2]


def test_import_line_that_conflicts_is_reported_and_the_rest_still_imported(mem: Memory) -> None:
    tea = mem.add("k1", "likes tea", key="pref:drink")
    old_line = json.dumps(next(mem.export("k1")))
    mem.update(tea.id, key="pref:hot-drink")  # the exported key is freed ...
    coffee = mem.add("k1", "likes coffee", key="pref:drink")  # ... and taken by another memory

    report = mem.import_([
        old_line,  # would move `tea` back onto a key `coffee` now holds
        json.dumps({"apiKeyId": "k1", "content": "a good line after the conflict"}),
    ])  # fmt: skip
    assert report.imported == 1
    assert [e.line for e in report.errors] == [1]
    assert "pref:drink" in report.errors[0].error
    assert mem.get(coffee.id).content == "likes coffee"  # type: ignore[union-attr]
    assert mem.get(tea.id).key == "pref:hot-drink"  # type: ignore[union-attr]
    assert mem.list("k1", q="good line").total == 1


def test_the_health_probe_is_never_visible_to_other_readers(mem: Memory) -> None:
    # The probe runs in one write transaction that is rolled back: a list of every key,
    # taken while probes run, never shows the probe's memory, and nothing is left.

    mem.add("k1", "prefers vim", key="editor")
    stop = threading.Event()
    results: list[VerifyReport] = []

    def probe() -> None:
        while not stop.is_set():
            results.append(mem.verify())

    thread = threading.Thread(target=probe)
    thread.start()
    try:
        owners: set[str] = set()
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline or len(results) < 20:
            owners |= {m.api_key_id for m in mem.list(limit=200).items}
    finally:
        stop.set()
        thread.join()
    assert owners == {"k1"}
    assert results and all(r.working for r in results), results[-1]
    assert mem.stats().total == 1
    count = scalar(mem, "SELECT COUNT(*) FROM memory_history")
    assert count == 1  # the ADD of "prefers vim" only
