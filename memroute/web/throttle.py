"""The throttle of wrong admin tokens, shared by the dashboard login, `/api/*` and `/mcp`.

Two limits over a sliding minute: failures per client address, and failures over all
addresses together. Its memory is bounded whatever the number of addresses: at most
`MAX_ADDRESSES` are remembered (the least recently failing one is forgotten first), and
each keeps no more failure times than its limit. While a limit is reached every admin
token is refused with a 429, the correct one too (otherwise the answer would tell a
guesser when it is right). The console path that never depends on this throttle is
`memroute dashboard-link` (a one-time login link written straight into the database).

On PostgreSQL (replicas on several machines) the failures are also counted in the
database (`shared`), and the limits hold for all replicas together.
"""

from __future__ import annotations

import hmac
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Protocol

from memroute.errors import TooManyAttempts

WINDOW_S = 60.0
MAX_ADDRESSES = 4096


class Counts(Protocol):
    mine: int
    everyone: int
    oldest_mine: float | None
    oldest_everyone: float | None


class FailureLog(Protocol):
    """Failures counted where every replica sees them (the store's `admin_failures`)."""

    def since(self, address: str, since: float) -> Counts: ...
    def record(self, address: str, at: float) -> None: ...


class AdminTokenThrottle:
    """Counts wrong admin tokens; `check` raises TooManyAttempts (with `retry_after`)
    while the caller's address or the whole server is over its limit. With `shared` (a
    log every replica writes, when it returns one) the limits `shared_limits` (per address,
    in all) hold over every replica's failures too."""

    def __init__(
        self,
        per_address: int,
        total: int,
        *,
        max_addresses: int = MAX_ADDRESSES,
        timer: Callable[[], float] = time.monotonic,
        shared: Callable[[], FailureLog | None] = lambda: None,
        shared_limits: tuple[int, int] | None = None,
    ) -> None:
        self.per_address = per_address
        self.total = total
        self.max_addresses = max_addresses
        self._timer = timer
        self._shared = shared
        self._shared_limits = shared_limits or (per_address, total)
        self._by_address: OrderedDict[str, deque[float]] = OrderedDict()
        self._everyone: deque[float] = deque(maxlen=total)
        self._lock = threading.Lock()

    def check(self, address: str) -> None:
        """Refuse (429) if this address, or every address together, failed too often."""
        with self._lock:
            now = self._timer()
            mine = self._by_address.get(address)
            if mine is not None and _full(mine, self.per_address, now):
                raise TooManyAttempts(
                    f"too many wrong admin tokens from this address: try again in {_wait(mine, now)} s",
                    retry_after=_wait(mine, now),
                )
            if _full(self._everyone, self.total, now):
                _refuse_everyone(_wait(self._everyone, now))
        log = self._shared()
        if log is not None:
            self._check_shared(log, address)

    def _check_shared(self, log: FailureLog, address: str) -> None:
        """The same limits over the failures every replica recorded in the last minute."""
        now = time.time()
        counts = log.since(address, now - WINDOW_S)
        per_address, total = self._shared_limits
        if counts.mine >= per_address and counts.oldest_mine is not None:
            wait = max(1, math.ceil(WINDOW_S - (now - counts.oldest_mine)))
            raise TooManyAttempts(
                f"too many wrong admin tokens from this address: try again in {wait} s", retry_after=wait
            )
        if counts.everyone >= total and counts.oldest_everyone is not None:
            _refuse_everyone(max(1, math.ceil(WINDOW_S - (now - counts.oldest_everyone))))

    def verify(self, address: str, given: str, expected: str) -> bool:
        """Whether `given` is the `expected` token (compared in constant time): refused
        (429) first while over a limit, and counted when wrong."""
        self.check(address)
        if hmac.compare_digest(given.encode(), expected.encode()):
            return True
        self.fail(address)
        return False

    def fail(self, address: str) -> None:
        """Count one wrong admin token from `address`."""
        with self._lock:
            now = self._timer()
            self._everyone.append(now)
            mine = self._by_address.pop(address, None)
            if mine is None:
                mine = deque(maxlen=self.per_address)
                if len(self._by_address) >= self.max_addresses:
                    self._by_address.popitem(last=False)
            mine.append(now)
            self._by_address[address] = mine  # the most recent failure last
        log = self._shared()
        if log is not None:
            log.record(address, time.time())

    @property
    def addresses(self) -> int:
        """How many addresses are remembered (never more than `max_addresses`)."""
        return len(self._by_address)


def _refuse_everyone(wait: int) -> None:
    raise TooManyAttempts(
        f"too many wrong admin tokens on this server: try again in {wait} s (on the server's"
        " machine, `memroute dashboard-link` opens the dashboard without the token)",
        retry_after=wait,
    )


def _full(failures: deque[float], limit: int, now: float) -> bool:
    while failures and now - failures[0] >= WINDOW_S:
        failures.popleft()
    return len(failures) >= limit


def _wait(failures: deque[float], now: float) -> int:
    """Whole seconds until the oldest failure leaves the window (at least 1)."""
    return max(1, math.ceil(WINDOW_S - (now - failures[0])))
