"""SQL for the Qdrant sync: the outbox that triggers fill (migration 0004) and the
resumable back-fill cursor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memroute.models.records import MemoryRecord
from memroute.store.db import Database
from memroute.store.memory_sql import COLUMNS, row_to_memory
from memroute.store.records import OutboxEntry, SyncState
from memroute.store.settings import write_settings

ENABLED_KEY = "qdrantEnabled"


class QdrantSyncRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    # -- settings that change what is queued ----------------------------------------

    def save_settings(self, values: Mapping[str, Any], *, now: str) -> None:
        """Write Qdrant settings. Turning Qdrant on restarts the back-fill in the same
        transaction (so memories changed from now on are queued and the rest are pushed);
        turning it off empties the queue (a later enable back-fills everything again)."""
        with self.db.write() as con:
            row = con.execute("SELECT value FROM settings WHERE key = ?", (ENABLED_KEY,)).fetchone()
            was_enabled = row is not None and row[0] == "true"
            write_settings(con, values, now=now)
            if ENABLED_KEY not in values or bool(values[ENABLED_KEY]) == was_enabled:
                return
            if values[ENABLED_KEY]:
                _restart(con, None, now, serving=False)
            else:
                con.execute("DELETE FROM qdrant_outbox")

    # -- the outbox ------------------------------------------------------------------

    def outbox(self, limit: int, api_key_id: str | None = None) -> list[OutboxEntry]:
        """The oldest queued changes (of one key, or of all)."""
        where, params = ("WHERE api_key_id = ?", [api_key_id]) if api_key_id is not None else ("", [])
        rows = self.db.read().execute(
            f"SELECT rowid, memory_id, api_key_id, op FROM qdrant_outbox {where} ORDER BY rowid LIMIT ?",
            (*params, limit),
        )
        return [OutboxEntry(*row) for row in rows]

    def ack(self, entries: Sequence[OutboxEntry]) -> None:
        """Forget pushed entries, unless the memory was queued again since they were read."""
        if not entries:
            return
        with self.db.write() as con:
            con.executemany(
                "DELETE FROM qdrant_outbox WHERE memory_id = ? AND rowid = ?",
                [(e.memory_id, e.rowid) for e in entries],
            )

    def outbox_count(self) -> int:
        return _count(self.db, "SELECT COUNT(*) FROM qdrant_outbox")

    # -- the back-fill ---------------------------------------------------------------

    def state(self) -> SyncState:
        row = (
            self.db.read()
            .execute(
                "SELECT target, backfill_next, backfill_total, pushed, orphans_removed, serving"
                " FROM qdrant_sync_state WHERE id = 1"
            )
            .fetchone()
        )
        if row is None:
            return SyncState(None, 0, 0, 0, 0, False)
        target, backfill_next, total, pushed, orphans, serving = row
        return SyncState(target, backfill_next, total, pushed, orphans, bool(serving))

    def restart_backfill(self, target: str | None, *, now: str, serving: bool) -> None:
        """Push every memory again into `target`; `serving` says whether Qdrant may keep
        answering meanwhile (a refresh of a filled collection) or not (a new one)."""
        with self.db.write() as con:
            _restart(con, target, now, serving)

    def backfill_batch(self, start_rowid: int, limit: int) -> list[tuple[int, MemoryRecord]]:
        rows = self.db.read().execute(
            f"SELECT rowid, {COLUMNS} FROM memories WHERE rowid >= ? ORDER BY rowid LIMIT ?",
            (start_rowid, limit),
        )
        return [(row[0], row_to_memory(row[1:])) for row in rows]

    def advance(self, target: str, start: int, next_rowid: int | None, pushed: int, *, now: str) -> bool:
        """Move the cursor of `target`'s back-fill from `start` on (None: finished, Qdrant
        may serve). False, and nothing written, if it was restarted, retargeted or moved
        by another process meanwhile."""
        with self.db.write() as con:
            con.execute(
                "UPDATE qdrant_sync_state SET backfill_next = ?, pushed = pushed + ?, updated_at = ?,"
                " serving = CASE WHEN ? IS NULL THEN 1 ELSE serving END"
                " WHERE id = 1 AND target = ? AND backfill_next = ?",
                (next_rowid, pushed, now, next_rowid, target, start),
            )
            return con.changes() > 0

    def note_orphans_removed(self, count: int) -> None:
        with self.db.write() as con:
            con.execute(
                "UPDATE qdrant_sync_state SET orphans_removed = orphans_removed + ? WHERE id = 1", (count,)
            )

    def remaining(self, start_rowid: int) -> int:
        return _count(self.db, "SELECT COUNT(*) FROM memories WHERE rowid >= ?", start_rowid)

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        if not ids:
            return set()
        marks = ",".join("?" * len(ids))
        rows = self.db.read().execute(f"SELECT id FROM memories WHERE id IN ({marks})", tuple(ids))
        return {row[0] for row in rows}


def _count(db: Database, sql: str, *params: Any) -> int:
    row = db.read().execute(sql, params).fetchone()
    return int(row[0]) if row else 0


def _restart(con: Any, target: str | None, now: str, serving: bool) -> None:
    total = con.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    con.execute(
        "UPDATE qdrant_sync_state SET target = ?, backfill_next = 0, backfill_total = ?, pushed = 0,"
        " orphans_removed = 0, serving = ?, updated_at = ? WHERE id = 1",
        (target, total, int(serving), now),
    )
