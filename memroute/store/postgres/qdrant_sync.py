"""The Qdrant sync's outbox (filled by the memories' triggers, see the migration) and
the back-fill's cursor on PostgreSQL."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memroute.models.records import MemoryRecord
from memroute.store.memory_sql import COLUMNS, row_to_memory
from memroute.store.postgres.db import PgDatabase
from memroute.store.postgres.settings import PgSettingsRepository, write_settings
from memroute.store.qdrant_sync import ENABLED_KEY
from memroute.store.records import OutboxEntry, SyncState


class PgQdrantSyncRepository:
    def __init__(self, db: PgDatabase, settings: PgSettingsRepository) -> None:
        self.db = db
        self._settings = settings

    def save_settings(self, values: Mapping[str, Any], *, now: str) -> None:
        """Write Qdrant settings. Turning Qdrant on restarts the back-fill in the same
        transaction; turning it off empties the queue."""
        with self.db.write() as con:
            row = con.execute(
                "SELECT value FROM settings WHERE key = %s FOR UPDATE", (ENABLED_KEY,)
            ).fetchone()
            was_enabled = row is not None and row[0] == "true"
            write_settings(con, values, now=now)
            if ENABLED_KEY in values and bool(values[ENABLED_KEY]) != was_enabled:
                if values[ENABLED_KEY]:
                    _restart(con, None, now, serving=False)
                else:
                    con.execute("DELETE FROM qdrant_outbox")
        self._settings.forget()

    def outbox(self, limit: int, api_key_id: str | None = None) -> list[OutboxEntry]:
        """The oldest queued changes (of one key, or of all)."""
        where, params = ("WHERE api_key_id = %s", [api_key_id]) if api_key_id is not None else ("", [])
        rows = self.db.fetchall(
            f"SELECT queued, memory_id, api_key_id, op FROM qdrant_outbox {where} ORDER BY queued LIMIT %s",
            (*params, limit),
        )
        return [OutboxEntry(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def ack(self, entries: Sequence[OutboxEntry]) -> None:
        """Forget pushed entries, unless the memory was queued again since they were read."""
        if not entries:
            return
        with self.db.write() as con:
            con.execute(
                "DELETE FROM qdrant_outbox AS o USING unnest(%s::text[], %s::bigint[]) AS e(id, queued)"
                " WHERE o.memory_id = e.id AND o.queued = e.queued",
                ([e.memory_id for e in entries], [e.rowid for e in entries]),
            )

    def outbox_count(self) -> int:
        row = self.db.fetchone("SELECT count(*) FROM qdrant_outbox")
        return int(row[0]) if row else 0

    def state(self) -> SyncState:
        row = self.db.fetchone(
            "SELECT target, backfill_next, backfill_total, pushed, orphans_removed, serving"
            " FROM qdrant_sync_state WHERE id = 1"
        )
        if row is None:
            return SyncState(None, 0, 0, 0, 0, False)
        target, backfill_next, total, pushed, orphans, serving = row
        return SyncState(target, backfill_next, int(total), int(pushed), int(orphans), bool(serving))

    def restart_backfill(self, target: str | None, *, now: str, serving: bool) -> None:
        """Push every memory again into `target`; `serving` says whether Qdrant may keep
        answering meanwhile (a refresh of a filled collection) or not (a new one)."""
        with self.db.write() as con:
            _restart(con, target, now, serving)

    def backfill_batch(self, start_rowid: int, limit: int) -> list[tuple[int, MemoryRecord]]:
        rows = self.db.fetchall(
            f"SELECT rowid, {COLUMNS} FROM memories WHERE rowid >= %s ORDER BY rowid LIMIT %s",
            (start_rowid, limit),
        )
        return [(int(row[0]), row_to_memory(row[1:])) for row in rows]

    def advance(self, target: str, start: int, next_rowid: int | None, pushed: int, *, now: str) -> bool:
        """Move the cursor of `target`'s back-fill from `start` on (None: finished, Qdrant
        may serve). False, and nothing written, if it was restarted, retargeted or moved
        by another replica meanwhile."""
        with self.db.write() as con:
            done = con.execute(
                "UPDATE qdrant_sync_state SET backfill_next = %s, pushed = pushed + %s, updated_at = %s,"
                " serving = CASE WHEN %s::bigint IS NULL THEN 1 ELSE serving END"
                " WHERE id = 1 AND target = %s AND backfill_next = %s",
                (next_rowid, pushed, now, next_rowid, target, start),
            )
            return done.rowcount > 0

    def note_orphans_removed(self, count: int) -> None:
        with self.db.write() as con:
            con.execute(
                "UPDATE qdrant_sync_state SET orphans_removed = orphans_removed + %s WHERE id = 1", (count,)
            )

    def remaining(self, start_rowid: int) -> int:
        row = self.db.fetchone("SELECT count(*) FROM memories WHERE rowid >= %s", (start_rowid,))
        return int(row[0]) if row else 0

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        if not ids:
            return set()
        return {
            str(r[0]) for r in self.db.fetchall("SELECT id FROM memories WHERE id = ANY(%s)", (list(ids),))
        }


def _restart(con: Any, target: str | None, now: str, serving: bool) -> None:
    total = con.execute("SELECT count(*) FROM memories").fetchone()[0]
    con.execute(
        "UPDATE qdrant_sync_state SET target = %s, backfill_next = 0, backfill_total = %s, pushed = 0,"
        " orphans_removed = 0, serving = %s, updated_at = %s WHERE id = 1",
        (target, total, int(serving), now),
    )
