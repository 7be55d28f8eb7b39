"""The `settings` table: one JSON value per key, read through this process's copy,
which is read again only once the file's settings or providers changed
(`config_version.py`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import apsw

from memroute.store.config_version import ConfigVersion
from memroute.store.db import Database
from memroute.store.versioned_copy import VersionedCopy


class SettingsRepository:
    def __init__(self, db: Database, version: ConfigVersion) -> None:
        self.db = db
        self._copy = VersionedCopy(self._read, version.current)

    def read_all(self) -> Mapping[str, Any]:
        """Every stored value (JSON-decoded; an unreadable one left out), read-only."""
        if self.db.in_write_transaction():
            return self._read()
        return self._copy.read()

    def _read(self) -> Mapping[str, Any]:
        return MappingProxyType(decoded_settings(self.db.read().execute("SELECT key, value FROM settings")))

    def write(self, values: Mapping[str, Any], *, now: str) -> None:
        with self.db.write() as con:
            write_settings(con, values, now=now)


def write_settings(con: apsw.Connection, values: Mapping[str, Any], *, now: str) -> None:
    """Store `values` inside the caller's transaction."""
    for key, value in values.items():
        con.execute(
            "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
            (key, json.dumps(value), now),
        )


def decoded_settings(rows: Iterable[Sequence[Any]]) -> dict[str, Any]:
    """(key, JSON text) rows as values; an unreadable value is left out (its default applies)."""
    values: dict[str, Any] = {}
    for key, raw in rows:
        try:
            values[key] = json.loads(raw)
        except ValueError:
            continue
    return values
