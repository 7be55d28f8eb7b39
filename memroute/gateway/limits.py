"""How many upstream calls the gateway makes at once, per client key and in total, and
how many requests a key may send a minute.

A request over a limit is refused at once (429 with `Retry-After`), never queued: a
queue behind a provider that hangs would hold every later request with it. A slot is
taken just before the upstream call and given back when the answer has been relayed,
however the call ends. Requests a minute are a token bucket per key: a key may send
`requests_per_minute` requests in a burst, then one every `60 / requests_per_minute`
seconds; a changed limit starts a full bucket. Every method is thread-safe (the
worker thread checks early, the event loop takes and gives back).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from memroute.errors import TooManyAttempts
from memroute.models.records import ApiKey

#: Seconds a client is told to wait when the slots are full (a slot frees when any call ends).
SLOT_RETRY_AFTER_S = 1
#: The limits' bucket of requests sent without a client key (`MEMROUTE_REQUIRE_API_KEY=false`).
NO_KEY = ""


@dataclass(frozen=True, slots=True)
class KeyLimits:
    """One key's limits: upstream calls at once and requests a minute (0: no such limit)."""

    max_concurrent: int
    requests_per_minute: int


@dataclass(slots=True)
class _Bucket:
    per_minute: int
    tokens: float
    updated: float


class Slot:
    """One upstream call's place; `release` gives it back (once, however often it is called)."""

    def __init__(self, limiter: GatewayLimiter, owner: str) -> None:
        self._limiter = limiter
        self._owner = owner
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._limiter._give_back(self._owner)


class GatewayLimiter:
    """The gateway's limits: `max_concurrent` calls in total, and each key's own limits
    (the defaults, or the key's stored overrides)."""

    def __init__(
        self,
        max_concurrent: int,
        defaults: KeyLimits,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_concurrent = max_concurrent
        self.defaults = defaults
        self._clock = clock
        self._lock = threading.Lock()
        self._running = 0
        self._running_by_key: dict[str, int] = {}
        self._buckets: dict[str, _Bucket] = {}

    def limits_of(self, key: ApiKey | None) -> KeyLimits:
        if key is None:
            return self.defaults
        return KeyLimits(
            key.max_concurrent if key.max_concurrent is not None else self.defaults.max_concurrent,
            key.requests_per_minute
            if key.requests_per_minute is not None
            else self.defaults.requests_per_minute,
        )

    def check(self, key: ApiKey | None) -> None:
        """Refuse (TooManyAttempts) a request that `acquire` would refuse now, taking
        nothing: lets the worker thread turn it away before recalling any memory."""
        with self._lock:
            self._refusal(key, take=False)

    def acquire(self, key: ApiKey | None) -> Slot:
        """A slot for one upstream call, and one of the key's requests of this minute;
        TooManyAttempts (with the seconds to wait) when a limit is reached."""
        owner = NO_KEY if key is None else key.id
        with self._lock:
            self._refusal(key, take=True)
            self._running += 1
            self._running_by_key[owner] = self._running_by_key.get(owner, 0) + 1
        return Slot(self, owner)

    def running(self, key_id: str | None = None) -> int:
        """Upstream calls running now: all of them, or those of one key."""
        with self._lock:
            return self._running if key_id is None else self._running_by_key.get(key_id, 0)

    def _refusal(self, key: ApiKey | None, *, take: bool) -> None:
        owner = NO_KEY if key is None else key.id
        limits = self.limits_of(key)
        if self._running_by_key.get(owner, 0) >= limits.max_concurrent:
            raise TooManyAttempts(
                f"this API key already has {limits.max_concurrent} requests running (its limit): "
                "retry when one has finished",
                retry_after=SLOT_RETRY_AFTER_S,
            )
        if self._running >= self.max_concurrent:
            raise TooManyAttempts(
                f"the gateway is running {self.max_concurrent} requests for all keys (its limit): "
                "retry shortly",
                retry_after=SLOT_RETRY_AFTER_S,
            )
        if limits.requests_per_minute:
            self._take_token(owner, limits.requests_per_minute, take=take)

    def _take_token(self, owner: str, per_minute: int, *, take: bool) -> None:
        now = self._clock()
        bucket = self._buckets.get(owner)
        if bucket is None or bucket.per_minute != per_minute:
            bucket = self._buckets[owner] = _Bucket(per_minute, float(per_minute), now)
        rate = per_minute / 60.0
        bucket.tokens = min(float(per_minute), bucket.tokens + (now - bucket.updated) * rate)
        bucket.updated = now
        if bucket.tokens < 1.0:
            wait = math.ceil((1.0 - bucket.tokens) / rate)
            raise TooManyAttempts(
                f"this API key has sent {per_minute} requests in the last minute (its limit): "
                f"retry in {wait} s",
                retry_after=wait,
            )
        if take:
            bucket.tokens -= 1.0

    def _give_back(self, owner: str) -> None:
        with self._lock:
            self._running -= 1
            left = self._running_by_key.get(owner, 1) - 1
            if left:
                self._running_by_key[owner] = left
            else:
                self._running_by_key.pop(owner, None)
