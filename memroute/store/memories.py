"""SQL for the `memories` table, its FTS index and its history, on SQLite (what the
PostgreSQL store does alike is in `store/memory_sql.py`)."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import apsw

from memroute.lru import LruTtlCache
from memroute.models.records import MemoryFilter, MemoryRecord
from memroute.store.db import Database
from memroute.store.fts import BM25, expression_of, query_words
from memroute.store.key_rank import ranked_matches
from memroute.store.memory_sql import (
    COLUMNS,
    M_COLUMNS,
    ROW_COLUMNS,
    MemoryRow,
    MemorySql,
    row_to_memory,
)
from memroute.store.owner_sql import SQLITE
from memroute.store.owner_sql import filter_sql as owner_filter_sql

# Keyword search reads at most this many ranked matches looking for ones the filter admits.
KEYWORD_SCAN_CAP = 2000
# Query weights of recent keyword searches kept for the hybrid score that follows them.
QUERY_WEIGHTS_KEPT = 256


def filter_sql(flt: MemoryFilter, alias: str = "") -> tuple[str, list[Any]]:
    """The WHERE clause (and its parameters) of what `flt` admits, in SQLite's SQL."""
    return owner_filter_sql(flt, alias, SQLITE)


class MemoryRepository(MemorySql):
    """Memories, their FTS index and history. `get` goes through a shared LRU+TTL cache
    that every write through this process invalidates once it commits."""

    dialect = SQLITE

    def __init__(
        self,
        db: Database,
        cache: LruTtlCache[tuple[Any, ...]],
        *,
        delete_vector: Callable[[apsw.Connection, int, str], None] | None = None,
    ) -> None:
        self.db: Database = db
        self.cache = cache
        self._delete_vector = delete_vector
        # (owner, query) → the query's weight its keyword search found, for the
        # hybrid score that follows it (`keyword_weight`).
        self._query_weights: LruTtlCache[float | None] = LruTtlCache(QUERY_WEIGHTS_KEPT, 10.0)

    def _lock(self, con: apsw.Connection) -> None:
        """Nothing: SQLite's write transaction holds the whole file already."""

    def _invalidate_after_commit(self, *ids: str) -> None:
        def invalidate() -> None:
            for memory_id in ids:
                self.cache.invalidate(memory_id)

        self.db.after_commit(invalidate)

    # -- writes ---------------------------------------------------------------

    def _insert_row(
        self, con: apsw.Connection, row: MemoryRow, added: str | None, now: str, actor: str
    ) -> None:
        con.execute(f"INSERT INTO memories ({ROW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        self._history(con, row.id, row.api_key_id, "ADD", None, added, None, row.key, now, actor)

    def _overwrite_row(self, con: apsw.Connection, row: MemoryRow) -> None:
        # A real upsert: the unique index on (api_key_id, key) decides, not the SELECT before.
        con.execute(
            f"INSERT INTO memories ({ROW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (api_key_id, key) WHERE key <> '' DO UPDATE SET"
            " session_id = excluded.session_id, type = excluded.type, content = excluded.content,"
            " metadata = excluded.metadata, created_at = excluded.created_at,"
            " updated_at = excluded.updated_at,"
            " expires_at = excluded.expires_at,"
            " needs_reindex = CASE WHEN memories.content IS excluded.content"
            "   THEN memories.needs_reindex ELSE 1 END",
            row,
        )

    def delete(self, memory_id: str, *, now: str, actor: str) -> MemoryRecord | None:
        """Delete one memory; its FTS row (by trigger) and its vector go with it.
        Returns what was deleted."""
        with self.db.write() as con:
            row = con.execute(f"SELECT rowid, {COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
            if row is None:
                return None
            old = row_to_memory(row[1:])
            con.execute("DELETE FROM memories WHERE rowid = ?", (row[0],))
            if self._delete_vector is not None:
                self._delete_vector(con, row[0], old.api_key_id)
            self._history(
                con, memory_id, old.api_key_id, "DELETE", old.content, None, old.key, None, now, actor
            )
            self._invalidate_after_commit(memory_id)
        return old

    def record_access_counts(self, counts: Mapping[str, int], *, now: str) -> None:
        if not counts:
            return
        with self.db.write() as con:
            con.executemany(
                "UPDATE memories SET access_count = access_count + ?, last_accessed_at = ? WHERE id = ?",
                [(n, now, memory_id) for memory_id, n in sorted(counts.items())],
            )
            self._invalidate_after_commit(*counts)

    # -- reads ----------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryRecord | None:
        # The cache holds rows, not records: every caller gets its own record (and metadata).
        in_transaction = self.db.in_write_transaction()
        if not in_transaction and self.db.changed_since_asked():
            self.cache.clear()  # a commit, maybe by another process, may have changed any row
        cached = None if in_transaction else self.cache.get(memory_id)
        if cached is not None:
            return row_to_memory(cached)
        version = self.cache.version
        row = self.db.read().execute(f"SELECT {COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None:
            return None
        # Misses are not cached (a row another process adds shows at once), nor rows read
        # inside an open write transaction (it may still roll back).
        # A write that committed while we read has invalidated: then do not cache the old row.
        if not in_transaction:
            self.cache.set(memory_id, tuple(row), if_version=version)
        return row_to_memory(row)

    def by_keys(self, api_key_id: str, keys: Sequence[str]) -> dict[str, MemoryRecord]:
        """The owner's memories with any of `keys`, by key (inside a write transaction, with
        what it has written)."""
        wanted = [k for k in dict.fromkeys(keys) if k]
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = (
            self.db.read()
            .execute(
                f"SELECT {COLUMNS} FROM memories WHERE api_key_id = ? AND key IN ({marks}) AND key <> ''",
                (api_key_id, *wanted),
            )
            .fetchall()
        )
        return {m.key: m for m in map(row_to_memory, rows)}

    def get_many(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.read().execute(f"SELECT {COLUMNS} FROM memories WHERE id IN ({marks})", tuple(ids))
        return {row[0]: row_to_memory(row) for row in rows}

    def keyword_search(
        self, flt: MemoryFilter, query: str | None, *, limit: int
    ) -> builtins.list[tuple[MemoryRecord, float]]:
        """FTS5 matches ranked by bm25 (lower is better), then newest first.

        One key's matches are ranked with that key's statistics (`store/key_rank.py`);
        across keys, or for a key too large for that, by FTS5's `bm25()`: the best
        matches come from FTS first (a ranked batch of rowids), joined in the same
        statement to their rows. Either way the filter then admits rows or not, and when
        it drops too many the next ranked batch is read, so expired or out-of-retention
        matches never crowd out the valid ones."""
        words = query_words(query)
        expression = expression_of(words, flt.api_key_id)
        if expression is None:
            return []
        if flt.api_key_id is not None:
            matches = ranked_matches(self.db.read(), flt.api_key_id, expression, [len(w) for w in words])
            if matches is not None:
                self._query_weights.set((flt.api_key_id, query), matches.query_weight)
                return self._admitted_in_order(matches.ranked, flt, limit)
        where, params = filter_sql(flt, "m")
        # One statement text for every query (prepared once per connection); a dropped match
        # comes back as a row of NULLs, so the batch's size tells whether FTS has more.
        sql = (
            f"SELECT f.rank, {M_COLUMNS} FROM (SELECT rowid, {BM25} AS rank FROM memory_fts"
            " WHERE memory_fts MATCH ? ORDER BY rank LIMIT ? OFFSET ?) AS f"
            f" LEFT JOIN memories AS m ON m.rowid = f.rowid AND {where}"
        )
        con = self.db.read()
        batch = limit + limit // 4 + 5
        found: builtins.list[tuple[MemoryRecord, float]] = []
        for offset in range(0, KEYWORD_SCAN_CAP, batch):
            hits = con.execute(sql, (expression, batch, offset, *params)).fetchall()
            scored = [(float(r[0]), row_to_memory(r[1:])) for r in hits if r[1] is not None]  # type: ignore[arg-type]
            scored.sort(key=lambda pair: pair[1].updated_at, reverse=True)
            scored.sort(key=lambda pair: pair[0])  # stable: equal ranks stay newest first
            found.extend((memory, score) for score, memory in scored)
            # Read further only when the filter dropped more than half of what was asked:
            # enough valid matches beat one more full FTS pass.
            if len(found) >= limit // 2 or len(hits) < batch:
                break
        return found[:limit]

    def _admitted_in_order(
        self, ranked: Sequence[tuple[int, float]], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[MemoryRecord, float]]:
        """The first `limit` of `ranked` (rowid, score: higher is better) that `flt` admits, as
        (memory, rank: lower is better); equal scores newest first. Rows are read a batch
        at a time, further only while the filter dropped too many."""
        where, params = filter_sql(flt)
        con = self.db.read()
        batch = limit + limit // 4 + 5
        found: builtins.list[tuple[MemoryRecord, float]] = []
        for start in range(0, len(ranked), batch):
            part = ranked[start : start + batch]
            marks = ",".join("?" * len(part))
            rows = con.execute(
                f"SELECT rowid, {COLUMNS} FROM memories NOT INDEXED WHERE rowid IN ({marks}) AND {where}",
                (*(rowid for rowid, _ in part), *params),
            ).fetchall()
            by_rowid = {int(r[0]): row_to_memory(r[1:]) for r in rows}  # type: ignore[arg-type]
            scored = [(by_rowid[rowid], -score) for rowid, score in part if rowid in by_rowid]
            scored.sort(key=lambda pair: pair[0].updated_at, reverse=True)
            scored.sort(key=lambda pair: pair[1])  # stable: equal ranks stay newest first
            found.extend(scored)
            if len(found) >= limit:
                break
        return found[:limit]

    def keyword_weight(self, flt: MemoryFilter, query: str | None) -> float | None:
        """The query's weight in the key (see `KeyIndex.query_weight`) as the key's last
        keyword search for it found (None when it was ranked by FTS5's `bm25()`, whose
        statistics are every key's, or matched nothing)."""
        if flt.api_key_id is None or not query:
            return None
        return self._query_weights.get((flt.api_key_id, query))
