"""Memories, their keyword index (`tsvector`, GIN) and their history on PostgreSQL.

The same rows and history as the SQLite store (`store/memories.py`). A key being
recalled is ranked in process (`store/key_index.py`, the same bm25 as SQLite's); what is
read from SQL here is ranked by `ts_rank` within the owner's matches, the owner's filter
applied in the same statement (never a global top-k filtered afterwards).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memroute.lru import LruTtlCache
from memroute.models.records import MemoryFilter, MemoryRecord
from memroute.store.fts import query_words
from memroute.store.memory_sql import (
    COLUMNS,
    M_COLUMNS,
    ROW_COLUMNS,
    MemoryRow,
    MemorySql,
    row_to_memory,
)
from memroute.store.owner_sql import POSTGRES
from memroute.store.owner_sql import filter_sql as owner_filter_sql
from memroute.store.postgres.db import PgDatabase

# The advisory lock every statement that writes memories takes (the migration's trigger).
MEMORY_WRITE_LOCK = 7202611


def filter_sql(flt: MemoryFilter, alias: str = "") -> tuple[str, list[Any]]:
    """The WHERE clause (and its parameters) of what `flt` admits, in PostgreSQL's SQL."""
    return owner_filter_sql(flt, alias, POSTGRES)


def tsquery_of(text: str | None) -> str | None:
    """A `to_tsquery` text that ORs the forms of the query's words (`store/fts.py`): each
    form is letters and digits only, so no input can form tsquery syntax."""
    forms = [form for forms in query_words(text) for form in forms]
    return " | ".join(forms) if forms else None


class PgMemoryRepository(MemorySql):
    """Memories, their keyword index and history. Reads go to the database every time
    (another replica may have changed any row): `cache` stays empty."""

    dialect = POSTGRES

    def __init__(
        self, db: PgDatabase, *, delete_vector: Callable[[Any, int, str], None] | None = None
    ) -> None:
        self.db: PgDatabase = db
        self.cache: LruTtlCache[tuple[Any, ...]] = LruTtlCache(1, 0.0)
        self._delete_vector = delete_vector

    def _lock(self, con: Any) -> None:
        """Take the memories' write lock of this transaction now (every statement that writes
        memories takes it, see the migration): a read that decides a write (is this key
        taken?) then stays true until the transaction ends, whichever replica writes."""
        self.db.lock_for_transaction(con, MEMORY_WRITE_LOCK, 1)

    def _invalidate_after_commit(self, *ids: str) -> None:
        """Nothing: no read is cached (see `cache`)."""

    # -- writes ---------------------------------------------------------------

    def _insert_row(self, con: Any, row: MemoryRow, added: str | None, now: str, actor: str) -> None:
        # The memory and its history entry in one statement: one round trip, not two.
        con.execute(
            f"WITH added AS (INSERT INTO memories ({ROW_COLUMNS})"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id, api_key_id, key)"
            " INSERT INTO memory_history (memory_id, api_key_id, event, old_content, new_content,"
            " old_key, new_key, at, actor) SELECT id, api_key_id, 'ADD', NULL, %s::text, NULL, key, %s, %s"
            " FROM added",
            (*row, added, now, actor),
        )

    def _overwrite_row(self, con: Any, row: MemoryRow) -> None:
        con.execute(
            "UPDATE memories SET session_id = %s, type = %s, content = %s, metadata = %s,"
            " created_at = %s, updated_at = %s, expires_at = %s,"
            " needs_reindex = CASE WHEN content IS NOT DISTINCT FROM %s THEN needs_reindex ELSE 1 END"
            " WHERE id = %s",
            (
                row.session_id,
                row.type,
                row.content,
                row.metadata,
                row.created_at,
                row.updated_at,
                row.expires_at,
                row.content,
                row.id,
            ),
        )

    def delete(self, memory_id: str, *, now: str, actor: str) -> MemoryRecord | None:
        """Delete one memory (its vector goes with it). Returns what was deleted."""
        with self.db.write() as con:
            row = con.execute(
                f"DELETE FROM memories WHERE id = %s RETURNING rowid, {COLUMNS}", (memory_id,)
            ).fetchone()
            if row is None:
                return None
            old = row_to_memory(row[1:])
            if self._delete_vector is not None:
                self._delete_vector(con, int(row[0]), old.api_key_id)
            self._history(
                con, memory_id, old.api_key_id, "DELETE", old.content, None, old.key, None, now, actor
            )
        return old

    def record_access_counts(self, counts: Mapping[str, int], *, now: str) -> None:
        if not counts:
            return
        ordered = sorted(counts.items())
        with self.db.write() as con:
            con.execute(
                "UPDATE memories AS m SET access_count = m.access_count + c.n, last_accessed_at = %s"
                " FROM unnest(%s::text[], %s::int[]) AS c(id, n) WHERE m.id = c.id",
                (now, [i for i, _ in ordered], [n for _, n in ordered]),
            )

    # -- reads ----------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryRecord | None:
        row = self.db.fetchone(f"SELECT {COLUMNS} FROM memories WHERE id = %s", (memory_id,))
        return row_to_memory(row) if row else None

    def by_keys(self, api_key_id: str, keys: Sequence[str]) -> dict[str, MemoryRecord]:
        """The owner's memories with any of `keys`, by key."""
        wanted = [k for k in dict.fromkeys(keys) if k]
        if not wanted:
            return {}
        if self.db.in_write_transaction():  # read to write: what it finds stays true
            with self.db.read() as con:
                self._lock(con)
        rows = self.db.fetchall(
            f"SELECT {COLUMNS} FROM memories WHERE api_key_id = %s AND key = ANY(%s) AND key <> ''",
            (api_key_id, wanted),
        )
        return {m.key: m for m in map(row_to_memory, rows)}

    def get_many(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if not ids:
            return {}
        rows = self.db.fetchall(f"SELECT {COLUMNS} FROM memories WHERE id = ANY(%s)", (list(ids),))
        return {row[0]: row_to_memory(row) for row in rows}

    def keyword_search(
        self, flt: MemoryFilter, query: str | None, *, limit: int
    ) -> builtins.list[tuple[MemoryRecord, float]]:
        """The matches `flt` admits ranked by `ts_rank` (as a rank: lower is better), then
        newest first; the filter is part of the statement, so nothing it drops takes a
        place of the `limit`."""
        tsquery = tsquery_of(query)
        if tsquery is None:
            return []
        where, params = filter_sql(flt, "m")
        # One owner's: its lexeme and the words, both from the GIN index (see the migration).
        owned, owner = ("q && ('o' || md5(%s))::tsquery", [flt.api_key_id]) if flt.api_key_id else ("q", [])
        rows = self.db.fetchall(
            f"SELECT ts_rank(m.search, q) AS score, {M_COLUMNS}"
            " FROM memories AS m, to_tsquery('english', %s) AS q"
            f" WHERE m.search @@ ({owned}) AND {where}"
            " ORDER BY score DESC, m.updated_at DESC, m.rowid DESC LIMIT %s",
            (tsquery, *owner, *params, limit),
        )
        return [(row_to_memory(r[1:]), -float(r[0])) for r in rows]

    def keyword_weight(self, flt: MemoryFilter, query: str | None) -> float | None:
        """None: `ts_rank` has no query weight (a recalled key's index has)."""
        return None
