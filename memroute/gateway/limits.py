"""How many upstream calls the gateway makes at once, per client key and in total, and
how many requests a key may send a minute.

A request over a limit is refused at once (429 with `Retry-After`), never queued: a
queue behind a provider that hangs would hold every later request with it. A slot is
taken just before the upstream call and given back when the answer has been relayed,
however the call ends. Requests a minute are a token bucket per key: a key may send
`requests_per_minute` requests in a burst, then one every `60 / requests_per_minute`
seconds; a changed limit starts a full bucket. Every method is thread-safe (the
worker thread checks early, the event loop takes and gives back).

Before a request even reaches a worker thread (where its key is looked up), `arrive`
counts it on the event loop by a digest of the secret it presents: a key that already
has as many requests in progress as its limit allows (being admitted or running) is
refused there, and at most `max_concurrent` requests of all keys wait to be admitted, so
a flood from one key never queues in front of the others' requests.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from memroute.errors import TooManyAttempts
from memroute.models.records import ApiKey

#: Seconds a client is told to wait when the slots are full (a slot frees when any call ends).
SLOT_RETRY_AFTER_S = 1
#: The limits' bucket of requests sent without a client key (`MEMROUTE_REQUIRE_API_KEY=false`).
NO_KEY = ""
#: Secrets whose key (and its limits) `arrive` remembers, the least recently seen forgotten first.
KNOWN_SECRETS = 10_000


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


class Arrival:
    """One request counted by `arrive`; `admitted` ends its admission (once)."""

    def __init__(self, limiter: GatewayLimiter, digest: bytes) -> None:
        self._limiter = limiter
        self._digest = digest
        self._open = True

    def admitted(self, key: ApiKey | None) -> None:
        """The request's key was looked up (None: no key, or it failed before)."""
        if self._open:
            self._open = False
            self._limiter._end_admission(self._digest, key)


def process_share(limit: int, processes: int) -> int:
    """One of `processes` server processes' part of `limit`, rounded up (0, no limit, stays 0)."""
    return math.ceil(limit / processes)


class GatewayLimiter:
    """The gateway's limits: `max_concurrent` calls in total, and each key's own limits
    (the defaults, or the key's stored overrides).

    With `processes` > 1 (`memroute serve --workers N`) each process enforces its share of
    every limit, rounded up: the kernel spreads connections over the processes, so
    together they hold the configured limits without talking to each other."""

    def __init__(
        self,
        max_concurrent: int,
        defaults: KeyLimits,
        clock: Callable[[], float] = time.monotonic,
        on_refusal: Callable[[str], None] = lambda reason: None,
        processes: int = 1,
    ) -> None:
        """`on_refusal` hears the reason of every refusal: `key_concurrent`,
        `total_concurrent` or `key_rpm`."""
        self.processes = processes
        self.max_concurrent = self._share(max_concurrent)
        self.defaults = defaults
        self._clock = clock
        self._on_refusal = on_refusal
        self._lock = threading.Lock()
        self._running = 0
        self._running_by_key: dict[str, int] = {}
        self._buckets: dict[str, _Bucket] = {}
        self._admitting: dict[bytes, int] = {}  # by secret digest
        self._admitting_total = 0
        self._known: OrderedDict[bytes, ApiKey] = OrderedDict()  # secret digest -> its key

    def arrive(self, secret: str | None) -> Arrival:
        """Count a request as it arrives (on the event loop, before its key is looked up);
        TooManyAttempts when its key already has its limit of requests in progress, or
        when `max_concurrent` requests already wait to be admitted."""
        digest = hashlib.sha256((secret or "").encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            known = self._known.get(digest)
            limit = self.limits_of(known).max_concurrent
            running = self._running_by_key.get(known.id, 0) if known is not None else 0
            waiting = self._admitting.get(digest, 0)
            if running + waiting >= limit:
                refusal = ("key_concurrent", _key_busy(limit))
            elif self._admitting_total >= self.max_concurrent:
                refusal = ("total_concurrent", _gateway_busy(self.max_concurrent))
            else:
                refusal = None
                self._admitting[digest] = waiting + 1
                self._admitting_total += 1
        if refusal is not None:
            self._refuse(*refusal)
        return Arrival(self, digest)

    def _end_admission(self, digest: bytes, key: ApiKey | None) -> None:
        with self._lock:
            self._admitting_total -= 1
            left = self._admitting.get(digest, 1) - 1
            if left:
                self._admitting[digest] = left
            else:
                self._admitting.pop(digest, None)
            if key is not None:
                self._known[digest] = key
                self._known.move_to_end(digest)
                while len(self._known) > KNOWN_SECRETS:
                    self._known.popitem(last=False)

    def _share(self, limit: int) -> int:
        return process_share(limit, self.processes)

    def limits_of(self, key: ApiKey | None) -> KeyLimits:
        """The limits this process holds `key` to (its share of them, see the class)."""
        given = self.defaults
        if key is not None:
            given = KeyLimits(
                key.max_concurrent if key.max_concurrent is not None else given.max_concurrent,
                key.requests_per_minute if key.requests_per_minute is not None else given.requests_per_minute,
            )
        if self.processes == 1:
            return given
        return KeyLimits(self._share(given.max_concurrent), self._share(given.requests_per_minute))

    def check(self, key: ApiKey | None) -> None:
        """Refuse (TooManyAttempts) a request that `acquire` would refuse now, taking
        nothing: lets the worker thread turn it away before recalling any memory."""
        with self._lock:
            refusal = self._refusal(key, take=False)
        if refusal is not None:
            self._refuse(*refusal)

    def acquire(self, key: ApiKey | None) -> Slot:
        """A slot for one upstream call, and one of the key's requests of this minute;
        TooManyAttempts (with the seconds to wait) when a limit is reached."""
        owner = NO_KEY if key is None else key.id
        with self._lock:
            refusal = self._refusal(key, take=True)
            if refusal is None:
                self._running += 1
                self._running_by_key[owner] = self._running_by_key.get(owner, 0) + 1
        if refusal is not None:
            self._refuse(*refusal)
        return Slot(self, owner)

    def _refuse(self, reason: str, error: TooManyAttempts) -> NoReturn:
        self._on_refusal(reason)
        raise error

    def _refusal(self, key: ApiKey | None, *, take: bool) -> tuple[str, TooManyAttempts] | None:
        """Why the key's next call is refused now (None: it is not), with the lock held."""
        owner = NO_KEY if key is None else key.id
        limits = self.limits_of(key)
        if self._running_by_key.get(owner, 0) >= limits.max_concurrent:
            return "key_concurrent", _key_busy(limits.max_concurrent)
        if self._running >= self.max_concurrent:
            return "total_concurrent", _gateway_busy(self.max_concurrent)
        if limits.requests_per_minute:
            wait = self._take_token(owner, limits.requests_per_minute, take=take)
            if wait:
                return "key_rpm", TooManyAttempts(
                    f"this API key has sent {limits.requests_per_minute} requests in the last minute "
                    f"(its limit): retry in {wait} s",
                    retry_after=wait,
                )
        return None

    def _take_token(self, owner: str, per_minute: int, *, take: bool) -> int:
        """0 when the key may send a request now (taking its token if `take`), else the
        seconds until it may."""
        now = self._clock()
        bucket = self._buckets.get(owner)
        if bucket is None or bucket.per_minute != per_minute:
            bucket = self._buckets[owner] = _Bucket(per_minute, float(per_minute), now)
        rate = per_minute / 60.0
        bucket.tokens = min(float(per_minute), bucket.tokens + (now - bucket.updated) * rate)
        bucket.updated = now
        if bucket.tokens < 1.0:
            return math.ceil((1.0 - bucket.tokens) / rate)
        if take:
            bucket.tokens -= 1.0
        return 0

    def _give_back(self, owner: str) -> None:
        with self._lock:
            self._running -= 1
            left = self._running_by_key.get(owner, 1) - 1
            if left:
                self._running_by_key[owner] = left
            else:
                self._running_by_key.pop(owner, None)


def _key_busy(limit: int) -> TooManyAttempts:
    return TooManyAttempts(
        f"this API key already has {limit} requests running (its limit): retry when one has finished",
        retry_after=SLOT_RETRY_AFTER_S,
    )


def _gateway_busy(limit: int) -> TooManyAttempts:
    return TooManyAttempts(
        f"the gateway is running {limit} requests for all keys (its limit): retry shortly",
        retry_after=SLOT_RETRY_AFTER_S,
    )
