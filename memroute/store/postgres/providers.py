"""The `providers` table on PostgreSQL, read through the process's copy
(`shared_copy.py`: every chat routes through it; a change made on another replica is
seen within half a second). Stored secrets never leave this layer except to the gateway
that calls the provider."""

from __future__ import annotations

import builtins

from memroute.models.records import ProviderRecord
from memroute.store.postgres.db import PgDatabase
from memroute.store.postgres.shared_copy import SharedCopy, bump
from memroute.store.providers import COLUMNS, row_to_provider


class PgProviderRepository:
    def __init__(self, db: PgDatabase) -> None:
        self.db = db
        self._copy = SharedCopy(db, "providers", self._read)

    def upsert(self, provider: ProviderRecord) -> ProviderRecord:
        """Create or replace a provider; making it the default clears the old default."""
        with self.db.write() as con:
            if provider.is_default:
                con.execute(
                    "UPDATE providers SET is_default = 0 WHERE is_default = 1 AND id <> %s", (provider.id,)
                )
            con.execute(
                "INSERT INTO providers (id, base_url, api_key_env, api_key, is_default, created_at,"
                " updated_at, format) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET base_url = excluded.base_url,"
                " api_key_env = excluded.api_key_env, api_key = excluded.api_key,"
                " is_default = excluded.is_default, updated_at = excluded.updated_at,"
                " format = excluded.format",
                (
                    provider.id,
                    provider.base_url,
                    provider.api_key_env,
                    provider.api_key,
                    int(provider.is_default),
                    provider.created_at,
                    provider.updated_at,
                    provider.format,
                ),
            )
            bump(con)
        self._copy.forget()
        found = self.get(provider.id)
        assert found is not None
        return found

    def list(self) -> builtins.list[ProviderRecord]:
        return list(self._read() if self.db.in_write_transaction() else self._copy.read())

    def _read(self) -> tuple[ProviderRecord, ...]:
        return tuple(
            row_to_provider(r) for r in self.db.fetchall(f"SELECT {COLUMNS} FROM providers ORDER BY id")
        )

    def get(self, provider_id: str) -> ProviderRecord | None:
        return next((p for p in self.list() if p.id == provider_id), None)

    def delete(self, provider_id: str) -> bool:
        with self.db.write() as con:
            deleted = con.execute("DELETE FROM providers WHERE id = %s", (provider_id,)).rowcount > 0
            if deleted:
                bump(con)
        self._copy.forget()
        return deleted
