"""What the SQLite and PostgreSQL memory stores do alike, written once: a memory's row
and record, an update with its history entry, and the reads whose SQL differs only in
its placeholders (`owner_sql.Dialect`). Each store adds what it does its own way: the
writes it makes in fewer round trips, the keyword search, the read cache."""

from __future__ import annotations

import builtins
import json
import uuid
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol

from memroute.errors import Conflict
from memroute.models.owners import users_range
from memroute.models.records import (
    SUMMARY_KEY_PREFIX,
    TURN_KEY_PREFIX,
    HistoryEntry,
    MemoryFilter,
    MemoryRecord,
)
from memroute.store.owner_sql import Dialect, key_and_users, page_where
from memroute.store.owner_sql import filter_sql as owner_filter_sql
from memroute.store.records import NewMemory

COLUMNS = (
    "id, api_key_id, session_id, type, key, content, metadata, created_at, updated_at, "
    "expires_at, access_count, last_accessed_at"
)
M_COLUMNS = ", ".join(f"m.{c.strip()}" for c in COLUMNS.split(","))
# Not a kept chat turn: word for word the condition of SQLite's partial index of migration
# 0009, so the newest facts are read from that index without walking the turns.
NOT_A_KEPT_TURN = f"substr(key, 1, {len(TURN_KEY_PREFIX)}) <> '{TURN_KEY_PREFIX}'"
NOT_A_SUMMARY = f"substr(key, 1, {len(SUMMARY_KEY_PREFIX)}) <> '{SUMMARY_KEY_PREFIX}'"


def row_to_memory(row: Sequence[Any]) -> MemoryRecord:
    return MemoryRecord(
        id=row[0],
        api_key_id=row[1],
        session_id=row[2] or "",
        type=row[3],
        key=row[4] or "",
        content=row[5],
        metadata=row[6] if isinstance(row[6], str) else {},  # decoded when first read
        created_at=row[7],
        updated_at=row[8],
        expires_at=row[9],
        access_count=row[10] if isinstance(row[10], int) else 0,
        last_accessed_at=row[11],
    )


def metadata_json(metadata: dict[str, Any]) -> str:
    """The stored text of a memory's metadata."""
    return json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))


def update_sets(
    old: MemoryRecord, changes: dict[str, Any], now: str, mark: str
) -> tuple[str, list[Any], bool]:
    """The SET list of an update applying `changes` to `old` (placeholders `mark`), its
    parameters, and whether the indexed text (content or key) changed: its vector is then
    stale."""
    sets, params = [f"updated_at = {mark}"], [now]
    for column in ("type", "key", "content", "expires_at", "session_id"):
        if column in changes:
            sets.append(f"{column} = {mark}")
            params.append(changes[column])
    if "metadata" in changes:
        sets.append(f"metadata = {mark}")
        params.append(metadata_json(changes["metadata"]))
    new_key = changes.get("key", old.key)
    text_changed = changes.get("content", old.content) != old.content or new_key != old.key
    if text_changed:
        sets.append("needs_reindex = 1")
    return ", ".join(sets), params, text_changed


class MemoryRow(NamedTuple):
    """The columns a memory is written with (`ROW_COLUMNS`, in this order)."""

    id: str
    api_key_id: str
    session_id: str
    type: str
    key: str
    content: str
    metadata: str  # metadata_json's text
    created_at: str
    updated_at: str
    expires_at: str | None


ROW_COLUMNS = ", ".join(MemoryRow._fields)


def inserted(new: NewMemory, memory_id: str, created: str, updated: str) -> MemoryRecord:
    """The record of `new` as it was just inserted under `memory_id`."""
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


def overwritten(
    old: MemoryRecord, new: NewMemory, metadata: dict[str, Any], created: str, updated: str
) -> MemoryRecord:
    """The record of `old` once `new` (same key) was written over it: the identity and the
    use counts stay `old`'s."""
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


class Rows(Protocol):
    """What the shared statements need of a store's database."""

    def fetchall(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]: ...

    def fetchone(self, sql: str, params: Any = ()) -> tuple[Any, ...] | None: ...

    def write(self) -> AbstractContextManager[Any]: ...


class MemorySql(ABC):
    """The memory store's statements both dialects share (`dialect` spells them); a store
    subclasses it, sets `db` and `dialect`, and writes a row its own way (`_insert_row`,
    `_overwrite_row`, `_lock`, `_invalidate_after_commit`)."""

    db: Rows
    dialect: Dialect

    @abstractmethod
    def _insert_row(self, con: Any, row: MemoryRow, added: str | None, now: str, actor: str) -> None:
        """Insert `row` and its ADD history entry, which records the text `added`."""

    @abstractmethod
    def _overwrite_row(self, con: Any, row: MemoryRow) -> None:
        """Write `row` over the stored memory of its id (the same owner and key); it waits
        for a vector again when its text changed."""

    @abstractmethod
    def _lock(self, con: Any) -> None:
        """Taken first in a write transaction that reads before it writes: what it read
        stays true until the transaction ends."""

    @abstractmethod
    def _invalidate_after_commit(self, *ids: str) -> None:
        """Forget what a read cache holds of `ids` once the write commits."""

    def _filter_sql(self, flt: MemoryFilter, alias: str = "") -> tuple[str, list[Any]]:
        return owner_filter_sql(flt, alias, self.dialect)

    # -- writes ---------------------------------------------------------------

    def upsert(self, new: NewMemory, *, now: str, actor: str) -> tuple[MemoryRecord, bool]:
        """Insert, or update the row with the same (api_key_id, key). Returns (memory, created)."""
        p = self.dialect.mark
        with self.db.write() as con:
            self._lock(con)
            old = None
            if new.key:
                old = one_memory(
                    con,
                    f"SELECT {COLUMNS} FROM memories WHERE api_key_id = {p} AND key = {p} AND key <> ''",
                    (new.api_key_id, new.key),
                )
            if old is None:
                return self._insert(con, new, now=now, actor=actor), True
            return self._overwrite(con, old, new, now=now, actor=actor), False

    def insert(self, new: NewMemory, *, now: str, actor: str, text_in_history: bool = True) -> MemoryRecord:
        """Insert a memory whose key the owner does not use yet (the caller checked).
        `text_in_history=False`: its ADD history entry leaves the text out (it is the
        memory's own; a later change or delete records the text it replaced)."""
        with self.db.write() as con:
            return self._insert(con, new, now=now, actor=actor, text_in_history=text_in_history)

    def _insert(
        self, con: Any, new: NewMemory, *, now: str, actor: str, text_in_history: bool = True
    ) -> MemoryRecord:
        memory_id = new.id or str(uuid.uuid4())
        created = new.created_at or now
        updated = new.updated_at or created
        row = MemoryRow(
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
        )
        self._insert_row(con, row, new.content if text_in_history else None, now, actor)
        return inserted(new, memory_id, created, updated)

    def _overwrite(
        self, con: Any, old: MemoryRecord, new: NewMemory, *, now: str, actor: str
    ) -> MemoryRecord:
        metadata = {**old.metadata, **(new.metadata or {})}
        created = new.created_at or old.created_at
        updated = new.updated_at or now
        row = MemoryRow(
            old.id,
            new.api_key_id,
            new.session_id,
            new.type,
            new.key,
            new.content,
            metadata_json(metadata),
            created,
            updated,
            new.expires_at,
        )
        self._overwrite_row(con, row)
        if old.content != new.content or old.type != new.type:
            self._history(
                con, old.id, old.api_key_id, "UPDATE", old.content, new.content, old.key, new.key, now, actor
            )
        self._invalidate_after_commit(old.id)
        return overwritten(old, new, metadata, created, updated)

    def record_access(self, ids: Iterable[str], *, now: str) -> None:
        """Bump access counters by one; the keyword index is untouched (the text is not)."""
        self.record_access_counts({i: 1 for i in ids if i}, now=now)

    @abstractmethod
    def record_access_counts(self, counts: Mapping[str, int], *, now: str) -> None:
        """Add `counts[id]` uses to each memory (batched bumps from the gateway)."""

    def update(self, memory_id: str, changes: dict[str, Any], *, now: str, actor: str) -> MemoryRecord | None:
        """Apply `changes` (columns: type, key, content, metadata, expires_at, session_id)."""
        p = self.dialect.mark
        with self.db.write() as con:
            self._lock(con)
            old = one_memory(con, f"SELECT {COLUMNS} FROM memories WHERE id = {p}", (memory_id,))
            if old is None:
                return None
            new_key = changes.get("key", old.key)
            if new_key and new_key != old.key:
                clash = con.execute(
                    f"SELECT id FROM memories WHERE api_key_id = {p} AND key = {p} AND key <> ''"
                    f" AND id <> {p}",
                    (old.api_key_id, new_key, memory_id),
                ).fetchone()
                if clash:
                    raise Conflict(f"another memory of this key already uses key {new_key!r}")
            sets, params, text_changed = update_sets(old, changes, now, p)
            con.execute(f"UPDATE memories SET {sets} WHERE id = {p}", (*params, memory_id))
            if text_changed or changes.get("type", old.type) != old.type:
                content = changes.get("content", old.content)
                self._history(
                    con,
                    memory_id,
                    old.api_key_id,
                    "UPDATE",
                    old.content,
                    content,
                    old.key,
                    new_key,
                    now,
                    actor,
                )
            self._invalidate_after_commit(memory_id)
            return one_memory(con, f"SELECT {COLUMNS} FROM memories WHERE id = {p}", (memory_id,))

    def _history(
        self,
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
        marks = ", ".join([self.dialect.mark] * 9)
        con.execute(
            "INSERT INTO memory_history (memory_id, api_key_id, event, old_content, new_content,"
            f" old_key, new_key, at, actor) VALUES ({marks})",
            (memory_id, api_key_id, event, old_content, new_content, old_key, new_key, now, actor),
        )

    def purge_history(self, memory_id: str) -> None:
        with self.db.write() as con:
            con.execute(f"DELETE FROM memory_history WHERE memory_id = {self.dialect.mark}", (memory_id,))

    # -- reads ----------------------------------------------------------------

    def get_by_key(self, api_key_id: str, key: str) -> MemoryRecord | None:
        p = self.dialect.mark
        row = self.db.fetchone(
            f"SELECT {COLUMNS} FROM memories WHERE api_key_id = {p} AND key = {p} AND key <> ''",
            (api_key_id, key),
        )
        return row_to_memory(row) if row else None

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
        p = self.dialect.mark
        where, params = page_where(
            self.dialect, api_key_id=api_key_id, type=type, session_id=session_id, q=q, user_id=user_id
        )
        by_type = self._counts_by_type(where, params)
        rows = self.db.fetchall(
            f"SELECT {COLUMNS} FROM memories {where}"
            f" ORDER BY created_at DESC, rowid DESC LIMIT {p} OFFSET {p}",
            (*params, limit, offset),
        )
        return [row_to_memory(r) for r in rows], sum(by_type.values()), by_type

    def stats(self, api_key_id: str | None) -> tuple[int, dict[str, int], int]:
        """How many memories (of one key, or all), by type, and their tokens (~4 characters each)."""
        where, params = (
            (f"WHERE api_key_id = {self.dialect.mark}", (api_key_id,)) if api_key_id is not None else ("", ())
        )
        by_type = self._counts_by_type(where, params)
        row = self.db.fetchone(
            f"SELECT coalesce(sum((length(content) + 3) / 4), 0) FROM memories {where}", params
        )
        return sum(by_type.values()), by_type, int(row[0]) if row else 0

    def _counts_by_type(self, where: str, params: Sequence[Any]) -> dict[str, int]:
        rows = self.db.fetchall(f"SELECT type, count(*) FROM memories {where} GROUP BY type", params)
        return {str(t): int(n) for t, n in rows}

    def recent(
        self, flt: MemoryFilter, *, limit: int, offset: int = 0, without_turns: bool = False
    ) -> builtins.list[MemoryRecord]:
        """Newest first (by last update) among the memories `flt` lets through; with
        `without_turns`, kept chat turns left out."""
        p = self.dialect.mark
        where, params = self._filter_sql(flt)
        if without_turns:
            where = f"{where} AND {NOT_A_KEPT_TURN}"
        rows = self.db.fetchall(
            f"SELECT {COLUMNS} FROM memories WHERE {where}"
            f" ORDER BY updated_at DESC, rowid DESC LIMIT {p} OFFSET {p}",
            (*params, limit, offset),
        )
        return [row_to_memory(r) for r in rows]

    def row_admission(self, flt: MemoryFilter) -> None:
        """None: read from SQL, a vector index checks its rows against SQL itself."""
        return None

    def meaning_search(
        self, flt: MemoryFilter, query: str | None, *, limit: int, leave_out: Collection[str] = ()
    ) -> builtins.list[tuple[MemoryRecord, float]]:
        """Nothing: memories are found by meaning only in a key's in-process index
        (store/key_meanings.py); read from SQL, a key is searched by its words."""
        return []

    def speakers(self, flt: MemoryFilter) -> frozenset[str]:
        """Nothing: a key's speakers are known only to its in-process index."""
        return frozenset()

    def history(self, memory_id: str) -> builtins.list[HistoryEntry]:
        rows = self.db.fetchall(
            "SELECT memory_id, event, old_content, new_content, old_key, new_key, at, actor"
            f" FROM memory_history WHERE memory_id = {self.dialect.mark} ORDER BY seq",
            (memory_id,),
        )
        return [HistoryEntry(*row) for row in rows]

    def iter_all(
        self, api_key_id: str | None, *, batch: int = 500, with_users: bool = False
    ) -> Iterator[MemoryRecord]:
        """Every memory (of one owner, with `with_users` also of that key's end users; or of
        all owners) in insertion order, in bounded batches."""
        p = self.dialect.mark
        last = 0
        key_sql = f"AND api_key_id = {p}" if api_key_id is not None else ""
        key_params: tuple[Any, ...] = (api_key_id,) if api_key_id is not None else ()
        if api_key_id is not None and with_users:
            key_sql = f"AND {key_and_users(self.dialect)}"
            key_params = (api_key_id, *users_range(api_key_id))
        while True:
            rows = self.db.fetchall(
                f"SELECT rowid, {COLUMNS} FROM memories WHERE rowid > {p} {key_sql} ORDER BY rowid LIMIT {p}",
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
        p = self.dialect.mark
        clauses, params = [f"api_key_id = {p}"], [api_key_id]
        if type:
            clauses.append(f"type = {p}")
            params.append(type)
        if created_before:
            clauses.append(f"created_at < {p}")
            params.append(created_before)
        rows = self.db.fetchall(
            f"SELECT id FROM memories WHERE {' AND '.join(clauses)} ORDER BY created_at, rowid", params
        )
        return [str(r[0]) for r in rows]

    def updated_before(self, api_key_id: str | None, cutoff: str) -> builtins.list[MemoryRecord]:
        p = self.dialect.mark
        key_sql, params = (
            (f"api_key_id = {p} AND", (api_key_id, cutoff)) if api_key_id is not None else ("", (cutoff,))
        )
        rows = self.db.fetchall(
            f"SELECT {COLUMNS} FROM memories WHERE {key_sql} updated_at < {p}"
            " ORDER BY api_key_id, updated_at, rowid",
            params,
        )
        return [row_to_memory(r) for r in rows]

    def oldest(self, api_key_id: str | None, *, limit: int) -> builtins.list[MemoryRecord]:
        p = self.dialect.mark
        key_sql, params = (
            (f"WHERE api_key_id = {p}", (api_key_id, limit)) if api_key_id is not None else ("", (limit,))
        )
        rows = self.db.fetchall(
            f"SELECT {COLUMNS} FROM memories {key_sql} ORDER BY created_at, rowid LIMIT {p}", params
        )
        return [row_to_memory(r) for r in rows]

    def count_needs_reindex(self) -> int:
        row = self.db.fetchone("SELECT count(*) FROM memories WHERE needs_reindex = 1")
        return int(row[0]) if row else 0

    def least_valuable(self, api_key_id: str, *, limit: int) -> builtins.list[str]:
        """Ids of the `limit` least used memories of the key and its end users, oldest first
        among equals; summaries are never among them."""
        rows = self.db.fetchall(
            f"SELECT id FROM memories WHERE {key_and_users(self.dialect)} AND {NOT_A_SUMMARY}"
            f" ORDER BY access_count, updated_at, rowid LIMIT {self.dialect.mark}",
            (api_key_id, *users_range(api_key_id), limit),
        )
        return [str(row[0]) for row in rows]

    def count_owner(self, api_key_id: str) -> int:
        """How many memories the key and its end users hold."""
        row = self.db.fetchone(
            f"SELECT count(*) FROM memories WHERE {key_and_users(self.dialect)}",
            (api_key_id, *users_range(api_key_id)),
        )
        return int(row[0]) if row else 0


def one_memory(con: Any, sql: str, params: Sequence[Any]) -> MemoryRecord | None:
    """The memory the statement `sql` reads on `con`, if any."""
    row = con.execute(sql, params).fetchone()
    return row_to_memory(row) if row else None
