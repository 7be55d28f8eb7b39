"""The `api_keys` table on PostgreSQL: client keys, stored as SHA-256 hashes only."""

from __future__ import annotations

import builtins

from memroute.models.records import ApiKey
from memroute.store.keys import COLUMNS, row_to_key
from memroute.store.postgres.db import PgDatabase


class PgKeyRepository:
    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def create(self, key_id: str, name: str, key_hash: str, prefix: str, *, now: str) -> ApiKey:
        with self.db.write() as con:
            con.execute(
                "INSERT INTO api_keys (id, name, key_hash, prefix, created_at) VALUES (%s, %s, %s, %s, %s)",
                (key_id, name, key_hash, prefix, now),
            )
        return ApiKey(key_id, name, prefix, now, None, None)

    def list(self) -> builtins.list[ApiKey]:
        return [
            row_to_key(r) for r in self.db.fetchall(f"SELECT {COLUMNS} FROM api_keys ORDER BY created_at, id")
        ]

    def get(self, key_id: str) -> ApiKey | None:
        row = self.db.fetchone(f"SELECT {COLUMNS} FROM api_keys WHERE id = %s", (key_id,))
        return row_to_key(row) if row else None

    def find_by_hash(self, key_hash: str) -> ApiKey | None:
        row = self.db.fetchone(f"SELECT {COLUMNS} FROM api_keys WHERE key_hash = %s", (key_hash,))
        return row_to_key(row) if row else None

    def revoke(self, key_id: str, *, now: str) -> bool:
        with self.db.write() as con:
            done = con.execute(
                "UPDATE api_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL", (now, key_id)
            )
            return done.rowcount > 0

    def touch(self, key_id: str, *, now: str) -> None:
        with self.db.write() as con:
            con.execute("UPDATE api_keys SET last_used_at = %s WHERE id = %s", (now, key_id))

    def set_limits(
        self,
        key_id: str,
        *,
        max_concurrent: int | None,
        requests_per_minute: int | None,
        requires_user_id: bool,
    ) -> bool:
        """Store the key's gateway settings: its limit overrides (None: the server's
        default) and whether its requests must name an end user."""
        with self.db.write() as con:
            done = con.execute(
                "UPDATE api_keys SET max_concurrent = %s, requests_per_minute = %s, requires_user_id = %s"
                " WHERE id = %s",
                (max_concurrent, requests_per_minute, int(requires_user_id), key_id),
            )
            return done.rowcount > 0
