"""The durable extraction queue (SPEC §3, last bullet; §1 `extraction_jobs`).

Texts are queued in the database and turned into memories by a background
worker; a restart never loses a queued text, `close()` drains the queue, and a
job queued by another process on the same file is picked up too.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import apsw
import pytest
from memories import open_memory
from storage import open_parts, rows

from memroute import InvalidInput, Memory
from memroute.clock import to_iso
from memroute.config import Config
from memroute.models.results import ExtractionQueue
from memroute.service.turn_queue import ChatTurn
from memroute.service.workers import ExtractionWorker
from memroute.store import ExtractionJob


def _wait_until(predicate: Any, timeout: float = 8.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())


def _by_key(mem: Memory, owner: str) -> dict[str, Any]:
    return {m.key: m for m in mem.list(owner, limit=200).items}


def test_queued_text_becomes_memories_with_metadata(mem: Memory, clock: Any) -> None:
    job = mem.enqueue_extraction("k", "I prefer TypeScript. I'll use Postgres for this project.", "sess-1")
    assert isinstance(job, int)
    assert mem.wait_for_extraction(10)
    memories = _by_key(mem, "k")
    assert set(memories) == {"preference:typescript", "decision:postgres_for_this_project"}
    ts = memories["preference:typescript"]
    assert ts.content == "prefers TypeScript"
    assert ts.type == "factual"
    assert ts.session_id == "sess-1"
    assert ts.metadata == {
        "category": "preference",
        "polarity": "positive",
        "source": "user_message",
        "extractedAt": to_iso(clock()),
        "role": "user",
        "sessionId": "sess-1",
        "learnedAt": to_iso(clock()),
    }
    pg = memories["decision:postgres_for_this_project"]
    assert pg.content == "will use Postgres for this project"
    assert pg.type == "episodic"
    assert mem.history(ts.id)[0].actor == "extraction"
    assert mem.extraction_queue() == ExtractionQueue(pending=0, failed=0)


def test_a_reply_never_teaches_facts_about_the_user(mem: Memory) -> None:
    assert mem.enqueue_extraction("k", "I usually write tests first.", source="llm_response") is None
    assert mem.remember("k", "I prefer Python for quick scripts.", source="llm_response") == []
    mem.enqueue_extraction("k", "I like green tea.", source="user_message")
    assert mem.wait_for_extraction(10)
    memories = _by_key(mem, "k")
    assert list(memories) == ["preference:green_tea"]
    assert memories["preference:green_tea"].metadata["source"] == "user_message"


def test_bad_source_is_refused_and_empty_text_queues_nothing(mem: Memory) -> None:
    with pytest.raises(InvalidInput):
        mem.enqueue_extraction("k", "I like tea.", source="assistant")
    assert mem.enqueue_extraction("k", "   ") is None
    assert mem.enqueue_extraction("k", "") is None
    assert mem.extraction_queue() == ExtractionQueue(pending=0, failed=0)
    assert mem.list("k").total == 0


def test_text_without_facts_stores_nothing_and_empties_the_queue(mem: Memory) -> None:
    # a statement lead with a filler object ("I love it") is queued, and extraction finds nothing
    assert mem.enqueue_extraction("k", "I love it, and I like that.") is not None
    assert mem.wait_for_extraction(10)
    assert mem.list("k").total == 0
    assert mem.extraction_queue().pending == 0


def test_a_chat_turn_without_any_statement_lead_is_not_queued(mem: Memory) -> None:
    turn = [("Which database should I use?", "user_message"), ("Use SQLite for a start.", "llm_response")]
    assert mem.enqueue_extractions("k", turn) == []
    mixed = [("I prefer SQLite here.", "user_message"), ("I prefer Postgres here.", "llm_response")]
    assert len(mem.enqueue_extractions("k", mixed)) == 1  # the reply states nothing about the user
    assert mem.wait_for_extraction(10)
    assert [m.content for m in mem.list("k").items] == ["prefers SQLite here"]


def test_a_later_contradiction_replaces_the_fact_and_keeps_history(mem: Memory, clock: Any) -> None:
    mem.enqueue_extraction("k", "I like Python.")
    assert mem.wait_for_extraction(10)
    clock.advance(days=1)
    mem.enqueue_extraction("k", "I don't like Python.")
    assert mem.wait_for_extraction(10)
    memories = mem.list("k").items
    assert len(memories) == 1
    (python,) = memories
    assert python.key == "preference:python"
    assert python.content == "does not like Python"
    assert python.metadata["polarity"] == "negative"
    assert python.metadata["extractedAt"] == to_iso(clock())
    history = mem.history(python.id)
    assert [h.event for h in history] == ["ADD", "UPDATE"]
    assert history[1].old_content == "likes Python"
    assert history[1].new_content == "does not like Python"
    assert [i.memory.content for i in mem.retrieve("k", "Python", strategy="semantic")] == [
        "does not like Python"
    ]


def test_queued_jobs_are_processed_in_order(mem: Memory) -> None:
    mem.enqueue_extraction("k", "I like Python.")
    mem.enqueue_extraction("k", "I don't like Python.")
    mem.enqueue_extraction("k", "I love Python.")  # same subject: the newest statement wins
    mem.enqueue_extraction("k", "I hate Java.")
    mem.enqueue_extraction("k", "I like Java.")
    assert mem.wait_for_extraction(10)
    memories = _by_key(mem, "k")
    assert memories["preference:python"].content == "loves Python"
    assert memories["preference:java"].content == "likes Java"
    assert memories["preference:java"].metadata["polarity"] == "positive"


def test_keys_stay_apart_in_the_queue(mem: Memory) -> None:
    mem.enqueue_extraction("key-a", "I prefer tabs.")
    mem.enqueue_extraction("key-b", "I prefer spaces.")
    assert mem.wait_for_extraction(10)
    assert [m.content for m in mem.list("key-a").items] == ["prefers tabs"]
    assert [m.content for m in mem.list("key-b").items] == ["prefers spaces"]


def test_jobs_survive_a_restart(db_path: Path, clock: Any) -> None:
    offline = open_memory(db_path, clock=clock)
    offline.enqueue_extraction("k", "I prefer TypeScript.", "s1", source="user_message")
    offline.enqueue_extraction("k", "I always commit before pushing.", "s2")
    assert offline.extraction_queue() == ExtractionQueue(pending=2, failed=0)
    offline.close()

    online = open_memory(db_path, clock=clock, workers=True)
    try:
        assert online.wait_for_extraction(10)
        memories = _by_key(online, "k")
        assert set(memories) == {"preference:typescript", "pattern:commit_before_pushing"}
        assert memories["preference:typescript"].session_id == "s1"
        assert memories["pattern:commit_before_pushing"].session_id == "s2"
        assert online.extraction_queue() == ExtractionQueue(pending=0, failed=0)
    finally:
        online.close()


def test_close_drains_the_queue(db_path: Path, clock: Any) -> None:
    for round_ in range(15):
        owner = f"k{round_}"
        memory = open_memory(db_path, clock=clock, workers=True)
        for i in range(4):
            memory.enqueue_extraction(owner, f"I prefer option{i} for round {round_}.")
        memory.close()  # no wait_for_extraction: close itself must drain
        check = open_memory(db_path, clock=clock)
        try:
            assert check.extraction_queue() == ExtractionQueue(pending=0, failed=0), f"round {round_}"
            assert check.list(owner).total == 4, f"round {round_}"
        finally:
            check.close()


def test_a_job_queued_by_another_process_is_picked_up(db_path: Path, mem: Memory, clock: Any) -> None:
    assert mem.wait_for_extraction(10)  # the worker is idle, waiting and polling
    writer = open_memory(db_path, clock=clock)  # e.g. the CLI next to the server
    try:
        writer.enqueue_extraction("k", "I prefer Go for command line tools.")
        assert _wait_until(lambda: mem.list("k").total == 1), "the running worker did not pick the job up"
        assert mem.list("k").items[0].content == "prefers Go for command line tools"
        assert writer.extraction_queue().pending == 0
    finally:
        writer.close()


def test_a_job_that_cannot_be_stored_fails_alone_and_the_rest_of_its_batch_is_stored(
    db_path: Path, clock: Any
) -> None:
    # The jobs are fetched and stored as one batch; a trigger in the database refuses one
    # job's fact, as a constraint or a full disk would.
    offline = open_memory(db_path, clock=clock)
    try:
        con = apsw.Connection(str(db_path))
        try:
            con.set_busy_timeout(5000)
            con.execute(
                "CREATE TRIGGER refuse_poison BEFORE INSERT ON memories WHEN NEW.content LIKE '%poison%'"
                " BEGIN SELECT RAISE(ABORT, 'poisoned fact'); END"
            )
        finally:
            con.close()
        offline.enqueue_extraction("k", "I prefer tabs.")
        offline.enqueue_extraction("k", "I like poison ivy.")
        offline.enqueue_extraction("k", "I like tea.")
        assert offline.wait_for_extraction(10)
        assert {m.content for m in offline.list("k").items} == {"prefers tabs", "likes tea"}
        # the refused job was retried up to its attempts and is kept, failed, with the reason
        assert offline.extraction_queue() == ExtractionQueue(pending=0, failed=1)
        [row] = rows(offline, "SELECT text, attempts, last_error FROM extraction_jobs")
        assert row[0] == "I like poison ivy."
        assert row[1] == offline.config.extraction_max_attempts and "poisoned fact" in row[2]
    finally:
        offline.close()


def test_extraction_queue_counts_pending_and_failed(db_path: Path, clock: Any) -> None:
    offline = open_memory(db_path, clock=clock)
    try:
        assert offline.extraction_queue() == ExtractionQueue(pending=0, failed=0)
        offline.enqueue_extraction("k", "I prefer tabs.")
        offline.enqueue_extraction("k", "I like tea.")
        assert offline.extraction_queue() == ExtractionQueue(pending=2, failed=0)
        con = apsw.Connection(str(db_path))
        try:
            con.set_busy_timeout(5000)
            con.execute(
                "INSERT INTO extraction_jobs (api_key_id, session_id, source, text, created_at, attempts,"
                " last_error) VALUES ('k', '', 'user_message', 'I like coffee.', ?, ?, 'boom')",
                (to_iso(clock()), offline.config.extraction_max_attempts),
            )
        finally:
            con.close()
        assert offline.extraction_queue() == ExtractionQueue(pending=2, failed=1)
        # processing handles what is pending; a job that used up its attempts stays failed
        assert offline.wait_for_extraction(10)
        assert offline.extraction_queue() == ExtractionQueue(pending=0, failed=1)
        assert {m.content for m in offline.list("k").items} == {"prefers tabs", "likes tea"}
    finally:
        offline.close()


def test_close_drains_a_job_queued_while_the_last_pass_finishes() -> None:
    # A job committed just after the worker's final (empty) look at the queue, followed at
    # once by close(), must still be processed by close(). Driven through the worker's own
    # constructor (fetch/process/fail callables), with no patching.
    queue: list[ExtractionJob] = []
    processed: list[int] = []
    reached_empty = threading.Event()
    release = threading.Event()

    def fetch(limit: int) -> list[ExtractionJob]:
        if queue:
            batch, queue[:] = queue[:limit], queue[limit:]
            return batch
        if not reached_empty.is_set():
            reached_empty.set()  # the SELECT saw an empty queue ...
            release.wait(5)  # ... and returns only after the job below was committed
        return []

    worker = ExtractionWorker(fetch, lambda jobs: processed.extend(j.id for j in jobs), lambda job, exc: None)
    worker.start()
    worker.notify()
    assert reached_empty.wait(5)
    queue.append(
        ExtractionJob(1, "k", "", "user_message", "I prefer tabs.", "2026-06-01T12:00:00.000Z", 0, None)
    )
    worker.notify()
    stopper = threading.Thread(target=worker.stop, args=(5.0,))
    stopper.start()
    time.sleep(0.1)  # close() has asked the worker to stop
    release.set()
    stopper.join(10)
    assert processed == [1], "close() returned with a queued job left unprocessed"


def test_batched_access_counts_are_written_and_flushed_on_close(tmp_path: Path) -> None:
    path = tmp_path / "access.db"
    with open_memory(path, workers=True) as mem:
        first = mem.add("k", "prefers tea")
        second = mem.add("k", "prefers jazz")
        mem.record_access_later([first.id, second.id])
        mem.record_access_later([first.id])
    with open_memory(path) as reopened:
        assert reopened.get(first.id).access_count == 2
        assert reopened.get(second.id).access_count == 1
        assert reopened.get(first.id).last_accessed_at is not None


def test_a_burst_of_chats_is_stored_in_one_pass_and_a_waiter_is_not_held_by_the_gathering() -> None:
    # The worker gathers the turns queued just after the first one (here for 30 s, so the
    # test shows that a waiter cuts it short): the burst is stored as one batch.
    queue: list[ExtractionJob] = []
    batches: list[list[int]] = []
    looked = threading.Event()

    def fetch(limit: int) -> list[ExtractionJob]:
        batch, queue[:] = queue[:limit], queue[limit:]
        looked.set()
        return batch

    worker = ExtractionWorker(
        fetch, lambda jobs: batches.append([j.id for j in jobs]), lambda job, exc: None, gather_s=30.0
    )
    worker.start()
    try:
        assert looked.wait(5)  # the first pass found the queue empty
        for job_id in range(1, 6):
            queue.append(
                ExtractionJob(
                    job_id, "k", "", "user_message", "I like tea.", "2026-06-01T12:00:00.000Z", 0, None
                )
            )
            worker.notify()
            time.sleep(0.02)  # chats a little apart: a worker that did not gather would take each alone
        assert worker.wait_idle(10.0), "a waiter was held by the worker's gathering"
        assert batches == [[1, 2, 3, 4, 5]]
    finally:
        worker.stop(5.0)


def _episodes(mem: Memory, owner: str) -> list[str]:
    return sorted(m.content for m in mem.list(owner, limit=200).items if m.key.startswith("turn:"))


def test_turns_learned_in_one_pass_are_kept_once_and_again_once_the_cap_evicted_them(tmp_path: Path) -> None:
    """One pass stores several queued turns per transaction, reading what each owner
    already has once: a text said twice in the pass is kept once, and a text whose memory
    the key's cap evicted earlier in the same pass is kept again."""
    config = Config.for_path(tmp_path / "memroute.db", environ={"MEMROUTE_MAX_MEMORIES_PER_KEY": "4"})
    mem, parts = open_parts(config)
    mem.update_settings(enabled=True)
    key, _ = mem.keys.create("k")
    other, _ = mem.keys.create("other")
    kept = [mem.add(key.id, f"note {n} about the garden", key=f"note:{n}").id for n in range(3)]
    mem.record_access(kept)  # used: a turn never used goes first when the cap makes room
    said = ["The sea was calm at dawn.", "Our train left late again.", "The sea was calm at dawn."]
    for text in said:
        mem.enqueue_turn(key.id, ChatTurn(text))
    mem.enqueue_turn(other.id, ChatTurn("The sea was calm at dawn."))
    mem.enqueue_turn(other.id, ChatTurn("The sea was calm at dawn."))
    jobs = parts.store.jobs.next_batch(max_attempts=5, limit=10)
    assert len(jobs) == 5
    parts.learner.process_jobs(jobs)
    # The calm sea was stored, evicted to make room for the train, and stored again
    # (evicting the train): the key holds its three notes and the sea.
    assert _episodes(mem, key.id) == ["The sea was calm at dawn."]
    assert _episodes(mem, other.id) == ["The sea was calm at dawn."]  # said twice, kept once
    assert mem.extraction_queue().pending == 0
    mem.close()
