"""A copy of a rarely written table that every request reads (the settings, the
providers), kept while the database's version number of those tables stays the same:
a read asks for the number (one small read) and reads the table again only when it moved,
or when the copy was dropped by a write of this process. With `fresh_s`, a copy checked
less than that long ago is trusted without asking (PostgreSQL's replicas)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class CopyHeld:
    """What a copy holds; shared by the stores of one database in a process when writes
    through any of them must drop it for all."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.value: tuple[int, Any] | None = None  # (version, what was read)
        self.checked = 0.0  # monotonic time the value was last known current
        self.dropped = 0  # how many times a write here dropped it

    def drop(self) -> None:
        with self.lock:
            self.dropped += 1
            self.value = None


class VersionedCopy(Generic[T]):
    """What `load` reads, kept in `held` while `version()` stays the same; the caller must
    not change it."""

    def __init__(
        self,
        load: Callable[[], T],
        version: Callable[[], int],
        *,
        fresh_s: float = 0.0,
        held: CopyHeld | None = None,
    ) -> None:
        self._load = load
        self._version = version
        self._fresh_s = fresh_s
        self.held = held if held is not None else CopyHeld()

    def read(self) -> T:
        held = self.held
        value, dropped = held.value, held.dropped  # each read whole: a lock only to replace them
        if value is not None and self._fresh_s and time.monotonic() - held.checked < self._fresh_s:
            return value[1]  # type: ignore[no-any-return]
        version = self._version()  # asked before the table is read: a copy is never older than its number
        if value is not None and value[0] == version:
            if self._fresh_s:
                held.checked = time.monotonic()
            return value[1]  # type: ignore[no-any-return]
        value = (version, self._load())
        with held.lock:
            if held.dropped == dropped:  # no write here meanwhile: what was read is current
                held.value, held.checked = value, time.monotonic()
        return value[1]
