"""The SQLite change log (`memory_changes`, migration 0011) as a `ChangeFeed`: what a
process holding keys' memories in memory (`store/key_index.py`) reads to build a key
and to catch up with what any connection or process changed since."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from memroute.store.db import Database
from memroute.store.memory_sql import COLUMNS

# Changes older than this are pruned from the log (an index that slept longer rebuilds).
CHANGES_KEPT_S = 600.0


class SqliteChangeFeed:
    def __init__(self, db: Database) -> None:
        self.db = db

    def count(self, owner: str, *, upto: int | None = None) -> int:
        """The owner's memories, counted up to `upto` when given (a cheaper count)."""
        con = self.db.read()
        if upto is None:
            row = con.execute("SELECT count(*) FROM memories WHERE api_key_id = ?", (owner,)).fetchone()
        else:
            sql = "SELECT count(*) FROM (SELECT 1 FROM memories WHERE api_key_id = ? LIMIT ?)"
            row = con.execute(sql, (owner, upto)).fetchone()
        return int(row[0])  # type: ignore[index]

    @contextmanager
    def snapshot(self, owner: str) -> Iterator[tuple[int, Iterable[Sequence[Any]]]]:
        """The log's last seq and the owner's rows (rowid, then `COLUMNS`) in one read
        transaction (or the caller's, when it is inside one)."""
        con = self.db.read()
        outer = not con.getautocommit()
        if not outer:
            con.execute("BEGIN")
        try:
            seq = int(con.execute("SELECT coalesce(max(seq), 0) FROM memory_changes").fetchone()[0])  # type: ignore[index]
            # One pass over the key's rows (pages of `rowid > last ORDER BY rowid` re-read
            # and sorted the rest of the key each time: 10× the rows at 1,000 memories).
            yield seq, con.execute(f"SELECT rowid, {COLUMNS} FROM memories WHERE api_key_id = ?", (owner,))
        finally:
            if not outer:
                con.execute("COMMIT")

    def since(self, owner: str, seq: int, limit: int | None = None) -> tuple[list[tuple[int, int]], int]:
        """The owner's changes after `seq` as (seq, rowid), the first `limit` of them when
        given, and up to which seq the log was pruned, read together."""
        changes = "SELECT seq, memory_rowid FROM memory_changes WHERE api_key_id = ? AND seq > ?"
        if limit is not None:
            changes = f"SELECT * FROM ({changes} ORDER BY seq LIMIT {int(limit)})"
        marks = self.db.read().execute(
            f"{changes} UNION ALL SELECT -1, upto FROM memory_changes_pruned", (owner, seq)
        )
        return split_marks(marks)

    def rows(self, owner: str, rowids: Sequence[int]) -> dict[int, Sequence[Any]]:
        """The owner's rows among `rowids` as they are now: rowid → `COLUMNS`."""
        if not rowids:
            return {}
        found = self.db.read().execute(
            f"SELECT rowid, {COLUMNS} FROM memories WHERE api_key_id = ?"
            f" AND rowid IN ({', '.join('?' * len(rowids))})",
            (owner, *rowids),
        )
        return {int(r[0]): r[1:] for r in found}

    def prune(self, *, now: float | None = None) -> int:
        """Delete the entries older than `CHANGES_KEPT_S` and mark how far the log was
        pruned (an index behind that mark rebuilds); how many were deleted."""
        cutoff = (time.time() if now is None else now) - CHANGES_KEPT_S
        with self.db.write() as con:
            # Never the newest row: it keeps the next seq above every seq handed out.
            upto = con.execute(
                "SELECT max(seq) FROM memory_changes"
                " WHERE at < ? AND seq < (SELECT max(seq) FROM memory_changes)",
                (cutoff,),
            ).fetchone()[0]  # type: ignore[index]
            if upto is None:
                return 0
            con.execute("DELETE FROM memory_changes WHERE seq <= ?", (upto,))
            deleted = con.changes()
            con.execute("UPDATE memory_changes_pruned SET upto = max(upto, ?)", (upto,))
            return int(deleted)


def split_marks(marks: Iterable[Sequence[Any]]) -> tuple[list[tuple[int, int]], int]:
    """(seq, rowid) rows of the change log, one of them the pruned mark (seq -1, how far
    the log was pruned): the changes, and that mark."""
    changes, pruned = [], 0
    for at, rowid in marks:
        if at == -1:
            pruned = int(rowid)
        else:
            changes.append((int(at), int(rowid)))
    return changes, pruned
