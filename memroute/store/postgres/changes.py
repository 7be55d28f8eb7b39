"""The PostgreSQL change log (`memory_changes`, in commit order: see its migration) as a
`ChangeFeed` for the in-process key indexes (`store/key_index.py`)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from memroute.store.changes import CHANGES_KEPT_S, split_marks
from memroute.store.memory_sql import COLUMNS
from memroute.store.postgres.db import PgDatabase


class PgChangeFeed:
    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    def count(self, owner: str, *, upto: int | None = None) -> int:
        """The owner's memories, counted up to `upto` when given (a cheaper count)."""
        if upto is None:
            row = self.db.fetchone("SELECT count(*) FROM memories WHERE api_key_id = %s", (owner,))
        else:
            row = self.db.fetchone(
                "SELECT count(*) FROM (SELECT 1 FROM memories WHERE api_key_id = %s LIMIT %s) AS k",
                (owner, upto),
            )
        return int(row[0]) if row else 0

    @contextmanager
    def snapshot(self, owner: str) -> Iterator[tuple[int, Iterable[Sequence[Any]]]]:
        """The log's last seq and the owner's rows (rowid, then `COLUMNS`) in one snapshot
        (the caller's transaction, when it is inside one)."""
        if self.db.in_write_transaction():
            with self.db.read() as con:
                yield self._read(con, owner)
            return
        with self.db.read() as con, con.transaction():
            con.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            yield self._read(con, owner)

    @staticmethod
    def _read(con: Any, owner: str) -> tuple[int, Iterable[Sequence[Any]]]:
        seq = int(con.execute("SELECT coalesce(max(seq), 0) FROM memory_changes").fetchone()[0])
        rows = con.execute(
            f"SELECT rowid, {COLUMNS} FROM memories WHERE api_key_id = %s", (owner,)
        ).fetchall()
        return seq, rows

    def since(self, owner: str, seq: int, limit: int | None = None) -> tuple[list[tuple[int, int]], int]:
        """The owner's changes after `seq` as (seq, rowid), the first `limit` of them when
        given, and up to which seq the log was pruned, read together."""
        changes = "SELECT seq, memory_rowid FROM memory_changes WHERE api_key_id = %s AND seq > %s"
        if limit is not None:
            changes = f"({changes} ORDER BY seq LIMIT {int(limit)})"
        rows = self.db.fetchall(
            f"{changes} UNION ALL SELECT -1, upto FROM memory_changes_pruned", (owner, seq)
        )
        return split_marks(rows)

    def rows(self, owner: str, rowids: Sequence[int]) -> dict[int, Sequence[Any]]:
        """The owner's rows among `rowids` as they are now: rowid → `COLUMNS`."""
        if not rowids:
            return {}
        found = self.db.fetchall(
            f"SELECT rowid, {COLUMNS} FROM memories WHERE api_key_id = %s AND rowid = ANY(%s)",
            (owner, list(rowids)),
        )
        return {int(r[0]): r[1:] for r in found}

    def prune(self, *, now: float | None = None) -> int:
        """Delete the entries older than `CHANGES_KEPT_S` and mark how far the log was
        pruned (an index behind that mark rebuilds); how many were deleted."""
        cutoff = (time.time() if now is None else now) - CHANGES_KEPT_S
        with self.db.write() as con:
            row = con.execute(
                "SELECT max(seq) FROM memory_changes"
                " WHERE at < %s AND seq < (SELECT max(seq) FROM memory_changes)",
                (cutoff,),
            ).fetchone()
            upto = None if row is None else row[0]
            if upto is None:
                return 0
            deleted = con.execute("DELETE FROM memory_changes WHERE seq <= %s", (upto,)).rowcount
            con.execute("UPDATE memory_changes_pruned SET upto = greatest(upto, %s)", (upto,))
            return int(deleted)
