"""The `settings` table: one JSON value per key."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import apsw

from memroute.store.db import Database


class SettingsRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def read_all(self) -> dict[str, Any]:
        return decoded_settings(self.db.read().execute("SELECT key, value FROM settings"))

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
