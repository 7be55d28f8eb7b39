"""Connections spread evenly over the server processes that share one listening socket
(`memroute serve --workers N`).

A client or proxy with a pool of keep-alive connections opens them in a burst and keeps
them, so the process each connection lands on serves everything sent on it. asyncio
takes every connection waiting each time the socket is ready, and the kernel wakes the
processes in no fair order: 16 connections opened at once went 16 / 0 or 15 / 1 to two
processes in some runs, one process then serving every request while the other idled.

Here each process counts its open connections in memory shared with the others (set up
by the parent, `ConnectionCounts`), takes one connection at a time, and lets a new one
go to the others while it holds more than `SLACK` connections above the process holding
the fewest, as long as the others keep taking them. A process that takes none for
`MAX_HOLD_S` (busy, or stopped) is passed over for one connection, and each further
time in a row the wait is halved: a pool stays even across a pause of up to a few
hundred milliseconds (a loaded machine, a collection), and a burst waits about twice
`MAX_HOLD_S` in all for a process that stays stopped. A process still starting, or gone,
counts as holding more than any other (`ABSENT`) until it serves.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import multiprocessing
import select
from typing import Any

SLACK = 1  # connections a process may hold above the least loaded one before it holds back
MAX_HOLD_S = 0.25  # how long a process leaves a waiting connection to the others, at most
FORGET_S = 1.0  # how long a process passed over stays known as slow to take connections
RECHECK_S = 0.002  # how soon a process that held back looks at the socket again
ABSENT = 1 << 30  # the count of a process not serving (starting, or gone): never the least

SHARING_LOOP = "memroute.web.connection_share:SharingLoop"


class ConnectionCounts:
    """The open connections of each of `n` processes, in shared memory: process `index`
    writes only its own count, and reads the others'."""

    def __init__(self, n: int) -> None:
        self.counts = multiprocessing.get_context("spawn").RawArray("i", [ABSENT] * n)

    def of(self, index: int) -> ConnectionShare:
        """What process `index` holds, for that process."""
        return ConnectionShare(self.counts, index)

    def absent(self, index: int) -> None:
        """Mark process `index` as not serving (before it starts, after it is gone)."""
        self.counts[index] = ABSENT


class ConnectionShare:
    """One process's count among the others' (see the module's docstring); the others see
    it once the process serves."""

    def __init__(self, counts: Any, index: int) -> None:
        self.counts = counts
        self.index = index
        self.held = 0
        self._shown = False

    def serving(self) -> None:
        """This process has started: the others see its count from now on."""
        self._shown = True
        self.counts[self.index] = self.held

    def opened(self) -> None:
        self.held += 1
        if self._shown:
            self.counts[self.index] = self.held

    def closed(self) -> None:
        self.held -= 1
        if self._shown:
            self.counts[self.index] = self.held

    def least_other(self) -> int:
        """The fewest connections another process holds (`ABSENT` with no other serving)."""
        return min((count for i, count in enumerate(self.counts) if i != self.index), default=ABSENT)

    def ahead(self) -> bool:
        """Whether this process holds more than `SLACK` connections above the least loaded."""
        return self.held > self.least_other() + SLACK


class SharingLoop(asyncio.SelectorEventLoop):
    """asyncio's event loop, taking one new connection each time the listening socket is
    ready, and none for a while (`MAX_HOLD_S` at most) while `share` is ahead."""

    share: ConnectionShare | None = None
    _holding_since: float | None = None
    _least_at_hold = ABSENT  # the least loaded other's count when the hold (re)started
    _passed_over = 0  # holds in a row that ran out with the others taking none
    _passed_at = 0.0  # when the last of them ran out

    def _accept_connection(self, protocol_factory: Any, sock: Any, *args: Any) -> None:
        share = self.share
        if share is not None and share.ahead():
            if self._holds_back(share):
                self.remove_reader(sock.fileno())
                self.call_later(RECHECK_S, functools.partial(self._look_again, protocol_factory, sock, *args))
                return
        else:
            self._passed_over = 0
        self._holding_since = None
        # (sslcontext, server, backlog, …): asyncio's `backlog` is how many it takes at once.
        super()._accept_connection(protocol_factory, sock, *args[:2], 1, *args[3:])  # type: ignore[misc]

    def _holds_back(self, share: ConnectionShare) -> bool:
        """Whether this process, ahead of the others, leaves the waiting connection to them
        a while longer: up to `MAX_HOLD_S` since they last took one, halved for each hold
        in a row that ran out with them taking none."""
        now, least = self.time(), share.least_other()
        if least > self._least_at_hold or (self._passed_over and now - self._passed_at > FORGET_S):
            # The others are taking connections (or were passed over long ago): a new hold.
            self._holding_since, self._passed_over = None, 0
        if self._holding_since is None:
            self._holding_since, self._least_at_hold = now, least
        if now - self._holding_since < MAX_HOLD_S / (1 << self._passed_over):
            return True
        self._passed_over, self._passed_at = min(self._passed_over + 1, 16), now
        return False

    def _look_again(self, protocol_factory: Any, sock: Any, *args: Any) -> None:
        server = args[1] if len(args) > 1 else None
        if sock.fileno() < 0 or (server is not None and not server.is_serving()):
            return
        if not _waiting(sock):  # another process took what was waiting: the hold is over
            self._holding_since = None
        self.add_reader(sock.fileno(), self._accept_connection, protocol_factory, sock, *args)


def _waiting(sock: Any) -> bool:
    """Whether a connection waits on the listening socket `sock`."""
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    return bool(poller.poll(0))


def can_share() -> bool:
    """Whether asyncio's loop accepts connections as `SharingLoop` expects (a private
    method: another Python version falls back to asyncio's own loop)."""
    method = getattr(asyncio.selector_events.BaseSelectorEventLoop, "_accept_connection", None)
    try:
        names = list(inspect.signature(method).parameters) if method is not None else []
    except (TypeError, ValueError):
        return False
    return names[:6] == ["self", "protocol_factory", "sock", "sslcontext", "server", "backlog"]
