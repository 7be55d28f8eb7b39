"""The `settings` table on PostgreSQL, read through a copy that is at most
`FRESH_S` old: a change made on one replica is in force on all within that time."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import Any

from memroute.store.postgres.db import PgDatabase

# How long a replica trusts its copy before it asks whether the settings changed.
FRESH_S = 0.5


class PgSettingsRepository:
    def __init__(self, db: PgDatabase) -> None:
        self.db = db
        self._lock = threading.Lock()
        self._copy: tuple[int, dict[str, Any]] | None = None  # (version, values)
        self._checked = 0.0  # monotonic time the copy was last known current

    def read_all(self) -> dict[str, Any]:
        """Every stored value (JSON-decoded; an unreadable one left out)."""
        if self.db.in_write_transaction():
            return _decoded(self.db.fetchall("SELECT key, value FROM settings"))
        with self._lock:
            if self._copy is not None and time.monotonic() - self._checked < FRESH_S:
                return dict(self._copy[1])
        version = self._version()
        with self._lock:
            copy = self._copy
        if copy is None or copy[0] != version:
            copy = (version, _decoded(self.db.fetchall("SELECT key, value FROM settings")))
        with self._lock:
            self._copy, self._checked = copy, time.monotonic()
        return dict(copy[1])

    def _version(self) -> int:
        row = self.db.fetchone(
            "SELECT last_value + (CASE WHEN is_called THEN 1 ELSE 0 END) FROM settings_version"
        )
        return int(row[0]) if row else 0

    def write(self, values: Mapping[str, Any], *, now: str) -> None:
        with self.db.write() as con:
            write_settings(con, values, now=now)
        with self._lock:
            self._copy = None

    def forget(self) -> None:
        """Drop the copy (the next read asks the database)."""
        with self._lock:
            self._copy = None


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
