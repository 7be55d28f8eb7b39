"""The user's turn of a chat, queued while the provider works (the SQLite store).

The turn is queued once the request has been handed to the provider's connection, so its
write overlaps the provider's work instead of delaying the request, and the provider's
answer is relayed only once it is queued. A request that never left (a refused
connection, a client that went away) has its turn queued when its call ends."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor


class DueTurn:
    """Calling it queues the turn, once: with `queue_briefly` on the event loop, or, when
    that would have waited (it returns False), with `queue` in a thread of `threads`.
    `queued` waits until it is queued."""

    __slots__ = ("_done", "_queue", "_queue_briefly", "_threads", "_waiting")

    def __init__(
        self, queue_briefly: Callable[[], bool], queue: Callable[[], object], threads: Executor
    ) -> None:
        self._queue_briefly = queue_briefly
        self._queue = queue
        self._threads = threads
        self._done = False
        self._waiting: asyncio.Future[object] | None = None

    def __call__(self) -> None:
        if self._done:
            return
        self._done = True
        if not self._queue_briefly():
            self._waiting = asyncio.get_running_loop().run_in_executor(self._threads, self._queue)

    async def queued(self) -> None:
        """Queue the turn if it was not yet, and wait for a write left to a thread (a
        cancelled wait leaves that write to finish)."""
        self()
        if self._waiting is not None:
            await asyncio.shield(self._waiting)
