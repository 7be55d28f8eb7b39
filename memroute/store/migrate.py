"""Numbered SQL migrations (`migrations/NNNN_name.sql`) applied in order on open."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib import resources

import apsw

from memroute.clock import to_iso, utc_now
from memroute.errors import StoreError
from memroute.store.db import Database

log = logging.getLogger("memroute.store")

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def available_migrations(package: str = "memroute.store.migrations") -> list[Migration]:
    """The numbered migrations of `package` (SQLite's by default), oldest first."""
    found = []
    for entry in resources.files(package).iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found, key=lambda m: m.version)


def migrate(db: Database) -> list[int]:
    """Apply pending migrations; returns the versions applied. Refuses a newer schema."""
    migrations = available_migrations()
    known = {m.version for m in migrations}
    with db.write() as con:
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        done = {row[0] for row in con.execute("SELECT version FROM schema_migrations")}
        unknown = sorted(done - known)
        if unknown:
            raise StoreError(
                f"database schema version {max(unknown)} is newer than this memroute "
                f"(knows up to {max(known)}); upgrade memroute to open {db.path}"
            )
        applied = []
        for migration in migrations:
            if migration.version in done:
                continue
            try:
                con.execute(migration.sql)
            except apsw.Error as exc:
                raise StoreError(f"migration {migration.version} ({migration.name}) failed: {exc}") from exc
            con.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, to_iso(utc_now())),
            )
            applied.append(migration.version)
    for version in applied:
        log.info("store.migrated version=%s", version)
    return applied
