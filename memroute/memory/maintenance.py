"""Maintenance over stored memories: per-key summaries and typed decay. Each summary
and the deletion of its originals commit together, so a long run never holds the write
lock for more than one summary's worth of memories."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import replace
from datetime import datetime

from memroute.clock import days_ago, to_iso
from memroute.memory import summarization
from memroute.memory.decay import SWEEP_SCAN_CAP, DecayPolicy, is_decayed
from memroute.models.owners import owner_for_logs
from memroute.models.records import SUMMARY_KEY_PREFIX, MemoryRecord, estimate_tokens
from memroute.models.results import DecayReport, SummaryReport, SummaryWritten
from memroute.store import NewMemory, Store

log = logging.getLogger("memroute.memory")


# The report lists this many candidates (the oldest); `candidate_count` counts them all.
CANDIDATE_PREVIEW = 100


def summarize(
    store: Store, *, owner: str | None, days: int, now: datetime, dry_run: bool, max_bytes: int
) -> SummaryReport:
    """Compact memories of `owner` (None: every key) not updated for `days` days, in
    summaries of at most `max_bytes` each, one transaction per summary."""
    stamp = to_iso(now)
    candidates = [
        m
        for m in store.memories.updated_before(owner, days_ago(now, days))
        if not summarization.is_summary(m) and (m.expires_at is None or m.expires_at > stamp)
    ]
    summaries: list[SummaryWritten] = []
    if not dry_run:
        for key_owner, group in summarization.by_owner(candidates).items():
            for run in summarization.chunks(group, days, max_bytes):
                written = _write_summary(store, key_owner, run, days, stamp, max_bytes)
                if written is not None:
                    summaries.append(written)
                time.sleep(0.001)  # let writers waiting for the lock go before the next summary
    return SummaryReport(
        candidates=candidates[:CANDIDATE_PREVIEW],
        candidate_count=len(candidates),
        total_tokens=sum(estimate_tokens(m.content) for m in candidates),
        deleted_count=sum(s.count for s in summaries),
        summary_id=summaries[0].summary_id if len(summaries) == 1 else None,
        summaries=summaries,
        dry_run=dry_run,
    )


def _write_summary(
    store: Store, owner: str, run: list[MemoryRecord], days: int, now: str, max_bytes: int
) -> SummaryWritten | None:
    """One summary of `run` and the deletion of its memories, in one transaction. A memory
    changed or deleted since it was read is left alone (its new text is not summarised)."""
    with store.transaction():
        current = store.memories.get_many([m.id for m in run])
        group = [m for m in run if (c := current.get(m.id)) is not None and c.updated_at == m.updated_at]
        if not group:
            return None
        new = NewMemory(
            api_key_id=owner,
            content=summarization.summary_text(group, days, max_bytes),
            key=f"{SUMMARY_KEY_PREFIX}{now}:{uuid.uuid4().hex[:8]}",
            type="semantic",
            metadata={
                "summarizedCount": len(group),
                "olderThanDays": days,
                "generatedAt": now,
                "summarizedIds": [m.id for m in group],
            },
        )
        summary, _ = store.memories.upsert(new, now=now, actor="summarize")
        for memory in group:
            store.memories.delete(memory.id, now=now, actor="summarize")
    log.info(
        "memory.summarized apiKeyId=%s count=%d summaryId=%s", owner_for_logs(owner), len(group), summary.id
    )
    return SummaryWritten(api_key_id=owner, summary_id=summary.id, count=len(group))


def sweep_decayed(
    store: Store, policy: DecayPolicy, *, owner: str | None, now: datetime, dry_run: bool
) -> DecayReport:
    """Delete (or with `dry_run`, list) the decayed memories among the oldest 5000."""
    rows = store.memories.oldest(owner, limit=SWEEP_SCAN_CAP + 1)
    capped = len(rows) > SWEEP_SCAN_CAP
    rows = rows[:SWEEP_SCAN_CAP]
    decayed = [m for m in rows if is_decayed(m, replace(policy, enabled=True), now)]
    if not dry_run:
        with store.transaction():
            for memory in decayed:
                store.memories.delete(memory.id, now=to_iso(now), actor="decay")
    return DecayReport(
        scanned=len(rows),
        decayed=len(decayed),
        deleted_ids=[m.id for m in decayed],
        skipped_disabled=False,
        capped=capped,
        dry_run=dry_run,
    )
