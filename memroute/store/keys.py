"""The `api_keys` table: client keys, stored as SHA-256 hashes only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memroute.models.records import ApiKey
from memroute.store.db import Database

COLUMNS = (
    "id, name, prefix, created_at, last_used_at, revoked_at, max_concurrent, requests_per_minute,"
    " requires_user_id"
)


def row_to_key(row: Sequence[Any]) -> ApiKey:
    return ApiKey(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], bool(row[8]))


class KeyRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    def create(self, key_id: str, name: str, key_hash: str, prefix: str, *, now: str) -> ApiKey:
        with self.db.write() as con:
            con.execute(
                "INSERT INTO api_keys (id, name, key_hash, prefix, created_at) VALUES (?, ?, ?, ?, ?)",
                (key_id, name, key_hash, prefix, now),
            )
        return ApiKey(key_id, name, prefix, now, None, None)

    def list(self) -> list[ApiKey]:
        rows = self.db.read().execute(f"SELECT {COLUMNS} FROM api_keys ORDER BY created_at, id")
        return [row_to_key(r) for r in rows]

    def get(self, key_id: str) -> ApiKey | None:
        row = self.db.read().execute(f"SELECT {COLUMNS} FROM api_keys WHERE id = ?", (key_id,)).fetchone()
        return row_to_key(row) if row else None

    def find_by_hash(self, key_hash: str) -> ApiKey | None:
        row = (
            self.db.read()
            .execute(f"SELECT {COLUMNS} FROM api_keys WHERE key_hash = ?", (key_hash,))
            .fetchone()
        )
        return row_to_key(row) if row else None

    def revoke(self, key_id: str, *, now: str) -> bool:
        with self.db.write() as con:
            con.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (now, key_id)
            )
            return bool(con.changes())

    def touch(self, key_id: str, *, now: str) -> None:
        with self.db.write() as con:
            con.execute("UPDATE api_keys SET last_used_at = ? WHERE id = ?", (now, key_id))

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
            con.execute(
                "UPDATE api_keys SET max_concurrent = ?, requests_per_minute = ?, requires_user_id = ?"
                " WHERE id = ?",
                (max_concurrent, requests_per_minute, int(requires_user_id), key_id),
            )
            return bool(con.changes())
