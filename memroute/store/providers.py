"""The `providers` table: upstream LLM endpoints, read through this process's copy (every
chat routes through it), which is read again only once the file's settings or providers
changed (`config_version.py`). Stored secrets never leave this layer except to the
gateway that calls the provider."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from memroute.models.records import ProviderRecord
from memroute.store.config_version import ConfigVersion
from memroute.store.db import Database
from memroute.store.versioned_copy import VersionedCopy

COLUMNS = "id, base_url, api_key_env, api_key, is_default, created_at, updated_at, format"


def row_to_provider(row: Sequence[Any]) -> ProviderRecord:
    return ProviderRecord(row[0], row[1], row[2], row[3], bool(row[4]), row[5], row[6], row[7])


class ProviderRepository:
    def __init__(self, db: Database, version: ConfigVersion) -> None:
        self.db = db
        self._copy = VersionedCopy(self._read, version.current)

    def upsert(self, provider: ProviderRecord) -> ProviderRecord:
        """Create or replace a provider; making it the default clears the old default."""
        with self.db.write() as con:
            if provider.is_default:
                con.execute(
                    "UPDATE providers SET is_default = 0 WHERE is_default = 1 AND id <> ?", (provider.id,)
                )
            con.execute(
                "INSERT INTO providers (id, base_url, api_key_env, api_key, is_default, created_at,"
                " updated_at, format) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
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
        found = self.get(provider.id)
        assert found is not None
        return found

    def list(self) -> builtins.list[ProviderRecord]:
        return list(self._read() if self.db.in_write_transaction() else self._copy.read())

    def _read(self) -> tuple[ProviderRecord, ...]:
        return tuple(
            row_to_provider(r) for r in self.db.read().execute(f"SELECT {COLUMNS} FROM providers ORDER BY id")
        )

    def get(self, provider_id: str) -> ProviderRecord | None:
        return next((p for p in self.list() if p.id == provider_id), None)

    def delete(self, provider_id: str) -> bool:
        with self.db.write() as con:
            con.execute("DELETE FROM providers WHERE id = ?", (provider_id,))
            return bool(con.changes())
