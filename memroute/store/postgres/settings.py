"""The `settings` table on PostgreSQL, read through one copy per database per process.
A write through this process replaces the copy at once; a write by another replica is
seen within `FRESH_S` (the copy's version is checked against the database's that often)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import Any

from memroute.store.postgres.db import PgDatabase

# How long a replica trusts its copy before it asks whether the settings changed.
FRESH_S = 0.5


class _Copy:
    """The settings as last read: (version, values), and when it was last known current."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.values: tuple[int, dict[str, Any]] | None = None
        self.checked = 0.0  # monotonic
        self.dropped = 0  # how many times a write here dropped it


_copies: dict[str, _Copy] = {}
_copies_lock = threading.Lock()


def _copy_of(url: str) -> _Copy:
    """The process's one copy of the settings of the database at `url` (every store opened
    on it in this process shares it, so each sees the others' writes at once)."""
    with _copies_lock:
        return _copies.setdefault(url, _Copy())


class PgSettingsRepository:
    def __init__(self, db: PgDatabase) -> None:
        self.db = db
        self._copy = _copy_of(db.url)

    def read_all(self) -> dict[str, Any]:
        """Every stored value (JSON-decoded; an unreadable one left out)."""
        if self.db.in_write_transaction():
            return _decoded(self.db.fetchall("SELECT key, value FROM settings"))
        shared = self._copy
        with shared.lock:
            if shared.values is not None and time.monotonic() - shared.checked < FRESH_S:
                return dict(shared.values[1])
            held, dropped = shared.values, shared.dropped
        version = self._version()
        if held is None or held[0] != version:
            held = (version, _decoded(self.db.fetchall("SELECT key, value FROM settings")))
        with shared.lock:
            if shared.dropped == dropped:  # no write here meanwhile: what was read is current
                shared.values, shared.checked = held, time.monotonic()
        return dict(held[1])

    def _version(self) -> int:
        row = self.db.fetchone(
            "SELECT last_value + (CASE WHEN is_called THEN 1 ELSE 0 END) FROM settings_version"
        )
        return int(row[0]) if row else 0

    def write(self, values: Mapping[str, Any], *, now: str) -> None:
        with self.db.write() as con:
            write_settings(con, values, now=now)
        self.forget()

    def forget(self) -> None:
        """Drop the copy once the write commits (the next read asks the database)."""

        def drop() -> None:
            with self._copy.lock:
                self._copy.values = None
                self._copy.dropped += 1

        self.db.after_commit(drop)


def write_settings(con: Any, values: Mapping[str, Any], *, now: str) -> None:
    """Store `values` inside the caller's transaction and bump the settings' version."""
    for key, value in values.items():
        con.execute(
            "INSERT INTO settings (key, value, updated_at) VALUES (%s, %s, %s)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            (key, json.dumps(value), now),
        )
    if values:
        con.execute("SELECT nextval('settings_version')")


def _decoded(rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, raw in rows:
        try:
            values[key] = json.loads(raw)
        except ValueError:
            continue  # an unreadable value falls back to its default
    return values
