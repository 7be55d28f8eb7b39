"""The `settings` table on PostgreSQL, read through the process's copy
(`shared_copy.py`): a change made on this replica is in force at once, one made on
another within half a second."""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from memroute.store.postgres.db import PgDatabase
from memroute.store.postgres.shared_copy import SharedCopy, bump
from memroute.store.settings import decoded_settings


class PgSettingsRepository:
    def __init__(self, db: PgDatabase) -> None:
        self.db = db
        self._copy = SharedCopy(db, "settings", self._read)

    def read_all(self) -> Mapping[str, Any]:
        """Every stored value (JSON-decoded; an unreadable one left out), read-only."""
        if self.db.in_write_transaction():
            return self._read()
        return self._copy.read()

    def _read(self) -> Mapping[str, Any]:
        return MappingProxyType(decoded_settings(self.db.fetchall("SELECT key, value FROM settings")))

    def write(self, values: Mapping[str, Any], *, now: str) -> None:
        with self.db.write() as con:
            write_settings(con, values, now=now)
        self.forget()

    def forget(self) -> None:
        """Drop the copy once the write commits (the next read asks the database)."""
        self._copy.forget()


def write_settings(con: Any, values: Mapping[str, Any], *, now: str) -> None:
    """Store `values` inside the caller's transaction and bump the settings' version."""
    for key, value in values.items():
        con.execute(
            "INSERT INTO settings (key, value, updated_at) VALUES (%s, %s, %s)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            (key, json.dumps(value), now),
        )
    if values:
        bump(con)
