"""Copies of rarely written tables (settings, providers) read on every request: one per
database per process, so every store opened on it in this process sees the others'
writes at once. A write through this process drops the copy when it commits; a write by
another replica is seen within `FRESH_S`: that often the copy's version is compared with
the database's (`settings_version`, a sequence every write of these tables bumps)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from memroute.store.postgres.db import PgDatabase

# How long a replica trusts its copy before it asks whether the tables changed.
FRESH_S = 0.5

T = TypeVar("T")


class _Held:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.value: tuple[int, Any] | None = None  # (version, what was read)
        self.checked = 0.0  # monotonic time the value was last known current
        self.dropped = 0  # how many times a write here dropped it


_held: dict[tuple[str, str], _Held] = {}
_held_lock = threading.Lock()


def bump(con: Any) -> None:
    """Inside a write transaction of settings or providers: their version moves on."""
    con.execute("SELECT nextval('settings_version')")


class SharedCopy(Generic[T]):
    """What `load` reads, held for `db`'s process under `name`; the caller must not change it."""

    def __init__(self, db: PgDatabase, name: str, load: Callable[[], T]) -> None:
        self.db = db
        self._load = load
        with _held_lock:
            self._held = _held.setdefault((db.url, name), _Held())

    def read(self) -> T:
        held = self._held
        with held.lock:
            if held.value is not None and time.monotonic() - held.checked < FRESH_S:
                return held.value[1]  # type: ignore[no-any-return]
            value, dropped = held.value, held.dropped
        version = self._version()
        if value is None or value[0] != version:
            value = (version, self._load())
        with held.lock:
            if held.dropped == dropped:  # no write here meanwhile: what was read is current
                held.value, held.checked = value, time.monotonic()
        return value[1]

    def _version(self) -> int:
        row = self.db.fetchone("SELECT last_value + is_called::int FROM settings_version")
        return int(row[0]) if row else 0

    def forget(self) -> None:
        """Drop the copy once this thread's write commits (the next read asks the database)."""

        def drop() -> None:
            with self._held.lock:
                self._held.value = None
                self._held.dropped += 1

        self.db.after_commit(drop)
