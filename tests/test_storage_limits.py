"""A full database loses nothing acknowledged and still lets an admin free space; the work
one key can cause is bounded (summaries, facts per message, memories per key).

A database size limit (`PRAGMA max_page_count`) makes SQLite answer SQLITE_FULL exactly as
a full disk does; the tests set it on the writer connection of a running `Memory`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import httpx
import openai
import pytest
from clocks import ManualClock
from error_shape import assert_error
from memories import open_memory
from servers import ADMIN, AUTH, JSON_LINES, LiveServer, ScriptedUpstream, management_api
from storage import open_parts, rows

from memroute import Memory
from memroute.clock import to_iso
from memroute.config import Config
from memroute.errors import StorageFull
from memroute.models.owners import owner_of
from memroute.models.results import ExtractionQueue
from memroute.models.wire import to_wire
from memroute.store import NewMemory, SqliteStore
from memroute.web.app import create_app

UNLIMITED = 1073741823


def _fill(mem: Memory, writer: apsw.Connection) -> None:
    """Let the file grow no more, then add small memories until not one more fits."""
    pages = writer.execute("PRAGMA page_count").fetchone()[0]  # type: ignore[index]
    writer.execute(f"PRAGMA max_page_count = {pages}")
    for n in range(5000):
        try:
            mem.add("filler", f"filler memory number {n}")
        except StorageFull:
            return
    raise AssertionError("the database never filled up")


def _fill_to_the_last_byte(writer: apsw.Connection) -> None:
    """Let the file grow no more, then fill every free byte of it with ballast rows."""
    writer.execute("CREATE TABLE IF NOT EXISTS ballast (b BLOB)")
    pages = writer.execute("PRAGMA page_count").fetchone()[0]  # type: ignore[index]
    writer.execute(f"PRAGMA max_page_count = {pages}")
    size = 4096
    while size >= 1:
        try:
            writer.execute("INSERT INTO ballast VALUES (randomblob(?))", (size,))
        except apsw.FullError:
            size //= 2


@contextmanager
def _full(config: Config, *, start_workers: bool = False) -> Iterator[tuple[Memory, apsw.Connection]]:
    mem, parts = open_parts(config, start_workers=start_workers)
    try:
        yield mem, parts.store.db._writer
    finally:
        mem.close()


def _until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _chat_config(db: Path, upstream: ScriptedUpstream, **extra: str) -> Config:
    env = {"MEMROUTE_UPSTREAM_BASE_URL": upstream.url + "/v1", "MEMROUTE_ADMIN_TOKEN": ADMIN, **extra}  # type: ignore[attr-defined]
    return Config.for_path(db, environ=env)


# --- a full database -----------------------------------------------------------------------


def test_a_fact_queued_while_the_database_is_full_is_stored_once_space_returns(
    tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    # One failed attempt would be the job's last: only a full database may not count as one.
    config = _chat_config(tmp_path / "m.db", upstream, MEMROUTE_EXTRACTION_MAX_ATTEMPTS="1")
    mem, parts = open_parts(config)  # the worker starts once the database is full
    key, secret = mem.keys.create("k")
    mem.update_settings(enabled=True, captureTurns="all")  # the reply is queued too
    writer = parts.store.db._writer
    try:
        with LiveServer(create_app(config, memory=mem)) as server:
            client = openai.OpenAI(base_url=server.url + "/v1", api_key=secret, max_retries=0)
            reply = client.chat.completions.create(
                model="echo-1", messages=[{"role": "user", "content": "I prefer light mode."}]
            )
            assert reply.choices[0].message.content == "I prefer light mode."
            # The turn and its reply are queued: acknowledged.
            _until(lambda: mem.extraction_queue() == ExtractionQueue(pending=2, failed=0))
            _fill(mem, writer)
            parts.extraction.start()
            parts.extraction.notify()
            assert mem.wait_for_extraction(timeout=1.5) is False  # it cannot store the fact yet
            assert mem.extraction_queue() == ExtractionQueue(pending=2, failed=0)
            assert rows(mem, "SELECT attempts, last_error FROM extraction_jobs") == [(0, None)] * 2
            status = httpx.get(server.url + "/api/memory/engine-status", headers=AUTH).json()
            assert status["storage"]["writable"] is False
            assert status["extractionQueue"] == {"pending": 2, "failed": 0}

            writer.execute(f"PRAGMA max_page_count = {UNLIMITED}")  # space returns
            assert mem.wait_for_extraction(timeout=10) is True
            # The fact and the turn; the echoed reply has the turn's words and is kept once.
            assert {m.content for m in mem.list(key.id).items} == {
                "prefers light mode",
                "I prefer light mode.",
            }
            assert mem.extraction_queue() == ExtractionQueue(pending=0, failed=0)
            status = httpx.get(server.url + "/api/memory/engine-status", headers=AUTH).json()
            assert status["storage"]["writable"] is True
    finally:
        mem.close()


def test_a_chat_answered_while_the_database_is_full_is_learned_once_space_returns(
    tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    config = _chat_config(tmp_path / "m.db", upstream)
    mem, parts = open_parts(config)  # the worker starts once space has returned
    key, secret = mem.keys.create("k")
    mem.update_settings(enabled=True, captureTurns="all")  # the reply is queued too
    writer = parts.store.db._writer
    try:
        with LiveServer(create_app(config, memory=mem)) as server:
            _fill_to_the_last_byte(writer)
            client = openai.OpenAI(base_url=server.url + "/v1", api_key=secret, max_retries=0)
            # A turn longer than a page: queueing it needs pages the file no longer has.
            said = "I prefer dark mode. " + "Here is the log of what happened today. " * 300
            reply = client.chat.completions.create(
                model="echo-1", messages=[{"role": "user", "content": said}]
            )
            assert reply.choices[0].message.content == said  # the chat goes on
            # No room to queue the turn and its reply: they are held, and counted as pending.
            assert rows(mem, "SELECT count(*) FROM extraction_jobs") == [(0,)]
            assert mem.extraction_queue() == ExtractionQueue(pending=2, failed=0)
            status = httpx.get(server.url + "/api/memory/engine-status", headers=AUTH).json()
            assert status["extractionQueue"] == {"pending": 2, "failed": 0}
            writer.execute(f"PRAGMA max_page_count = {UNLIMITED}")  # space returns
            parts.extraction.start()
            parts.extraction.notify()
            _until(lambda: mem.get_by_key(key.id, "preference:dark_mode") is not None)
            assert mem.wait_for_extraction(10)
            assert mem.extraction_queue() == ExtractionQueue(pending=0, failed=0)
            learned = mem.list(key.id, limit=100).items
            assert [m.content for m in learned if not m.key.startswith("turn:")] == ["prefers dark mode"]
            chunks = sorted(
                (m for m in learned if m.key.startswith("turn:")), key=lambda m: m.metadata["chunk"]
            )
            # The turn in chunks (its repeated sentences kept once).
            assert chunks[0].content.startswith("I prefer dark mode.") and all(
                m.content in said for m in chunks
            )
            assert mem.extraction_queue() == ExtractionQueue(pending=0, failed=0)
    finally:
        mem.close()


def test_deletes_and_a_dashboard_login_work_while_the_database_is_full(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    config = Config.for_path(db, environ={"MEMROUTE_ADMIN_TOKEN": ADMIN})
    with _full(config) as (mem, writer):
        kept = mem.add("key-a", "prefers dark mode", key="preference:dark_mode")
        doomed = [mem.add("key-a", f"old note {n}: " + "words " * 40).id for n in range(30)]
        big = mem.add("key-a", "a long note " * 5000).id
        _fill(mem, writer)
        with LiveServer(create_app(config, memory=mem)) as server:
            api = httpx.Client(base_url=server.url, headers=AUTH, timeout=30)
            large = {"apiKeyId": "key-a", "content": "a new note " * 2000}
            assert_error(api.post("/api/memory", json=large), 507)

            login = httpx.post(server.url + "/api/session", json={"token": ADMIN}, timeout=30)
            assert login.status_code == 200 and login.json()["authenticated"] is True
            cookie = {"memroute_session": login.cookies["memroute_session"]}
            assert httpx.get(server.url + "/api/session", cookies=cookie).json()["authenticated"] is True

            for memory_id in [*doomed, big]:  # small and large deletes alike
                assert api.delete(f"/api/memory/{memory_id}").status_code == 200
                assert api.get(f"/api/memory/{memory_id}").status_code == 404
            # The freed space takes new memories again; nothing else was touched.
            assert api.post("/api/memory", json={**large, "content": "prefers tea"}).status_code == 200
            assert api.get(f"/api/memory/{kept.id}").json()["memory"]["content"] == "prefers dark mode"
            assert mem.history(big)[-1].event == "DELETE"
            logout = httpx.delete(server.url + "/api/session", cookies=cookie)
            assert logout.status_code == 200
            assert httpx.get(server.url + "/api/session", cookies=cookie).json()["authenticated"] is False
            api.close()
    with open_memory(db) as check:
        assert rows(check, "PRAGMA integrity_check") == [("ok",)]
        assert {m.content for m in check.list("key-a").items} == {"prefers dark mode", "prefers tea"}


def test_the_storage_status_stays_full_after_a_small_write_that_fits(tmp_path: Path) -> None:
    with _full(Config.for_path(tmp_path / "m.db", environ={})) as (mem, writer):
        mem.add("key-a", "prefers dark mode")
        _fill(mem, writer)
        assert mem.engine_status().storage.writable is False
        # Recording that a memory was used rewrites a row in place: it proves no free space.
        assert mem.retrieve("key-a", "dark mode", strategy="exact", record_access=True)
        assert rows(mem, "SELECT access_count FROM memories WHERE api_key_id = 'key-a'") == [(1,)]
        storage = mem.engine_status().storage
        assert storage.writable is False and "full" in storage.reason
        writer.execute(f"PRAGMA max_page_count = {UNLIMITED}")
        mem.add("key-a", "prefers tea " * 2000)  # grows the file
        assert mem.engine_status().storage.writable is True


# --- bounded summaries ---------------------------------------------------------------------


def test_summarising_thousands_of_memories_writes_bounded_summaries_and_loses_none(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    config = Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_MAX_CONTENT_BYTES": "4096"})
    count = 2000
    with open_memory(config=config, clock=clock) as mem:
        store: SqliteStore = mem._store
        with store.db.write():
            for n in range(count):
                content = f"note {n}: the build of service {n} uses cache layer {n % 17}."
                new = NewMemory(api_key_id="key-a", content=content, key=f"note:{n}")
                store.memories.upsert(new, now=to_iso(clock()), actor="api")
        long_one = mem.add("key-a", "One very long sentence " + "word " * 780 + "ends here.").id
        other = mem.add("key-b", "key b's note")
        clock.advance(days=40)
        report = mem.summarize(30, api_key_id="key-a")

        assert report.candidate_count == count + 1 and report.deleted_count == count + 1
        assert len(report.candidates) == 100  # the report lists a bounded preview
        assert len(json.dumps(to_wire(report))) < 100_000
        assert len(report.summaries) > 1 and report.summary_id is None
        covered: list[str] = []
        texts = []
        for written in report.summaries:
            summary = mem.get(written.summary_id)
            assert summary is not None and summary.api_key_id == "key-a"
            assert len(summary.content.encode()) <= 4096  # within the content limit
            ids = summary.metadata["summarizedIds"]
            assert len(ids) == written.count <= 100
            covered += ids
            texts.append(summary.content)
        assert len(covered) == len(set(covered)) == count + 1  # each memory in exactly one summary
        everything = "\n".join(texts)
        for n in range(0, count, 97):
            assert f"note {n}: the build of service {n} uses cache layer {n % 17}." in everything
        assert "One very long sentence word" in everything and long_one in covered
        assert mem.list("key-a").total == len(report.summaries)
        assert mem.get(other.id) is not None


# --- facts per message, memories per key ---------------------------------------------------


def test_one_message_stores_at_most_the_facts_per_message_limit(tmp_path: Path) -> None:
    config = Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_MAX_FACTS_PER_MESSAGE": "5"})
    with open_memory(config=config) as mem:
        text = " ".join(f"I like tool{n}." for n in range(12))
        stored = mem.remember("key-a", text)
        assert sorted(m.key for m in stored) == sorted(f"preference:tool{n}" for n in range(7, 12))
        assert mem.list("key-a").total == 5
        statements = " ".join(f"I love lang{n}." for n in range(9))
        mem.enqueue_extractions("key-a", [(statements, "user_message")])
        assert mem.wait_for_extraction(5)
        assert mem.list("key-a").total == 10
        limits = mem.engine_status().storage.limits
        assert (limits.max_facts_per_message, limits.facts_dropped) == (5, 7 + 4)


def test_a_key_at_its_cap_refuses_adds_and_makes_room_for_learned_facts(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with management_api(db, MEMROUTE_MAX_MEMORIES_PER_KEY="20") as api:
        ids = [
            api.post("/api/memory", json={"apiKeyId": "key-a", "content": content}).json()["memory"]["id"]
            for content in ["uses vim every day"] + [f"note {n}" for n in range(1, 20)]
        ]
        refused = api.post("/api/memory", json={"apiKeyId": "key-a", "content": "one too many"})
        error = assert_error(refused, 409)
        assert "MEMROUTE_MAX_MEMORIES_PER_KEY" in error["message"]
        assert api.get("/api/memory", params={"apiKeyId": "key-a"}).json()["total"] == 20
        # Another key is not affected, and replacing by key never counts against the cap.
        assert api.post("/api/memory", json={"apiKeyId": "key-b", "content": "fine"}).status_code == 200
        keyed = {"apiKeyId": "key-a", "content": "prefers tea", "key": "preference:drink"}
        api.delete(f"/api/memory/{ids[-1]}")
        assert api.post("/api/memory", json=keyed).status_code == 200
        assert api.post("/api/memory", json={**keyed, "content": "prefers coffee"}).status_code == 200
        storage = api.get("/api/memory/engine-status").json()["storage"]
        assert storage["limits"] == {
            "maxFactsPerMessage": 20,
            "factsDropped": 0,
            "maxMemoriesPerKey": 20,
            "evicted": 0,
            "refused": 1,
        }
    config = Config.for_path(db, environ={"MEMROUTE_MAX_MEMORIES_PER_KEY": "20"})
    with open_memory(config=config) as mem:
        used = mem.get(ids[0])
        mem.record_access_later([ids[0]])  # injected into a chat once
        stored = mem.remember("key-a", "I like Rust. I prefer short answers.")  # a chat never fails
        assert {m.content for m in stored} == {"likes Rust", "prefers short answers"}
        remaining = {m.id for m in mem.list("key-a", limit=100).items}
        assert len(remaining) <= 20
        assert used is not None and used.id in remaining  # a memory in use is kept
        evicted = [i for i in ids[:-1] if i not in remaining]
        assert evicted and mem.history(evicted[0])[-1].actor == "evict"
        assert mem.engine_status().storage.limits.evicted == len(evicted)
        drink = mem.get_by_key("key-a", "preference:drink")
        assert drink is not None and drink.content == "prefers coffee"


def test_a_keys_end_users_share_its_cap(tmp_path: Path) -> None:
    """One key cannot hold more than its cap by naming new end users: they count with it,
    and a chat of one makes room among all of the key's memories."""
    with management_api(tmp_path / "m.db", MEMROUTE_MAX_MEMORIES_PER_KEY="4") as api:
        for n, user in enumerate(("", "ana", "ben", "cid")):
            made = api.post("/api/memory", json={"apiKeyId": "key-a", "userId": user, "content": f"note {n}"})
            assert made.status_code == 200
        refused = api.post("/api/memory", json={"apiKeyId": "key-a", "userId": "dan", "content": "one more"})
        assert "MEMROUTE_MAX_MEMORIES_PER_KEY" in assert_error(refused, 409)["message"]
        assert (
            api.post("/api/memory", json={"apiKeyId": "key-b", "userId": "dan", "content": "ok"}).status_code
            == 200
        )
    config = Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_MAX_MEMORIES_PER_KEY": "4"})
    with open_memory(config=config) as mem:
        stored = mem.remember(owner_of("key-a", "eve"), "I like Rust.")  # a chat never fails
        assert [m.content for m in stored] == ["likes Rust"]
        assert mem.list("key-a", limit=100).total <= 4  # the key and all its users
        assert mem.engine_status().storage.limits.evicted >= 1


def test_an_import_over_a_keys_cap_stores_up_to_the_cap_and_reports_the_rest(tmp_path: Path) -> None:
    with management_api(tmp_path / "m.db", MEMROUTE_MAX_MEMORIES_PER_KEY="3") as api:
        lines = "".join(json.dumps({"apiKeyId": "key-a", "content": f"note {n}"}) + "\n" for n in range(5))
        report = api.post("/api/memory/import", headers=JSON_LINES, content=lines).json()
        assert report["imported"] == 3
        assert [e["line"] for e in report["errors"]] == [4, 5]
        assert all("MEMROUTE_MAX_MEMORIES_PER_KEY" in e["error"] for e in report["errors"])
        assert api.get("/api/memory", params={"apiKeyId": "key-a"}).json()["total"] == 3


def test_the_limits_are_settings(tmp_path: Path) -> None:
    config = Config.for_path(tmp_path / "m.db", environ={})
    assert (config.max_facts_per_message, config.max_memories_per_key) == (20, 20_000)
    with pytest.raises(Exception, match="MEMROUTE_MAX_FACTS_PER_MESSAGE"):
        Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_MAX_FACTS_PER_MESSAGE": "0"})
    unlimited = Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_MAX_MEMORIES_PER_KEY": "0"})
    assert unlimited.max_memories_per_key == 0
