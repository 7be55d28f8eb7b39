"""Recall from the in-process index of a key (memroute/store/key_index.py): ranked with the
key's own statistics, never stale whoever wrote, and bounded in size."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from clocks import ManualClock
from held import held_on_another_thread
from memories import open_memory
from servers import wait_until
from storage import database, open_parts

from memroute import Memory
from memroute.config import Config
from memroute.errors import WouldBlock
from memroute.models.records import MemoryFilter, RetrievedItem
from memroute.store.changes import CHANGES_KEPT_S
from memroute.store.fts import BM25, match_expression
from memroute.store.key_index import (
    ADMIT_AFTER,
    BUSY_S,
    INLINE_BUILD_MAX,
    LIGHT_CATCH_UP,
    MEMORIES_PER_RECALL,
    IndexedReader,
    KeyIndex,
    KeyIndexes,
)
from memroute.store.memories import MemoryRepository

DATA = Path(__file__).parent.parent / "bench" / "quality"


def _open(
    path: Path, clock: ManualClock | None = None, *, held: int = 50_000, related: bool = True
) -> Memory:
    config = Config.for_path(path, {}).with_overrides(recall_index_memories=held, related_words=related)
    return open_memory(config=config, clock=clock, model=False)  # the key's index is what is checked


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def two(tmp_path: Path, clock: ManualClock) -> Iterator[tuple[Memory, Memory]]:
    """Two memories on one file, as two processes have (each its own connections and index);
    the question's words alone, so what matches is what holds them."""
    first, second = (
        _open(tmp_path / "m.db", clock, related=False),
        _open(tmp_path / "m.db", clock, related=False),
    )
    yield first, second
    second.close()
    first.close()


def _hot(mem: Memory, owner: str) -> None:
    """Recall `owner` as often as it takes to be indexed (the recalls before read SQL)."""
    for _ in range(ADMIT_AFTER):
        mem.retrieve(owner, "anything")


def _matches(mem: Memory, owner: str, query: str) -> list[str]:
    return [i.memory.content for i in mem.retrieve(owner, query, max_tokens=4000) if i.tier == "fts5"]


def test_another_keys_vocabulary_does_not_change_a_keys_ranking(tmp_path: Path, clock: ManualClock) -> None:
    alone, shared = tmp_path / "alone.db", tmp_path / "shared.db"
    own = [
        "the dentist moved my appointment to Friday",
        "my dentist recommends an electric toothbrush",
        "the dentist office is next to the bakery",
        "Lopez fixed the roof after the storm",
    ]
    for path in (alone, shared):
        with _open(path, clock) as mem:
            for text in own:
                mem.add("a", text)
                clock.tick()
    with _open(shared, clock) as mem:  # another tenant for whom "Lopez" is everywhere
        for n in range(300):
            mem.add("b", f"invoice {n} for Lopez and sons")
    query = "what did the dentist and Lopez say"
    with _open(alone, clock) as mem:
        _hot(mem, "a")
        ranking_alone = _matches(mem, "a", query)
    with _open(shared, clock) as mem:
        _hot(mem, "a")
        assert _matches(mem, "a", query) == ranking_alone
        # "Lopez" is rare among the key's own memories, so it counts for more than "dentist".
        assert ranking_alone[0] == "Lopez fixed the roof after the storm"
        # Read from SQL (no key held in process), the key's statistics rank it the same way;
        # FTS5's bm25() with the whole file's would put it last.
        with _open(shared, clock, held=0) as sql_only:
            assert _matches(sql_only, "a", query) == ranking_alone
            with database(shared) as store:
                expression = match_expression(query, "a")
                file_wide = store.db.read().execute(
                    f"SELECT m.content FROM memory_fts JOIN memories m ON m.rowid = memory_fts.rowid"
                    f" WHERE memory_fts MATCH ? ORDER BY {BM25}",
                    (expression,),
                )
                assert [r[0] for r in file_wide][-1] == "Lopez fixed the roof after the storm"


def test_irregular_forms_find_each_other_and_count_as_one_word(tmp_path: Path, clock: ManualClock) -> None:
    """ "run" finds "I ran a charity race", "meet" finds "I met my mentors", "children" finds
    "my child", from the key's index and from SQL alike; a memory holding two forms of
    one word is one word's match, not two."""
    path = tmp_path / "m.db"
    with _open(path, clock) as mem:
        for text in (
            "I ran a charity race for mental health last Saturday",
            "I met up with my friends, family and mentors",
            "my child starts school in September",
            "we run, we ran, we will run again",
            "the weather was lovely",
        ):
            mem.add("a", text)
            clock.tick()
    with _open(path, clock) as indexed, _open(path, clock, held=0) as sql_only:
        _hot(indexed, "a")
        for reader in (indexed, sql_only):
            assert set(_matches(reader, "a", "When did Melanie run a charity race?")) == {
                "I ran a charity race for mental health last Saturday",
                "we run, we ran, we will run again",
            }
            assert _matches(reader, "a", "When did she meet her mentors?") == [
                "I met up with my friends, family and mentors"
            ]
            assert _matches(reader, "a", "What about the children?") == [
                "my child starts school in September"
            ]
        assert [
            round(i.fts_score or 0, 6)
            for i in indexed.retrieve_preview("a", "run ran", strategy="semantic").items
        ] == [
            round(i.fts_score or 0, 6)
            for i in sql_only.retrieve_preview("a", "run ran", strategy="semantic").items
        ]
        # "run ran" is one word: asked twice, it weighs what "run" alone weighs.
        weight = indexed.retrieve_preview("a", "run", strategy="semantic").items
        twice = indexed.retrieve_preview("a", "run ran", strategy="semantic").items
        assert [(i.memory.id, round(i.fts_score or 0, 6)) for i in weight] == [
            (i.memory.id, round(i.fts_score or 0, 6)) for i in twice
        ]


def test_for_one_key_alone_the_ranking_is_the_fts_ranking(tmp_path: Path) -> None:
    """The question's words alone (related words are the index's own: test_related_words.py)."""
    path = tmp_path / "m.db"
    with _open(path) as mem:
        for line in (DATA / "memories.jsonl").read_text().splitlines():
            row = json.loads(line)
            mem.add("k", row["content"])
    queries = [json.loads(line)["query"] for line in (DATA / "queries.jsonl").read_text().splitlines()]
    with _open(path, related=False) as indexed, _open(path, held=0) as sql_only:
        for query in queries:
            got = indexed.retrieve_preview("k", query, strategy="semantic", limit=20)
            want = sql_only.retrieve_preview("k", query, strategy="semantic", limit=20)
            assert [round(i.fts_score or 0, 6) for i in got.items] == [
                round(i.fts_score or 0, 6) for i in want.items
            ], query
            assert {i.memory.id for i in got.items} == {i.memory.id for i in want.items} or _tied_at_the_cut(
                got.items, want.items
            ), query


def _tied_at_the_cut(got: list[RetrievedItem], want: list[RetrievedItem]) -> bool:
    """Whether the two lists differ only among matches tied with the last one taken."""
    last = want[-1].fts_score
    return {i.memory.id for i in got if i.fts_score != last} == {
        i.memory.id for i in want if i.fts_score != last
    }


def test_a_keyword_match_scores_the_share_of_the_question_it_answers(
    tmp_path: Path, clock: ManualClock
) -> None:
    with _open(tmp_path / "m.db", clock) as mem:
        mem.add("a", "Lopez fixed the roof after the storm")
        for n in range(30):
            mem.add("a", f"the storm warning number {n} came in overnight")
        _hot(mem, "a")
        flt = MemoryFilter(api_key_id="a", now="9999-01-01T00:00:00.000Z")
        reader = mem._key_indexes.reader(flt)
        query = "who fixed the roof after the storm"
        weight = reader.keyword_weight(flt, query)
        assert weight is not None
        shares = {m.content: -rank / weight for m, rank in reader.keyword_search(flt, query, limit=50)}
    # The one memory holding every searchable word answers about all of the question; one
    # holding only "storm", which most memories hold, answers almost none of it.
    assert shares["Lopez fixed the roof after the storm"] == pytest.approx(1.0, abs=0.25)
    assert max(v for k, v in shares.items() if k.startswith("the storm warning")) < 0.05


def test_a_key_read_from_sql_weighs_the_question_as_its_index_does(
    tmp_path: Path, clock: ManualClock
) -> None:
    # Hybrid scores a keyword match by the share of the question it answers; a key not held
    # in process gets the same share (its statistics, not the file's), so its ranking does
    # not change when it becomes busy enough to be indexed.
    path = tmp_path / "m.db"
    with _open(path, clock) as mem:
        mem.add("a", "Lopez fixed the roof after the storm")
        for n in range(30):
            mem.add("a", f"the storm warning number {n} came in overnight")
        for n in range(200):
            mem.add("b", f"invoice {n} for Lopez and sons")  # another tenant's "Lopez"
    flt = MemoryFilter(api_key_id="a", now="9999-01-01T00:00:00.000Z")
    query = "who fixed the roof after the storms, storming"  # "storms", "storming": one stem

    def weighed(reader: Any) -> tuple[float, list[str], list[float]]:
        matches = reader.keyword_search(flt, query, limit=50)
        weight = reader.keyword_weight(flt, query)
        assert weight is not None
        return weight, [m.content for m, _ in matches], [-rank / weight for _, rank in matches]

    with _open(path, clock) as mem:
        _hot(mem, "a")
        indexed = weighed(mem._key_indexes.reader(flt))
    with _open(path, clock, held=0) as mem:
        reader = mem._key_indexes.reader(flt)
        assert isinstance(reader, MemoryRepository)
        from_sql = weighed(reader)
    assert from_sql[0] == pytest.approx(indexed[0], rel=1e-9)  # the key's idf of each word
    assert from_sql[1] == indexed[1]
    # The shares differ only by the average length (the file's in SQL, the key's in process).
    assert from_sql[2] == pytest.approx(indexed[2], rel=0.1, abs=1e-3)
    assert from_sql[2][0] > 0.8  # "Lopez fixed the roof after the storm" answers it


def test_what_another_process_writes_is_recalled_at_once(
    two: tuple[Memory, Memory], clock: ManualClock
) -> None:
    reader, writer = two
    kept = writer.add("k", "prefers green tea in the morning")
    _hot(reader, "k")  # the index is built now
    assert _matches(reader, "k", "tea") == ["prefers green tea in the morning"]
    added = writer.add("k", "drinks tea with lemon after lunch")
    assert set(_matches(reader, "k", "tea")) == {kept.content, added.content}
    writer.update(kept.id, content="prefers black coffee in the morning")
    assert _matches(reader, "k", "tea") == [added.content]
    assert _matches(reader, "k", "coffee") == ["prefers black coffee in the morning"]
    writer.delete(added.id)
    assert _matches(reader, "k", "tea") == []
    soon = writer.add("k", "the tea tasting is on Sunday", expires_at="2026-06-01T13:00:00Z")
    assert _matches(reader, "k", "tea") == [soon.content]
    clock.advance(hours=2)
    assert _matches(reader, "k", "tea") == []  # expired: never recalled
    moved = writer.add("k", "tea for the session only", session_id="s1")
    assert [i.memory.id for i in reader.retrieve("k", "tea", scope="session", session_id="s1")] == [moved.id]
    assert [i.memory.id for i in reader.retrieve("k", "tea", scope="session", session_id="s2")] == []


def test_a_light_recall_reads_only_a_held_index_with_little_to_catch_up(two: tuple[Memory, Memory]) -> None:
    # The gateway's event loop recalls only what it can answer at once; else a thread does.
    reader, writer = two
    writer.update_settings(enabled=True)  # memory on: chats recall
    writer.add("k", "prefers green tea in the morning")
    with pytest.raises(WouldBlock):  # not held yet: it would be built, or read from SQL
        reader.recall("k", "tea", light=True)
    _hot(reader, "k")
    assert [i.memory.content for i in reader.recall("k", "tea", light=True)] == [
        "prefers green tea in the morning"
    ]
    writer.add("k", "drinks tea with lemon after lunch")  # a change or two are taken in at once
    assert len(reader.recall("k", "tea", light=True)) == 2
    for n in range(LIGHT_CATCH_UP + 1):  # more than a light recall takes in
        writer.add("k", f"tea note number {n}")
    with pytest.raises(WouldBlock):
        reader.recall("k", "tea", light=True)
    assert len(reader.recall("k", "tea")) > 2  # a thread's recall catches up ...
    assert len(reader.recall("k", "tea", light=True)) > 2  # ... and the light one goes on


def test_a_brief_hold_of_a_key_index_gives_up_while_another_thread_holds_it_long() -> None:
    # A light recall (the gateway's event loop) never waits behind a long catch-up.
    index = KeyIndex("k")
    with held_on_another_thread(index.locked), pytest.raises(WouldBlock), index.locked(brief=True):
        pass
    with index.locked(brief=True):  # free again: held at once
        assert len(index) == 0


def test_an_index_behind_the_pruned_change_log_starts_over(two: tuple[Memory, Memory]) -> None:
    reader, writer = two
    writer.add("k", "likes hiking in the Alps")
    _hot(reader, "k")
    assert _matches(reader, "k", "hiking") == ["likes hiking in the Alps"]
    late = writer.add("k", "went hiking in Norway last summer")
    writer.delete(writer.retrieve("k", "Alps")[0].memory.id)
    # The changes the reader has not seen are pruned before it looks again.
    with database(writer) as store:
        # All but the newest change (which keeps seq growing): the add the reader never saw is gone.
        assert store.changes.prune(now=time.time() + CHANGES_KEPT_S + 1) == 2
    assert _matches(reader, "k", "hiking") == [late.content]


def test_the_newest_fill_follows_updates_and_leaves_kept_turns_out(
    two: tuple[Memory, Memory], clock: ManualClock
) -> None:
    reader, writer = two
    old = writer.add("k", "works at Acme")
    clock.tick()
    writer.add("k", "uses Helix as editor")
    clock.tick()
    writer.add("k", "I walked the dog today", key="turn:abc", type="episodic")
    assert [i.memory.content for i in reader.retrieve("k", None, strategy="exact")] == [
        "I walked the dog today",
        "uses Helix as editor",
        "works at Acme",
    ]
    clock.tick()
    writer.update(old.id, content="works at Globex")
    newest = [i.memory.content for i in reader.retrieve("k", "zebra", strategy="hybrid")]
    assert newest == ["works at Globex", "uses Helix as editor"]  # no match: facts only, newest first


def test_the_indexes_hold_at_most_the_configured_number_of_memories(tmp_path: Path) -> None:
    with _open(tmp_path / "m.db", held=5) as mem:
        for n in range(4):
            mem.add("small", f"note {n} about gardening")
        for n in range(3):
            mem.add("later", f"note {n} about gardening")
        for n in range(8):
            mem.add("big", f"note {n} about gardening")
        with database(mem) as store:
            indexes = KeyIndexes(store.changes, store.memories, max_memories=5)
            now = "2026-12-03T00:00:00.000Z"
            small, later, big = (MemoryFilter(k, now) for k in ("small", "later", "big"))
            # A small key takes free room at its first recall.
            assert indexes.reader(small) is not store.memories
            # The room left (1) is too small, and the key holding the rest was just recalled:
            # even recalled often, another key is read from SQL.
            assert all(indexes.reader(later) is store.memories for _ in range(ADMIT_AFTER + 1))
            assert all(
                indexes.reader(big) is store.memories for _ in range(ADMIT_AFTER + 1)
            )  # 8 never fit in 5
            assert indexes.held() == 4
        # Too big to hold, the key is still recalled in full (from SQL).
        assert len(_matches(mem, "big", "gardening")) == 8
        assert len(_matches(mem, "small", "gardening")) == 4
        assert len(_matches(mem, "later", "gardening")) == 3


def test_a_big_key_is_indexed_off_the_request_path_and_read_from_sql_meanwhile(tmp_path: Path) -> None:
    # Too big to build on a recall; it fits in the room left, so its first recall asks for
    # it (a user who chats once a minute gets the key's own index too).
    size = INLINE_BUILD_MAX * 2
    with _open(tmp_path / "m.db") as mem:
        for n in range(size):
            mem.add("big", f"note {n} about {'gardening' if n % 10 == 0 else 'cooking'}")
        with database(mem) as store:
            indexes = KeyIndexes(store.changes, store.memories, max_memories=50_000)
            flt = MemoryFilter("big", "2026-12-03T00:00:00.000Z")
            try:
                first = indexes.reader(flt)
                assert first is store.memories  # not built on the request path
                from_sql = [m.id for m, _ in first.keyword_search(flt, "gardening", limit=300)]
                wait_until(lambda: indexes.held() == size)
                later = indexes.reader(flt)
                assert later is not store.memories
                assert sorted(m.id for m, _ in later.keyword_search(flt, "gardening", limit=300)) == sorted(
                    from_sql
                )
                assert len(from_sql) == len(range(0, size, 10))  # every tenth is about gardening
            finally:
                indexes.close()


def test_closing_abandons_a_big_keys_build_at_its_next_pause(tmp_path: Path) -> None:
    """A stop never waits for a big key's index: closed while the builder thread builds one
    (~1 s here), the indexes end the build at its next pause and hold nothing."""
    size = 4_000
    with _open(tmp_path / "m.db") as mem:
        report = mem.import_(
            ({"content": f"note {n} about gardening"} for n in range(size)), api_key_id="big"
        )
        assert report.imported == size
        with database(mem) as store:
            indexes = KeyIndexes(store.changes, store.memories, max_memories=50_000)
            flt = MemoryFilter("big", "2026-12-03T00:00:00.000Z")
            assert indexes.reader(flt) is store.memories  # its build is left to the builder
            time.sleep(0.2)  # the build is under way
            started = time.monotonic()
            indexes.close()
            assert time.monotonic() - started < 1.0
            assert indexes.held() == 0


def test_keys_waiting_for_the_builder_can_be_indexed_at_once_on_the_calling_thread(tmp_path: Path) -> None:
    # Two big keys recalled once: both wait for the builder thread, which rests between
    # builds; `build_waiting` indexes them now, so the next recalls read their indexes.
    size = INLINE_BUILD_MAX + 50
    with _open(tmp_path / "m.db") as mem:
        for owner in ("first", "second"):
            for n in range(size):
                mem.add(owner, f"{owner} note {n} about gardening")
        with database(mem) as store:
            indexes = KeyIndexes(store.changes, store.memories, max_memories=50_000)
            flts = [MemoryFilter(owner, "2026-12-03T00:00:00.000Z") for owner in ("first", "second")]
            try:
                assert all(indexes.reader(flt) is store.memories for flt in flts)
                indexes.build_waiting()
                assert indexes.building() == 0 and indexes.held() == 2 * size
                for flt in flts:
                    found = indexes.reader(flt).keyword_search(flt, "gardening", limit=500)
                    assert {m.api_key_id for m, _ in found} == {flt.api_key_id} and len(found) == size
            finally:
                indexes.close()


def test_a_big_key_that_does_not_fit_the_room_left_is_indexed_only_once_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another key holds part of the room, idle: a big key displaces it only when recalled
    # once per `MEMORIES_PER_RECALL` of its memories within `BUSY_S`.
    size = max(INLINE_BUILD_MAX + 1, MEMORIES_PER_RECALL * (ADMIT_AFTER + 2))
    with _open(tmp_path / "m.db") as mem:
        for n in range(size):
            mem.add("big", f"note {n} about gardening")
        for n in range(10):
            mem.add("small", f"note {n} about cooking")
        with database(mem) as store:
            indexes = KeyIndexes(store.changes, store.memories, max_memories=size)
            big, small = (MemoryFilter(k, "2026-12-03T00:00:00.000Z") for k in ("big", "small"))
            try:
                assert indexes.reader(small) is not store.memories  # takes 10 of the room
                monkeypatch.setattr(time, "monotonic", lambda real=time.monotonic: real() + 2 * BUSY_S)
                for _ in range(size // MEMORIES_PER_RECALL - 1):
                    assert indexes.reader(big) is store.memories
                time.sleep(0.3)
                assert indexes.held() == 10  # not busy enough to displace the idle key
                indexes.reader(big)  # busy now
                wait_until(lambda: indexes.held() == size)
                assert indexes.reader(small) is store.memories  # displaced
            finally:
                indexes.close()


def test_vector_hits_are_read_from_the_index_as_another_process_left_them(two: tuple[Memory, Memory]) -> None:
    reader, writer = two
    writer.update_settings(enabled=True, embedding_source="hashing")
    kept = writer.add("k", "prefers green tea in the morning")
    gone = writer.add("k", "drinks green tea after lunch")
    writer.reindex(wait=True)
    _hot(reader, "k")  # the index is built now: vector hits are read from it

    def nearest() -> dict[str, str]:
        found = reader.retrieve("k", "green tea", strategy="semantic")
        assert {i.tier for i in found} == {"vector"}
        return {i.memory.id: i.memory.content for i in found}

    assert nearest() == {kept.id: kept.content, gone.id: gone.content}
    writer.update(kept.id, content="prefers green tea, now with lemon")
    writer.delete(gone.id)
    writer.reindex(wait=True)
    assert nearest() == {kept.id: "prefers green tea, now with lemon"}


def test_a_busy_keys_vector_copy_is_checked_against_its_index(tmp_path: Path, clock: ManualClock) -> None:
    """A busy key's vectors are searched in an in-memory copy whose hits are checked
    against the key's index instead of SQL: what expired since never comes back, a
    session's recall holds only that session's memories, and another key's memory is never
    among them."""
    config = Config.for_path(tmp_path / "m.db", {})
    mem, parts = open_parts(config, clock, start_workers=True)  # the copy is made in the background
    try:
        mem.update_settings(enabled=True, embedding_source="hashing")
        for i in range(30):
            mem.add("k", f"planted tomatoes in bed {i} this spring")
        later = (clock.now + timedelta(hours=1)).isoformat().replace("+00:00", "Z")
        expiring = mem.add("k", "has a dog named Rex who loves the park", expires_at=later)
        kept = mem.add("k", "has a dog named Miso who loves the sofa")
        scoped = mem.add("k", "has a dog named Pip who loves the snow", session_id="s2")
        stranger = mem.add("other", "has a dog named Rex who loves the park")
        mem.reindex(wait=True)

        def nearest(session_id: str | None = None) -> set[str]:
            scope = "session" if session_id else "apiKey"
            found = mem.retrieve("k", "dog who loves", "semantic", scope=scope, session_id=session_id)
            return {i.memory.id for i in found}

        for _ in range(3):  # a busy key: held in process, its vectors copied
            nearest()
        generation = parts.store.vectors.generation("k")
        wait_until(lambda: parts.index.key_cache.get("k", generation) is not None, timeout=10)
        assert {expiring.id, kept.id, scoped.id} <= nearest()
        clock.advance(hours=2)  # Rex's note expires; nothing is written, so the copy stays current
        found = nearest()
        assert kept.id in found and expiring.id not in found and stranger.id not in found
        assert nearest("s2") == {scoped.id}
        assert parts.index.key_cache.get("k", parts.store.vectors.generation("k")) is not None
        # The copy's own answer, checked by the key's index alone, already leaves them out.
        flt = mem._filter("k", "apiKey", None, None)
        reader = parts.key_indexes.reader(flt)
        assert isinstance(reader, IndexedReader)
        vector = parts.sources.embed_query(parts.semantic.source(mem.settings()), "dog who loves")
        hits = {h.memory_id for h in parts.index.search(vector, flt, 50, reader.row_admission(flt))}
        assert kept.id in hits and expiring.id not in hits and stranger.id not in hits
    finally:
        mem.close()


def test_a_key_index_leaves_the_collectors_view_when_the_process_froze_its_own(tmp_path: Path) -> None:
    # `memroute serve` freezes its start-up objects; an index built later is frozen too,
    # so a full collection never walks its memories (77–119 ms at 50,000, every recall
    # waiting). A separate interpreter: freezing here would freeze the test runner.
    script = f"""
import gc
from memroute import Memory
mem = Memory.open({str(tmp_path / "m.db")!r}, start_workers=False)
for n in range(150):
    mem.add("k", f"note {{n}} about the garden")
gc.collect()
gc.freeze()
before = gc.get_freeze_count()
for _ in range({ADMIT_AFTER}):
    mem.retrieve("k", "garden")
print(gc.get_freeze_count() - before)
mem.close()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) >= 150  # at least a record per memory left the collector's view
