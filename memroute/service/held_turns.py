"""Chat turns held in this process while the database is full.

A chat is answered whether or not its turn could be queued for extraction; when the
database is full the queue cannot take it, so the turn (already redacted) is held here
and written to the queue by the extraction worker as soon as there is room again, before
it extracts anything. Held turns are bounded (`max_bytes`, the oldest dropped first, each
drop logged) and live only in this process: they are lost if it ends while the disk is
still full.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memroute.errors import StorageFull

log = logging.getLogger("memroute.memory")

DEFAULT_MAX_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class HeldTurn:
    """One text waiting for the queue: whose, from which session, source, request and
    speaker, when it came, whether it is kept as an episode and/or read for facts, and
    whether its write must wait for the database's log to reach its disk (see `JobStore`)."""

    owner: str
    session: str
    source: str
    text: str
    queued_at: str
    request_id: str = ""
    speaker: str = ""
    capture: bool = False
    facts: bool = True
    durable: bool = True


class HeldTurns:
    """Chat turns on their way to the queue; `write` stores a batch of them there (one
    transaction, returning their job ids, raising StorageFull while the database is full)."""

    def __init__(
        self, write: Callable[[list[HeldTurn]], list[int]], max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        self._write = write
        self._max_bytes = max_bytes
        self._turns: deque[HeldTurn] = deque()
        self._bytes = 0
        self._lock = threading.Lock()
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._turns)

    def queue(self, turns: list[HeldTurn]) -> list[int]:
        """Write `turns` to the queue; their job ids, or none when the database is full
        (they are held then, until `write_back` finds room)."""
        try:
            return self._write(turns)
        except StorageFull:
            self.hold(turns)
            return []

    def hold(self, turns: Sequence[HeldTurn]) -> None:
        """Keep `turns` until there is room; past the budget the oldest are dropped."""
        with self._lock:
            for turn in turns:
                self._turns.append(turn)
                self._bytes += len(turn.text)
            while self._bytes > self._max_bytes and self._turns:
                self._bytes -= len(self._turns.popleft().text)
                self.dropped += 1
                log.warning(
                    "memory.extraction.held_dropped total=%d: the database is still full", self.dropped
                )
            held = len(self._turns)
        log.warning("memory.extraction.held_while_full held=%d", held)

    def write_back(self) -> int:
        """Write every held turn to the queue; how many were written. On StorageFull they
        stay held (in their order) and the error is raised."""
        with self._lock:
            turns, self._turns, size, self._bytes = list(self._turns), deque(), self._bytes, 0
        if not turns:
            return 0
        try:
            self._write(turns)
        except StorageFull:
            with self._lock:
                self._turns.extendleft(reversed(turns))
                self._bytes += size
            raise
        log.info("memory.extraction.held_written count=%d", len(turns))
        return len(turns)
