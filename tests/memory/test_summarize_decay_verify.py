"""Summarisation (SPEC §11, REF §12.1), typed decay (REF §12.3) and the health probe
(SPEC §9, REF §12.2), on real SQLite files with a clock the tests move."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from memories import NO_MODEL, open_memory
from storage import scalar

from memroute import InvalidInput, Memory
from memroute.config import Config
from memroute.models.records import MemoryRecord
from memroute.models.results import SummaryWritten, VerifySteps
from memroute.models.wire import to_wire


def _add(mem: Memory, clock: Any, owner: str, content: str, **kwargs: Any) -> MemoryRecord:
    record = mem.add(owner, content, **kwargs)
    clock.tick()
    return record


def _count(mem: Memory, table: str) -> int:
    return int(scalar(mem, f"SELECT COUNT(*) FROM {table}"))


def _snapshot(mem: Memory) -> dict[str, int]:
    return {t: _count(mem, t) for t in ("memories", "memory_history", "memory_fts_docsize")}


# --- summarisation --------------------------------------------------------------------------------


def test_summarize_needs_a_key_or_all_keys(mem: Memory, clock: Any) -> None:
    _add(mem, clock, "key-a", "prefers TypeScript")
    clock.advance(days=40)
    before = _snapshot(mem)
    with pytest.raises(InvalidInput) as caught:
        mem.summarize(30)
    assert caught.value.field == "apiKeyId"
    with pytest.raises(InvalidInput):
        mem.summarize(30, dry_run=True)
    assert _snapshot(mem) == before


def test_an_empty_key_is_not_all_keys(mem: Memory, clock: Any) -> None:
    a = _add(mem, clock, "key-a", "prefers TypeScript")
    clock.advance(days=40)
    result = mem.summarize(30, api_key_id="")
    assert result.candidates == []
    assert result.deleted_count == 0
    assert mem.get(a.id) is not None


@pytest.mark.parametrize("days", [0, -1, 366, "x", None])
def test_summarize_rejects_bad_older_than_days(mem: Memory, days: Any) -> None:
    with pytest.raises(InvalidInput):
        mem.summarize(days, api_key_id="key-a")


def test_dry_run_lists_candidates_and_writes_nothing(mem: Memory, clock: Any) -> None:
    contents = [
        "prefers TypeScript",
        "likes green tea with lunch",
        "uses vim",
        "deploys on Fridays",
        "x" * 41,
    ]
    for content in contents:
        _add(mem, clock, "key-a", content)
    clock.advance(days=35)
    before = _snapshot(mem)
    result = mem.summarize(30, api_key_id="key-a", dry_run=True)
    assert len(result.candidates) == 5
    assert result.total_tokens == sum(math.ceil(len(c) / 4) for c in contents)
    assert result.deleted_count == 0
    assert result.summary_id is None
    assert result.dry_run is True
    assert _snapshot(mem) == before
    assert mem.list("key-a").total == 5


def test_real_run_writes_one_english_summary_owned_by_the_key(mem: Memory, clock: Any) -> None:
    olds = [_add(mem, clock, "key-a", f"old fact {i}: prefers option {i}", key=f"pref:{i}") for i in range(5)]
    other = _add(mem, clock, "key-b", "key b: likes Kotlin")
    clock.advance(days=40)
    fresh = _add(mem, clock, "key-a", "fresh fact: uses Neovim")
    result = mem.summarize(30, api_key_id="key-a")

    assert result.dry_run is False
    assert result.deleted_count == 5
    assert {c.id for c in result.candidates} == {m.id for m in olds}
    assert result.total_tokens == sum(math.ceil(len(m.content) / 4) for m in olds)
    summary = mem.get(result.summary_id)
    assert summary is not None
    assert summary.api_key_id == "key-a"
    assert summary.type == "semantic"
    assert "5" in summary.content
    assert summary.content.startswith("Summary of 5 memories older than 30 days")
    assert "Resumo" not in summary.content
    for m in olds:
        assert m.content in summary.content
    assert result.summaries == [SummaryWritten(api_key_id="key-a", summary_id=summary.id, count=5)]

    remaining = {m.id for m in mem.list("key-a").items}
    assert remaining == {summary.id, fresh.id}
    for m in olds:
        assert mem.get(m.id) is None
        last = mem.history(m.id)[-1]
        assert (last.event, last.old_content, last.actor) == ("DELETE", m.content, "summarize")
    assert mem.get(other.id) is not None  # another key's old memory is untouched
    # the summary is what the key's chat now gets back
    items = mem.retrieve("key-a", "option", strategy="semantic")
    assert items[0].memory.id == summary.id


def test_all_keys_makes_one_summary_per_key(mem: Memory, clock: Any) -> None:
    for owner, n in (("key-a", 2), ("key-b", 3)):
        for i in range(n):
            _add(mem, clock, owner, f"{owner} fact {i}")
    clock.advance(days=31)
    result = mem.summarize(30, all_keys=True)
    assert result.deleted_count == 5
    assert result.summary_id is None  # more than one summary
    by_owner = {s.api_key_id: s for s in result.summaries}
    assert set(by_owner) == {"key-a", "key-b"}
    for owner, n in (("key-a", 2), ("key-b", 3)):
        summary = mem.get(by_owner[owner].summary_id)
        assert summary.api_key_id == owner
        assert summary.type == "semantic"
        assert by_owner[owner].count == n
        assert f"Summary of {n} memories" in summary.content
        assert all(f"{owner} fact {i}" in summary.content for i in range(n))
        assert [m.id for m in mem.list(owner).items] == [summary.id]
    assert mem.list("").total == 0  # nothing was given to an unreachable owner


def test_only_memories_older_than_n_days_are_candidates(mem: Memory, clock: Any) -> None:
    old = _add(mem, clock, "key-a", "thirty-five days old")
    clock.advance(days=34)
    recent = _add(mem, clock, "key-a", "one day old")
    clock.advance(days=1)
    result = mem.summarize(30, api_key_id="key-a", dry_run=True)
    assert [c.id for c in result.candidates] == [old.id]
    assert mem.summarize(60, api_key_id="key-a", dry_run=True).candidates == []
    mem.summarize(30, api_key_id="key-a")
    assert mem.get(recent.id) is not None
    assert mem.get(old.id) is None


def test_a_recent_only_store_has_no_candidates(mem: Memory, clock: Any) -> None:
    _add(mem, clock, "key-a", "prefers TypeScript")
    before = _snapshot(mem)
    result = mem.summarize(30, api_key_id="key-a")
    assert result.candidates == []
    assert result.deleted_count == 0
    assert result.summary_id is None
    assert _snapshot(mem) == before


def test_expired_memories_do_not_come_back_through_a_summary(mem: Memory, clock: Any) -> None:
    kept = _add(mem, clock, "key-a", "prefers TypeScript")
    _add(mem, clock, "key-a", "temporary door code 4711", expires_at=clock() + timedelta(days=1))
    clock.advance(days=40)
    assert "4711" not in " ".join(
        i.memory.content for i in mem.retrieve("key-a", "door code", strategy="exact")
    )
    result = mem.summarize(30, api_key_id="key-a")
    summary = mem.get(result.summary_id)
    assert kept.content in summary.content
    assert "4711" not in summary.content  # the user let it expire; a summary must not revive it
    for strategy in ("exact", "semantic", "hybrid"):
        items = mem.retrieve("key-a", "door code", strategy=strategy)
        assert all("4711" not in i.memory.content for i in items), strategy


def test_a_single_old_memory_is_summarised_in_the_singular(mem: Memory, clock: Any) -> None:
    _add(mem, clock, "key-a", "First sentence. Second one! Third? Fourth sentence here.", type="episodic")
    clock.advance(days=31)
    result = mem.summarize(30, api_key_id="key-a")
    summary = mem.get(result.summary_id)
    assert summary.content.startswith("Summary of 1 memory older than 30 days")
    assert "First sentence. Second one! Third?" in summary.content  # punctuation kept
    assert "Fourth" not in summary.content


# --- typed decay ----------------------------------------------------------------------------------


@pytest.fixture
def decaying(db_path: Path, clock: Any) -> Iterator[Memory]:
    config = Config.for_path(db_path, environ={"MEMORY_TYPED_DECAY_ENABLED": "true"})
    memory = open_memory(db_path, config=config, clock=clock, workers=True)
    yield memory
    memory.close()


def test_decay_does_nothing_while_disabled(db_path: Path, clock: Any) -> None:
    config = Config.for_path(db_path, environ={})
    memory = open_memory(db_path, config=config, clock=clock, workers=True)
    try:
        old = _add(memory, clock, "k", "went with Postgres", type="episodic")
        clock.advance(days=90)
        result = memory.decay()
        assert result.skipped_disabled is True
        assert (result.scanned, result.decayed, result.deleted_ids) == (0, 0, [])
        assert memory.get(old.id) is not None
        dry = memory.decay(dry_run=True)  # a dry run still classifies
        assert dry.deleted_ids == [old.id]
        assert memory.get(old.id) is not None
    finally:
        memory.close()


def test_dry_run_classifies_without_deleting(decaying: Memory, clock: Any) -> None:
    old = _add(decaying, clock, "k", "went with Postgres", type="episodic")
    clock.advance(days=31)
    fresh = _add(decaying, clock, "k", "picked Redis", type="episodic")
    before = _snapshot(decaying)
    result = decaying.decay(dry_run=True)
    assert result.scanned == 2
    assert result.decayed == 1
    assert result.deleted_ids == [old.id]
    assert result.skipped_disabled is False
    assert _snapshot(decaying) == before
    assert decaying.get(fresh.id) is not None


def test_old_episodic_decays_fresh_and_factual_stay(decaying: Memory, clock: Any) -> None:
    old_episode = _add(decaying, clock, "k", "went with Postgres", type="episodic")
    old_fact = _add(decaying, clock, "k", "prefers TypeScript", type="factual")
    old_proc = _add(decaying, clock, "k", "run make test before pushing", type="procedural")
    old_sem = _add(decaying, clock, "k", "the project is a gateway", type="semantic")
    clock.advance(days=29)
    fresh = _add(decaying, clock, "k", "picked Redis", type="episodic")
    assert decaying.decay().deleted_ids == []  # nothing is past 30 days yet
    clock.advance(days=2)
    result = decaying.decay()
    assert result.deleted_ids == [old_episode.id]
    assert decaying.get(old_episode.id) is None
    last = decaying.history(old_episode.id)[-1]
    assert (last.event, last.old_content, last.actor) == ("DELETE", "went with Postgres", "decay")
    for kept in (old_fact, old_proc, old_sem, fresh):
        assert decaying.get(kept.id) is not None
    clock.advance(days=3650)
    assert set(decaying.decay().deleted_ids) == {fresh.id}  # other types never decay
    for kept in (old_fact, old_proc, old_sem):
        assert decaying.get(kept.id) is not None


def test_used_memories_are_immune(decaying: Memory, clock: Any) -> None:
    decaying.update_settings(**NO_MODEL)  # a keyword search recalls (uses) only what it matches
    used = _add(decaying, clock, "k", "went with Postgres for storage", type="episodic")
    unused = _add(decaying, clock, "k", "picked Redis for caching", type="episodic")
    for _ in range(3):
        decaying.retrieve("k", "Postgres", strategy="semantic")
    assert decaying.get(used.id).access_count == 3
    clock.advance(days=400)
    result = decaying.decay(api_key_id="k")
    assert result.deleted_ids == [unused.id]
    assert decaying.get(used.id) is not None


def test_a_recent_access_restarts_the_clock(decaying: Memory, clock: Any) -> None:
    episode = _add(decaying, clock, "k", "went with Postgres", type="episodic")
    clock.advance(days=25)
    decaying.retrieve("k", "Postgres", strategy="semantic")  # used once: 25 days after it was stored
    clock.advance(days=10)  # 35 days old, 10 days since it was used
    assert decaying.decay().deleted_ids == []
    clock.advance(days=21)  # 31 days since it was used
    assert decaying.decay().deleted_ids == [episode.id]


def test_decay_custom_days_and_key_filter(db_path: Path, clock: Any) -> None:
    config = Config.for_path(
        db_path,
        environ={
            "MEMORY_TYPED_DECAY_ENABLED": "true",
            "MEMORY_TYPED_DECAY_EPISODIC_DAYS": "7",
        },
    )
    memory = open_memory(db_path, config=config, clock=clock, workers=True)
    try:
        a = _add(memory, clock, "key-a", "went with Postgres", type="episodic")
        b = _add(memory, clock, "key-b", "went with MySQL", type="episodic")
        clock.advance(days=8)
        assert memory.decay(api_key_id="key-a").deleted_ids == [a.id]
        assert memory.get(b.id) is not None
    finally:
        memory.close()


def test_episodic_days_zero_makes_episodic_immune(db_path: Path, clock: Any) -> None:
    config = Config.for_path(
        db_path,
        environ={
            "MEMORY_TYPED_DECAY_ENABLED": "true",
            "MEMORY_TYPED_DECAY_EPISODIC_DAYS": "0",
        },
    )
    memory = open_memory(db_path, config=config, clock=clock, workers=True)
    try:
        episode = _add(memory, clock, "k", "went with Postgres", type="episodic")
        clock.advance(days=1000)
        assert memory.decay().deleted_ids == []
        assert memory.get(episode.id) is not None
    finally:
        memory.close()


# --- health probe ---------------------------------------------------------------------------------


def test_verify_runs_the_pipeline_and_leaves_nothing_behind(mem: Memory, clock: Any) -> None:
    _add(mem, clock, "k", "prefers TypeScript")
    before = _snapshot(mem)
    for _ in range(3):  # cheap enough to be polled
        result = mem.verify()
        assert result.working is True, result
        assert result.steps == VerifySteps(extract=True, store=True, search=True, delete=True)
        assert result.error is None and "error" not in to_wire(result)
        assert result.latency_ms >= 0
    assert _snapshot(mem) == before
    assert mem.stats().total == 1
    assert [m.content for m in mem.list().items] == ["prefers TypeScript"]


def test_verify_works_when_memory_is_disabled_and_retention_is_short(mem: Memory, clock: Any) -> None:
    mem.update_settings(enabled=False, retentionDays=1, maxTokens=0, strategy="recent")
    before = _snapshot(mem)
    result = mem.verify()
    assert result.working is True, result
    assert _snapshot(mem) == before


def test_the_server_sweeps_decayed_memories_on_its_own(tmp_path: Path) -> None:
    """With decay enabled and a sweep interval, opening the service runs a sweep."""
    import time as _time

    from clocks import ManualClock

    path = tmp_path / "sweep.db"
    clock = ManualClock()
    with open_memory(path, clock=clock) as setup:
        old = setup.add("k", "went with Redis for caching", type="episodic")
        kept = setup.add("k", "prefers tabs", type="factual")
    clock.advance(days=45)
    env = {"MEMORY_TYPED_DECAY_ENABLED": "true", "MEMORY_TYPED_DECAY_SWEEP_INTERVAL": "60"}
    with open_memory(config=Config.for_path(path, environ=env), clock=clock, workers=True) as mem:
        deadline = _time.monotonic() + 10
        while mem.get(old.id) is not None and _time.monotonic() < deadline:
            _time.sleep(0.05)
        assert mem.get(old.id) is None
        assert mem.get(kept.id) is not None
        assert [h.actor for h in mem.history(old.id)][-1] == "decay"


def test_the_health_probe_and_a_re_index_after_a_source_change_never_wait_on_each_other(
    mem: Memory, clock: Any
) -> None:
    """The probe searches inside its own write transaction while the re-index worker resets
    the vector table for a new source: once they each held what the other waited for, and
    the probe (and every write after it) hung for good."""
    import threading

    for i in range(40):
        _add(mem, clock, "k", f"note {i}: the build runs on runner {i}")
    for source in ["hashing", "transformers"] * 4:
        mem.update_settings(enabled=True, embedding_source=source)
        results: list[Any] = []
        probe = threading.Thread(target=lambda found=results: found.append(mem.verify()), daemon=True)
        probe.start()
        probe.join(60)
        assert not probe.is_alive(), "the health probe hung"
        assert results[0].working is True, results[0]
    assert mem.stats().total == 40
