"""Compacting old memories: one English summary memory per key.

Pure functions; the service runs them inside one transaction per key so a
summary and the deletion of its originals land together or not at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import groupby

from memroute.models.records import MemoryRecord

MAX_SENTENCES = 3
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")


def first_sentences(content: str, count: int = MAX_SENTENCES) -> str:
    """The first `count` sentences with their own punctuation; short texts unchanged."""
    sentences = [s.strip() for s in _SENTENCE.findall(content) if s.strip(" .!?\n\t")]
    if len(sentences) <= count:
        return content.strip()
    return " ".join(sentences[:count])


def by_owner(memories: Iterable[MemoryRecord]) -> dict[str, list[MemoryRecord]]:
    ordered = sorted(memories, key=lambda m: (m.api_key_id, m.updated_at))
    return {owner: list(group) for owner, group in groupby(ordered, key=lambda m: m.api_key_id)}


def summary_text(memories: list[MemoryRecord], older_than_days: int) -> str:
    noun = "memory" if len(memories) == 1 else "memories"
    lines = [f"Summary of {len(memories)} {noun} older than {older_than_days} days:"]
    for memory in memories:
        label = f"[{memory.type}] {memory.key}: " if memory.key else f"[{memory.type}] "
        lines.append("- " + label + first_sentences(memory.content))
    return "\n".join(lines)


def is_summary(memory: MemoryRecord) -> bool:
    """Summaries are not summarised again (that would lose detail twice)."""
    return memory.key.startswith("summary:")
