"""The per-key memory cap (`MEMROUTE_MAX_MEMORIES_PER_KEY`).

A key at its cap keeps working. What happens to a new memory depends on who writes it:

- an explicit add (REST, MCP, CLI, dashboard) is refused with `Conflict` (HTTP 409):
  the caller asked for this memory and is told why it was not stored;
- a fact learned from a chat makes room: the key's least used memories, oldest first,
  are deleted (their text stays in history, actor `evict`), one hundredth of the cap at
  a time so the search for them runs rarely. Summaries are never evicted. A chat never
  fails because of the cap.

A key's end users share its cap: their memories count with the key's own, and a chat
of one makes room among all of them.

Replacing a memory by its key never counts against the cap. Counting a key's memories
costs ~20 ms at 100,000, so the cap keeps an upper bound per key (its last count plus
the memories added here since) and counts again only when that bound reaches the cap or
is a minute old. Must be called inside the write transaction that stores the memory.
"""

from __future__ import annotations

import logging
import threading
import time

from memroute.errors import Conflict
from memroute.models.owners import split_owner
from memroute.store import Store

log = logging.getLogger("memroute.memory")

RECOUNT_AFTER_S = 60.0
# Keys whose bound is kept; past this many (health probes use a new owner each time)
# the bounds start over, and each key is counted again when it next writes.
TRACKED_KEYS = 10_000


class MemoryCap:
    def __init__(self, store: Store, limit: int) -> None:
        """`limit` memories per key at most; 0: no cap."""
        self.limit = limit
        self._store = store
        self._bounds: dict[str, tuple[int, float]] = {}  # key -> (count at most, counted at)
        self._lock = threading.Lock()
        self.evicted = 0  # since start
        self.refused = 0

    def _count(self, owner: str, incoming: int) -> int:
        """How many memories `owner` holds (an upper bound while well below the cap)."""
        with self._lock:
            bound, counted = self._bounds.get(owner, (self.limit, 0.0))
        if bound + incoming <= self.limit and time.monotonic() - counted < RECOUNT_AFTER_S:
            return bound
        exact = self._store.memories.count_owner(owner)
        with self._lock:
            if len(self._bounds) >= TRACKED_KEYS:
                self._bounds.clear()
            self._bounds[owner] = (exact, time.monotonic())
        return exact

    def _added(self, owner: str, count: int) -> None:
        with self._lock:
            bound, counted = self._bounds.get(owner, (self.limit, 0.0))
            self._bounds[owner] = (bound + count, counted)

    def admit(self, owner: str, key: str) -> None:
        """Let one explicit add of `owner` (a key, or its end user) in, or raise `Conflict`
        when the key is full."""
        if not self.limit or (key and self._store.memories.get_by_key(owner, key) is not None):
            return
        api_key = split_owner(owner)[0]  # its end users share its cap
        if self._count(api_key, 1) + 1 > self.limit:
            with self._lock:
                self.refused += 1
            raise Conflict(
                f"this API key holds {self.limit} memories, the most MEMROUTE_MAX_MEMORIES_PER_KEY"
                " allows: delete or summarise some first"
            )
        self._added(api_key, 1)

    def make_room(self, owner: str, incoming: int, *, now: str) -> None:
        """Evict enough of the least used memories of `owner`'s key (its own and its end
        users') for `incoming` new ones."""
        if not self.limit:
            return
        api_key = split_owner(owner)[0]
        held = self._count(api_key, incoming)
        if held + incoming > self.limit:
            slack = max(1, self.limit // 100)
            excess = held + incoming - self.limit + slack - 1
            ids = self._store.memories.least_valuable(api_key, limit=min(excess, held))
            for memory_id in ids:
                self._store.memories.delete(memory_id, now=now, actor="evict")
            with self._lock:
                self.evicted += len(ids)
                self._bounds[api_key] = (held - len(ids), time.monotonic())
            log.info("memory.evicted apiKeyId=%s count=%d", api_key, len(ids))
        self._added(api_key, incoming)
