"""Compacting old memories into English summary memories, several per key when needed.

Pure functions; the service writes each summary and deletes the memories it covers in
one transaction. A summary lists at most `MAX_SOURCES` memories and never exceeds the
content limit, so every memory it replaces has its line in it (a line longer than
`MAX_ENTRY_BYTES` is cut, and ends with "…").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import groupby

from memroute.models.records import SUMMARY_KEY_PREFIX, MemoryRecord

MAX_SENTENCES = 3
# Memories one summary replaces, so one transaction (and its metadata) stays small.
MAX_SOURCES = 100
# The longest line one memory gets in a summary.
MAX_ENTRY_BYTES = 2000
_ELLIPSIS = "…"
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


def _header(count: int, older_than_days: int) -> str:
    noun = "memory" if count == 1 else "memories"
    return f"Summary of {count} {noun} older than {older_than_days} days:"


def _cut(text: str, max_bytes: int) -> str:
    """`text` in at most `max_bytes` UTF-8 bytes, ending with "…" when it was cut."""
    if len(text.encode("utf-8")) <= max_bytes:
        return text
    room = max(max_bytes - len(_ELLIPSIS.encode("utf-8")), 0)
    return text.encode("utf-8")[:room].decode("utf-8", "ignore").rstrip() + _ELLIPSIS


def _entry_budget(older_than_days: int, max_bytes: int) -> int:
    """Bytes left for the lines once the longest header is written."""
    return max_bytes - len(_header(MAX_SOURCES, older_than_days).encode("utf-8"))


def _entry(memory: MemoryRecord, budget: int) -> str:
    label = f"[{memory.type}] {memory.key}: " if memory.key else f"[{memory.type}] "
    return "\n" + _cut("- " + label + first_sentences(memory.content), min(MAX_ENTRY_BYTES, budget) - 1)


def chunks(
    memories: list[MemoryRecord], older_than_days: int, max_bytes: int
) -> Iterator[list[MemoryRecord]]:
    """`memories` in runs that each make one summary of at most `max_bytes` bytes and
    `MAX_SOURCES` memories, in their order."""
    budget = _entry_budget(older_than_days, max_bytes)
    run: list[MemoryRecord] = []
    used = 0
    for memory in memories:
        size = len(_entry(memory, budget).encode("utf-8"))
        if run and (used + size > budget or len(run) >= MAX_SOURCES):
            yield run
            run, used = [], 0
        run.append(memory)
        used += size
    if run:
        yield run


def summary_text(memories: list[MemoryRecord], older_than_days: int, max_bytes: int) -> str:
    """The summary of one run from `chunks`: a header, then one line per memory."""
    budget = _entry_budget(older_than_days, max_bytes)
    return _header(len(memories), older_than_days) + "".join(_entry(m, budget) for m in memories)


def is_summary(memory: MemoryRecord) -> bool:
    """Summaries are not summarised again (that would lose detail twice)."""
    return memory.key.startswith(SUMMARY_KEY_PREFIX)
