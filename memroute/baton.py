"""Threads that take turns through their Python work, in arrival order.

Threads that all run Python fight over the interpreter's lock: each time one of them
waits briefly (a SQLite call, a lock), the lock passes to another and the kernel switches
threads. With 16 chats admitted at once that was ~80 thread switches per chat, and each
chat cost ~25 % more CPU than with one admission at a time. A `Baton` lets one holder run
at a time, the others waiting in arrival order. A holder that waits outside Python (an
embedding, a Qdrant server, a write lock another thread holds) steps out with
`outside()` and takes its turn again afterwards, ahead of those who have not started (what
a chat has begun, it finishes first). A holder that keeps the baton past its
lease (`lease_s`) lets the next waiter in beside it, so a wait nobody declared holds the
next one back for a lease at most.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol


class Lockable(Protocol):
    def acquire(self, blocking: bool = ..., timeout: float = ...) -> bool: ...


_held = threading.local()  # the baton this thread holds (`_held.baton`), if any


class _Turn:
    """One waiter's place: its lock is released when it is handed the baton."""

    __slots__ = ("granted", "lock", "thread")

    def __init__(self, thread: int) -> None:
        self.thread = thread
        self.lock = threading.Lock()
        self.lock.acquire()
        self.granted = False


class Baton:
    """One holder at a time, in arrival order; a holder past `lease_s` lets the next in."""

    def __init__(self, lease_s: float = 0.02) -> None:
        self.lease_s = lease_s
        self._lock = threading.Lock()
        self._waiting: deque[_Turn] = deque()
        self._holders: dict[int, float] = {}  # thread id → when it took the baton

    def _fresh_until(self) -> float:
        """When the last holder still within its lease reaches its end (in the past when
        none is: the next may come in). Call with `_lock` held."""
        return max(self._holders.values(), default=-self.lease_s) + self.lease_s

    def _enter(self, thread: int) -> None:
        self._holders[thread] = time.monotonic()

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the baton for the block (at once when this thread already holds it)."""
        if getattr(_held, "baton", None) is self:
            yield
            return
        self._take()
        _held.baton = self
        try:
            yield
        finally:
            _held.baton = None
            self._give()

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    def _take(self, *, first: bool = False) -> None:
        """Wait for the baton: behind every waiter, or ahead of them all when `first`. A
        waiter with n others ahead of it waits (n + 1) leases at most."""
        me = threading.get_ident()
        with self._lock:
            if not self._waiting and time.monotonic() >= self._fresh_until():
                self._enter(me)
                return
            turn = _Turn(me)
            ahead = 0 if first else len(self._waiting)
            if first:
                self._waiting.appendleft(turn)
            else:
                self._waiting.append(turn)
        deadline = time.monotonic() + self.lease_s * (ahead + 1)
        while True:
            turn.lock.acquire(timeout=max(deadline - time.monotonic(), 0.0))
            with self._lock:
                if turn.granted:
                    return
                now = time.monotonic()
                fresh_until = self._fresh_until()
                if self._waiting[0] is not turn:
                    deadline = now + self.lease_s
                elif now < fresh_until:
                    deadline = fresh_until
                else:  # every holder is past its lease: in beside them
                    self._waiting.popleft()
                    self._enter(me)
                    return

    def _give(self) -> None:
        """Leave; the first waiter comes in unless a holder within its lease remains."""
        with self._lock:
            del self._holders[threading.get_ident()]
            if self._waiting and time.monotonic() >= self._fresh_until():
                turn = self._waiting.popleft()
                self._enter(turn.thread)
                turn.granted = True
                turn.lock.release()


@contextmanager
def outside() -> Iterator[None]:
    """Step out of the baton this thread holds (if any) for the block: for a wait outside
    Python, when the others can use the interpreter meanwhile. The baton is taken again
    when the block ends, ahead of the waiters that have not held it yet."""
    baton: Baton | None = getattr(_held, "baton", None)
    if baton is None:
        yield
        return
    _held.baton = None
    baton._give()
    try:
        yield
    finally:
        baton._take(first=True)
        _held.baton = baton


def acquire(lock: Lockable) -> None:
    """Take `lock`, outside this thread's baton while another thread holds it."""
    if not lock.acquire(blocking=False):
        with outside():
            lock.acquire()
