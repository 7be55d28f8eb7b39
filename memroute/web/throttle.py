"""The throttle of wrong admin tokens, shared by the dashboard login, `/api/*` and `/mcp`.

Two limits over a sliding minute: failures per client address, and failures over all
addresses together. Its memory is bounded whatever the number of addresses: at most
`MAX_ADDRESSES` are remembered (the least recently failing one is forgotten first), and
each keeps no more failure times than its limit. While a limit is reached every admin
token is refused with a 429, the correct one too (otherwise the answer would tell a
guesser when it is right). The console path that never depends on this throttle is
`memroute dashboard-link` (a one-time login link written straight into the database).
"""

from __future__ import annotations

import hmac
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from memroute.errors import TooManyAttempts

WINDOW_S = 60.0
MAX_ADDRESSES = 4096


class AdminTokenThrottle:
    """Counts wrong admin tokens; `check` raises TooManyAttempts (with `retry_after`)
    while the caller's address or the whole server is over its limit."""

    def __init__(
        self,
        per_address: int,
        total: int,
        *,
        max_addresses: int = MAX_ADDRESSES,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_address = per_address
        self.total = total
        self.max_addresses = max_addresses
        self._timer = timer
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
                raise TooManyAttempts(
                    "too many wrong admin tokens on this server: try again in "
                    f"{_wait(self._everyone, now)} s (on the server's machine, "
                    "`memroute dashboard-link` opens the dashboard without the token)",
                    retry_after=_wait(self._everyone, now),
                )

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

    @property
    def addresses(self) -> int:
        """How many addresses are remembered (never more than `max_addresses`)."""
        return len(self._by_address)


def _full(failures: deque[float], limit: int, now: float) -> bool:
    while failures and now - failures[0] >= WINDOW_S:
        failures.popleft()
    return len(failures) >= limit


def _wait(failures: deque[float], now: float) -> int:
    """Whole seconds until the oldest failure leaves the window (at least 1)."""
    return max(1, math.ceil(WINDOW_S - (now - failures[0])))
