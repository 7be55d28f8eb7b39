"""Typed decay (opt-in): episodic memories fade after a number of days
unless they are used; factual, procedural and semantic memories never decay."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from memroute.clock import parse_time
from memroute.models.records import MemoryRecord

SWEEP_SCAN_CAP = 5000


@dataclass(frozen=True, slots=True)
class DecayPolicy:
    enabled: bool = False
    episodic_days: int = 30  # 0 = episodic memories are immune too
    access_immunity: int = 3  # this many uses make a memory immune; 0 = off

    def ttl_days(self, memory_type: str) -> int | None:
        if memory_type == "episodic" and self.episodic_days > 0:
            return self.episodic_days
        return None


def decay_deadline(memory: MemoryRecord, policy: DecayPolicy) -> datetime | None:
    """When the memory decays, or None if it never does."""
    ttl = policy.ttl_days(memory.type)
    if ttl is None:
        return None
    if policy.access_immunity > 0 and memory.access_count >= policy.access_immunity:
        return None
    base = parse_time(memory.last_accessed_at or memory.created_at)
    return base + timedelta(days=ttl)


def is_decayed(memory: MemoryRecord, policy: DecayPolicy, now: datetime) -> bool:
    deadline = decay_deadline(memory, policy)
    return deadline is not None and now > deadline
