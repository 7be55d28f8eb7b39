"""Copies of rarely written tables (settings, providers) read on every request: one per
database per process, so every store opened on it in this process sees the others'
writes at once. A write through this process drops the copy when it commits; a write by
another replica is seen within `FRESH_S`: that often the copy's version is compared with
the database's (`settings_version`, a sequence every write of these tables bumps)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from memroute.store.postgres.db import PgDatabase
from memroute.store.versioned_copy import CopyHeld, VersionedCopy

# How long a replica trusts its copy before it asks whether the tables changed.
FRESH_S = 0.5

T = TypeVar("T")

_held: dict[tuple[str, str], CopyHeld] = {}
_held_lock = threading.Lock()


def bump(con: Any) -> None:
    """Inside a write transaction of settings or providers: their version moves on."""
    con.execute("SELECT nextval('settings_version')")


class SharedCopy(VersionedCopy[T]):
    """What `load` reads, held for `db`'s process under `name`; the caller must not change it."""

    def __init__(self, db: PgDatabase, name: str, load: Callable[[], T]) -> None:
        with _held_lock:
            held = _held.setdefault((db.url, name), CopyHeld())
        super().__init__(load, self._database_version, fresh_s=FRESH_S, held=held)
        self.db = db

    def _database_version(self) -> int:
        row = self.db.fetchone("SELECT last_value + is_called::int FROM settings_version")
        return int(row[0]) if row else 0

    def forget(self) -> None:
        """Drop the copy once this thread's write commits (the next read asks the database)."""
        self.db.after_commit(self.held.drop)
