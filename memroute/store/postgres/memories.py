"""Memories, their keyword index (`tsvector`, GIN) and their history on PostgreSQL.

The same rows and history as the SQLite store (`store/memories.py`). A key being
recalled is ranked in process (`store/key_index.py`, the same bm25 as SQLite's); what is
read from SQL here is ranked by `ts_rank` within the owner's matches, the owner's filter
applied in the same statement (never a global top-k filtered afterwards).
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

from memroute.errors import Conflict
from memroute.lru import LruTtlCache
from memroute.models.owners import users_range
from memroute.models.records import TURN_KEY_PREFIX, HistoryEntry, MemoryFilter, MemoryRecord
from memroute.store.fts import query_words
from memroute.store.memories import COLUMNS, metadata_json, row_to_memory, update_sets
from memroute.store.owner_sql import POSTGRES, key_and_users, page_where
from memroute.store.owner_sql import filter_sql as owner_filter_sql
from memroute.store.postgres.db import PgDatabase
from memroute.store.records import NewMemory

# The advisory lock every statement that writes memories takes (the migration's trigger).
MEMORY_WRITE_LOCK = 7202611
NOT_A_KEPT_TURN = f"substr(key, 1, {len(TURN_KEY_PREFIX)}) <> '{TURN_KEY_PREFIX}'"
M_COLUMNS = ", ".join(f"m.{c.strip()}" for c in COLUMNS.split(","))
_KEY_AND_USERS = key_and_users(POSTGRES)


def filter_sql(flt: MemoryFilter, alias: str = "") -> tuple[str, list[Any]]:
    """The WHERE clause (and its parameters) of what `flt` admits, in PostgreSQL's SQL."""
    return owner_filter_sql(flt, alias, POSTGRES)


def tsquery_of(text: str | None) -> str | None:
    """A `to_tsquery` text that ORs the forms of the query's words (`store/fts.py`): each
    form is letters and digits only, so no input can form tsquery syntax."""
    forms = [form for forms in query_words(text) for form in forms]
    return " | ".join(forms) if forms else None


class PgMemoryRepository:
    """Memories, their keyword index and history. Reads go to the database every time
    (another replica may have changed any row): `cache` stays empty."""

    def __init__(
        self, db: PgDatabase, *, delete_vector: Callable[[Any, int, str], None] | None = None
    ) -> None:
        self.db = db
        self.cache: LruTtlCache[tuple[Any, ...]] = LruTtlCache(1, 0.0)
        self._delete_vector = delete_vector

    # -- writes ---------------------------------------------------------------

    def upsert(self, new: NewMemory, *, now: str, actor: str) -> tuple[MemoryRecord, bool]:
        """Insert, or update the row with the same (api_key_id, key). Returns (memory, created)."""
        with self.db.write() as con:
            _lock_memories(self.db, con)
            old = None
            if new.key:
                old = _one(
                    con,
                    f"SELECT {COLUMNS} FROM memories WHERE api_key_id = %s AND key = %s AND key <> ''",
                    (new.api_key_id, new.key),
                )
            if old is None:
                return self._insert(con, new, now=now, actor=actor), True
            return self._overwrite(con, old, new, now=now, actor=actor), False

    def insert(self, new: NewMemory, *, now: str, actor: str, text_in_history: bool = True) -> MemoryRecord:
        """Insert a memory whose key the owner does not use yet (the caller checked)."""
        with self.db.write() as con:
            return self._insert(con, new, now=now, actor=actor, text_in_history=text_in_history)

    def _insert(
        self, con: Any, new: NewMemory, *, now: str, actor: str, text_in_history: bool = True
    ) -> MemoryRecord:
        memory_id = new.id or str(uuid.uuid4())
        created = new.created_at or now
        updated = new.updated_at or created
        # The memory and its history entry in one statement: one round trip, not two.
        con.execute(
            "WITH added AS (INSERT INTO memories (id, api_key_id, session_id, type, key, content,"
            " metadata, created_at, updated_at, expires_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id, api_key_id, key)"
            " INSERT INTO memory_history (memory_id, api_key_id, event, old_content, new_content,"
            " old_key, new_key, at, actor) SELECT id, api_key_id, 'ADD', NULL, %s::text, NULL, key, %s, %s"
            " FROM added",
            (
                memory_id,
                new.api_key_id,
                new.session_id,
                new.type,
                new.key,
                new.content,
                metadata_json(new.metadata or {}),
                created,
                updated,
                new.expires_at,
                new.content if text_in_history else None,
                now,
                actor,
            ),
        )
        return MemoryRecord(
            id=memory_id,
            api_key_id=new.api_key_id,
            session_id=new.session_id,
            type=new.type,
            key=new.key,
            content=new.content,
            metadata=dict(new.metadata or {}),
            created_at=created,
            updated_at=updated,
            expires_at=new.expires_at,
        )

    def _overwrite(
        self, con: Any, old: MemoryRecord, new: NewMemory, *, now: str, actor: str
    ) -> MemoryRecord:
        metadata = {**old.metadata, **(new.metadata or {})}
        created = new.created_at or old.created_at
        updated = new.updated_at or now
        con.execute(
            "UPDATE memories SET session_id = %s, type = %s, content = %s, metadata = %s,"
            " created_at = %s, updated_at = %s, expires_at = %s,"
            " needs_reindex = CASE WHEN content IS NOT DISTINCT FROM %s THEN needs_reindex ELSE 1 END"
            " WHERE id = %s",
            (
                new.session_id,
                new.type,
                new.content,
                metadata_json(metadata),
                created,
                updated,
                new.expires_at,
                new.content,
                old.id,
            ),
        )
        if old.content != new.content or old.type != new.type:
            _history(
                con, old.id, old.api_key_id, "UPDATE", old.content, new.content, old.key, new.key, now, actor
            )
        return MemoryRecord(
            id=old.id,
            api_key_id=old.api_key_id,
            session_id=new.session_id,
            type=new.type,
            key=new.key,
            content=new.content,
            metadata=metadata,
            created_at=created,
            updated_at=updated,
            expires_at=new.expires_at,
            access_count=old.access_count,
            last_accessed_at=old.last_accessed_at,
        )

    def update(self, memory_id: str, changes: dict[str, Any], *, now: str, actor: str) -> MemoryRecord | None:
        """Apply `changes` (columns: type, key, content, metadata, expires_at, session_id)."""
        with self.db.write() as con:
            _lock_memories(self.db, con)
            old = _one(con, f"SELECT {COLUMNS} FROM memories WHERE id = %s", (memory_id,))
            if old is None:
                return None
            new_key = changes.get("key", old.key)
            if new_key and new_key != old.key:
                clash = con.execute(
                    "SELECT id FROM memories WHERE api_key_id = %s AND key = %s AND key <> '' AND id <> %s",
                    (old.api_key_id, new_key, memory_id),
                ).fetchone()
                if clash:
                    raise Conflict(f"another memory of this key already uses key {new_key!r}")
            sets, params, text_changed = update_sets(old, changes, now, "%s")
            con.execute(f"UPDATE memories SET {sets} WHERE id = %s", (*params, memory_id))
            if text_changed or changes.get("type", old.type) != old.type:
                _history(
                    con,
                    memory_id,
                    old.api_key_id,
                    "UPDATE",
                    old.content,
                    changes.get("content", old.content),
                    old.key,
                    new_key,
                    now,
                    actor,
                )
            return _one(con, f"SELECT {COLUMNS} FROM memories WHERE id = %s", (memory_id,))

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
            _history(con, memory_id, old.api_key_id, "DELETE", old.content, None, old.key, None, now, actor)
        return old

    def record_access(self, ids: Iterable[str], *, now: str) -> None:
        """Bump access counters by one."""
        self.record_access_counts({i: 1 for i in ids if i}, now=now)

    def record_access_counts(self, counts: Mapping[str, int], *, now: str) -> None:
        """Add `counts[id]` uses to each memory (batched bumps from the gateway)."""
        if not counts:
            return
        ordered = sorted(counts.items())
        with self.db.write() as con:
            con.execute(
                "UPDATE memories AS m SET access_count = m.access_count + c.n, last_accessed_at = %s"
                " FROM unnest(%s::text[], %s::int[]) AS c(id, n) WHERE m.id = c.id",
                (now, [i for i, _ in ordered], [n for _, n in ordered]),
            )

    def purge_history(self, memory_id: str) -> None:
        with self.db.write() as con:
            con.execute("DELETE FROM memory_history WHERE memory_id = %s", (memory_id,))

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
                _lock_memories(self.db, con)
        rows = self.db.fetchall(
            f"SELECT {COLUMNS} FROM memories WHERE api_key_id = %s AND key = ANY(%s) AND key <> ''",
            (api_key_id, wanted),
        )
        return {m.key: m for m in map(row_to_memory, rows)}

    def get_by_key(self, api_key_id: str, key: str) -> MemoryRecord | None:
        row = self.db.fetchone(
            f"SELECT {COLUMNS} FROM memories WHERE api_key_id = %s AND key = %s AND key <> ''",
            (api_key_id, key),
        )
        return row_to_memory(row) if row else None

    def get_many(self, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        if not ids:
            return {}
        rows = self.db.fetchall(f"SELECT {COLUMNS} FROM memories WHERE id = ANY(%s)", (list(ids),))
        return {row[0]: row_to_memory(row) for row in rows}

    def page(
        self,
        *,
        api_key_id: str | None,
        type: str | None,
        session_id: str | None,
        q: str | None,
        limit: int,
        offset: int,
        user_id: str | None = "",
    ) -> tuple[list[MemoryRecord], int, dict[str, int]]:
        """One page of memories newest first, with the filters of `owner_sql.page_where`."""
        where, params = page_where(
            POSTGRES, api_key_id=api_key_id, type=type, session_id=session_id, q=q, user_id=user_id
        )
        by_type = {
            str(t): int(n)
            for t, n in self.db.fetchall(f"SELECT type, count(*) FROM memories {where} GROUP BY type", params)
        }
        rows = self.db.fetchall(
            f"SELECT {COLUMNS} FROM memories {where} ORDER BY created_at DESC, rowid DESC LIMIT %s OFFSET %s",
            (*params, limit, offset),
        )
        return [row_to_memory(r) for r in rows], sum(by_type.values()), by_type

    def stats(self, api_key_id: str | None) -> tuple[int, dict[str, int], int]:
        where, params = ("WHERE api_key_id = %s", (api_key_id,)) if api_key_id is not None else ("", ())
        by_type = {
            str(t): int(n)
            for t, n in self.db.fetchall(f"SELECT type, count(*) FROM memories {where} GROUP BY type", params)
        }
        row = self.db.fetchone(
            f"SELECT coalesce(sum((length(content) + 3) / 4), 0) FROM memories {where}", params
        )
        return sum(by_type.values()), by_type, int(row[0]) if row else 0

    def recent(
        self, flt: MemoryFilter, *, limit: int, offset: int = 0, without_turns: bool = False
    ) -> builtins.list[MemoryRecord]:
        """Newest first (by last update) among the memories `flt` lets through; with
        `without_turns`, kept chat turns left out."""
        where, params = filter_sql(flt)
        if without_turns:
            where = f"{where} AND {NOT_A_KEPT_TURN}"
        rows = self.db.fetchall(
            f"SELECT {COLUMNS} FROM memories WHERE {where}"
            " ORDER BY updated_at DESC, rowid DESC LIMIT %s OFFSET %s",
            (*params, limit, offset),
        )
        return [row_to_memory(r) for r in rows]

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

    def row_admission(self, flt: MemoryFilter) -> None:
        """None: read from SQL, a vector index checks its rows against SQL itself."""
        return None

    def meaning_search(
        self, flt: MemoryFilter, query: str | None, *, limit: int, leave_out: Collection[str] = ()
    ) -> builtins.list[tuple[MemoryRecord, float]]:
        """Nothing: memories are found by meaning only in a key's in-process index."""
        return []

    def speakers(self, flt: MemoryFilter) -> frozenset[str]:
        """Nothing: a key's speakers are known only to its in-process index."""
        return frozenset()

    def history(self, memory_id: str) -> builtins.list[HistoryEntry]:
        rows = self.db.fetchall(
            "SELECT memory_id, event, old_content, new_content, old_key, new_key, at, actor"
            " FROM memory_history WHERE memory_id = %s ORDER BY seq",
            (memory_id,),
        )
        return [HistoryEntry(*row) for row in rows]

    def iter_all(
        self, api_key_id: str | None, *, batch: int = 500, with_users: bool = False
    ) -> Iterator[MemoryRecord]:
        """Every memory (of one owner, with `with_users` also of that key's end users; or of
        all owners) in insertion order, in bounded batches."""
        last = 0
        key_sql = "AND api_key_id = %s" if api_key_id is not None else ""
        key_params: tuple[Any, ...] = (api_key_id,) if api_key_id is not None else ()
        if api_key_id is not None and with_users:
            key_sql = f"AND {_KEY_AND_USERS}"
            key_params = (api_key_id, *users_range(api_key_id))
        while True:
            rows = self.db.fetchall(
                f"SELECT rowid, {COLUMNS} FROM memories WHERE rowid > %s {key_sql} ORDER BY rowid LIMIT %s",
                (last, *key_params, batch),
            )
            if not rows:
                return
            last = int(rows[-1][0])
            yield from (row_to_memory(r[1:]) for r in rows)

    def ids_of(
        self, api_key_id: str, *, type: str | None = None, created_before: str | None = None
    ) -> builtins.list[str]:
        """Every id of one key's memories (of one type, created before a time), oldest first."""
        clauses, params = ["api_key_id = %s"], [api_key_id]
        if type:
            clauses.append("type = %s")
            params.append(type)
        if created_before:
            clauses.append("created_at < %s")
            params.append(created_before)
        rows = self.db.fetchall(
            f"SELECT id FROM memories WHERE {' AND '.join(clauses)} ORDER BY created_at, rowid", params
        )
        return [str(r[0]) for r in rows]

    def updated_before(self, api_key_id: str | None, cutoff: str) -> builtins.list[MemoryRecord]:
        key_sql, params = (
            ("api_key_id = %s AND", (api_key_id, cutoff)) if api_key_id is not None else ("", (cutoff,))
        )
        rows = self.db.fetchall(
            f"SELECT {COLUMNS} FROM memories WHERE {key_sql} updated_at < %s"
            " ORDER BY api_key_id, updated_at, rowid",
            params,
        )
        return [row_to_memory(r) for r in rows]

    def oldest(self, api_key_id: str | None, *, limit: int) -> builtins.list[MemoryRecord]:
        key_sql, params = (
            ("WHERE api_key_id = %s", (api_key_id, limit)) if api_key_id is not None else ("", (limit,))
        )
        rows = self.db.fetchall(
            f"SELECT {COLUMNS} FROM memories {key_sql} ORDER BY created_at, rowid LIMIT %s", params
        )
        return [row_to_memory(r) for r in rows]

    def count_needs_reindex(self) -> int:
        row = self.db.fetchone("SELECT count(*) FROM memories WHERE needs_reindex = 1")
        return int(row[0]) if row else 0

    def least_valuable(self, api_key_id: str, *, limit: int) -> builtins.list[str]:
        """Ids of the `limit` least used memories of the key and its end users, oldest first
        among equals; summaries are never among them."""
        rows = self.db.fetchall(
            f"SELECT id FROM memories WHERE {_KEY_AND_USERS} AND key NOT LIKE 'summary:%%'"
            " ORDER BY access_count, updated_at, rowid LIMIT %s",
            (api_key_id, *users_range(api_key_id), limit),
        )
        return [str(row[0]) for row in rows]

    def count_owner(self, api_key_id: str) -> int:
        """How many memories the key and its end users hold."""
        row = self.db.fetchone(
            f"SELECT count(*) FROM memories WHERE {_KEY_AND_USERS}", (api_key_id, *users_range(api_key_id))
        )
        return int(row[0]) if row else 0


def _lock_memories(db: PgDatabase, con: Any) -> None:
    """Take the memories' write lock of this transaction now (every statement that writes
    memories takes it, see the migration): a read that decides a write (is this key
    taken?) then stays true until the transaction ends, whichever replica writes."""
    db.lock_for_transaction(con, MEMORY_WRITE_LOCK, 1)


def _one(con: Any, sql: str, params: Sequence[Any]) -> MemoryRecord | None:
    row = con.execute(sql, params).fetchone()
    return row_to_memory(row) if row else None


def _history(
    con: Any,
    memory_id: str,
    api_key_id: str,
    event: str,
    old_content: str | None,
    new_content: str | None,
    old_key: str | None,
    new_key: str | None,
    now: str,
    actor: str,
) -> None:
    con.execute(
        "INSERT INTO memory_history (memory_id, api_key_id, event, old_content, new_content,"
        " old_key, new_key, at, actor) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (memory_id, api_key_id, event, old_content, new_content, old_key, new_key, now, actor),
    )
