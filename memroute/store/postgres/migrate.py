"""PostgreSQL's own numbered migrations (`postgres/migrations/NNNN_name.sql`), applied
on start under an advisory lock, so replicas that start together apply each once."""

from __future__ import annotations

import logging

import psycopg

from memroute.clock import to_iso, utc_now
from memroute.errors import StoreError
from memroute.store.migrate import available_migrations
from memroute.store.postgres.db import PgDatabase

log = logging.getLogger("memroute.store.postgres")

# The advisory lock every replica takes to migrate (any number, the same everywhere).
MIGRATION_LOCK = 7202611


def migrate(db: PgDatabase) -> list[int]:
    """Apply pending migrations in one transaction; the versions applied. Refuses a
    schema newer than this memroute knows."""
    migrations = available_migrations("memroute.store.postgres.migrations")
    known = {m.version for m in migrations}
    with db.write() as con:
        con.execute("SELECT pg_advisory_xact_lock(%s, 0)", (MIGRATION_LOCK,))
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)"
        )
        done = {row[0] for row in con.execute("SELECT version FROM schema_migrations")}
        unknown = sorted(done - known)
        if unknown:
            raise StoreError(
                f"database schema version {max(unknown)} is newer than this memroute "
                f"(knows up to {max(known)}); upgrade memroute to use this database"
            )
        applied = []
        for migration in migrations:
            if migration.version in done:
                continue
            try:
                con.execute(migration.sql.encode("utf-8"))
            except psycopg.Error as exc:
                raise StoreError(f"migration {migration.version} ({migration.name}) failed: {exc}") from exc
            con.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                (migration.version, migration.name, to_iso(utc_now())),
            )
            applied.append(migration.version)
    for version in applied:
        log.info("store.postgres.migrated version=%s", version)
    return applied
