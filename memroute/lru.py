"""Small thread-safe LRU structures: a cache with a time-to-live that counts hits and
misses, and counts of recent events per key."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class LruTtlCache(Generic[V]):
    def __init__(
        self, max_size: int, ttl_seconds: float, timer: Callable[[], float] = time.monotonic
    ) -> None:
        self.max_size = max_size
        self.ttl = ttl_seconds
        self._timer = timer
        self._data: OrderedDict[Hashable, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        #: bumped by every invalidation, so a reader can tell that a write raced its read
        self.version = 0

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            entry = self._data.get(key)
            if entry is None or self._timer() - entry[0] > self.ttl:
                if entry is not None:
                    del self._data[key]
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return entry[1]

    def set(self, key: Hashable, value: V, *, if_version: int | None = None) -> None:
        """Store `value`; with `if_version`, only if nothing was invalidated since that version."""
        if self.max_size <= 0:
            return
        with self._lock:
            if if_version is not None and if_version != self.version:
                return
            self._data[key] = (self._timer(), value)
            self._data.move_to_end(key)
            while len(self._data) > self.max_size:
                self._data.popitem(last=False)

    def invalidate(self, key: Hashable) -> None:
        with self._lock:
            self.version += 1
            self._data.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self.version += 1
            self._data.clear()

    def reset(self) -> None:
        """Drop every entry and the hit/miss counters."""
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._data)


class RecentCounts:
    """How often each key was seen within a window: the count starts again once the first
    event counted is older than `window_s`. At most `max_keys` keys are remembered (the
    one counted longest ago is forgotten first)."""

    def __init__(self, window_s: float, max_keys: int, timer: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self.max_keys = max_keys
        self._timer = timer
        self._counts: OrderedDict[Hashable, tuple[int, float]] = OrderedDict()
        self._lock = threading.Lock()

    def count(self, key: Hashable) -> int:
        """Count one event of `key`; its events within the window, this one included."""
        now = self._timer()
        with self._lock:
            times, first = self._counts.pop(key, (0, now))
            if now - first > self.window_s:
                times, first = 0, now
            self._counts[key] = (times + 1, first)
            while len(self._counts) > self.max_keys:
                self._counts.popitem(last=False)
            return times + 1

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._counts.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._counts.clear()
