"""The vector tier's repository on PostgreSQL, before pgvector is wired in: it keeps no
vectors (`available` is False, so the engine says why and searches keywords, or Qdrant
when it is configured), and answers what Qdrant's search and the status read: which
rows a filter admits, which memories still wait for a vector."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from memroute.errors import StoreError
from memroute.models.records import MemoryFilter, MemoryRecord
from memroute.store.memories import COLUMNS, row_to_memory
from memroute.store.postgres.db import PgDatabase
from memroute.store.postgres.memories import filter_sql
from memroute.store.records import KeyVectors, KeyWrite, Neighbour, PendingMemory, VecMeta

NO_VECTORS = "vectors on PostgreSQL need pgvector, not supported by this version yet"


class PgVectorRepository:
    def __init__(self, db: PgDatabase) -> None:
        self.db = db
        self.error = NO_VECTORS

    @property
    def available(self) -> bool:
        return False

    def meta(self) -> VecMeta:
        return VecMeta(None, None, None, False, None)

    def table_exists(self) -> bool:
        return False

    def reset_unless_current(self, signature: str, dim: int, *, int8: bool, now: str) -> int | None:
        raise StoreError(self.error)

    def reset(self, signature: str, dim: int, *, int8: bool, now: str) -> int:
        raise StoreError(self.error)

    def mark_all_pending(self) -> int:
        with self.db.write() as con:
            return int(con.execute("UPDATE memories SET needs_reindex = 1 WHERE needs_reindex = 0").rowcount)

    def set_int8_scale(self, scale: float) -> None:
        raise StoreError(self.error)

    def drop_orphans(self) -> int:
        return 0

    def store(
        self, items: Iterable[tuple[PendingMemory, bytes]], *, blob_sql: str = "?"
    ) -> dict[str, KeyWrite]:
        raise StoreError(self.error)

    def store_empty(self, memories: Iterable[PendingMemory]) -> None:
        raise StoreError(self.error)

    def generation(self, api_key_id: str) -> int:
        return 0

    def chunk_count(self, api_key_id: str) -> int:
        return 0

    def load_key(self, api_key_id: str, dim: int, *, int8: bool) -> KeyVectors | None:
        return None

    def admitted(self, rowids: Sequence[int], flt: MemoryFilter) -> dict[int, str]:
        """The memories among `rowids` that `flt` admits: rowid → id."""
        return {int(r[0]): str(r[1]) for r in self._admitted_rows(rowids, flt, "id")}

    def admitted_memories(self, rowids: Sequence[int], flt: MemoryFilter) -> dict[int, MemoryRecord]:
        """The memories among `rowids` that `flt` admits, read whole."""
        return {int(r[0]): row_to_memory(r[1:]) for r in self._admitted_rows(rowids, flt, COLUMNS)}

    def _admitted_rows(self, rowids: Sequence[int], flt: MemoryFilter, columns: str) -> list[tuple[Any, ...]]:
        if not rowids:
            return []
        where, params = filter_sql(flt)
        return self.db.fetchall(
            f"SELECT rowid, {columns} FROM memories WHERE rowid = ANY(%s) AND {where}",
            (list(rowids), *params),
        )

    def pending(self, api_key_id: str | None, limit: int) -> list[PendingMemory]:
        """Memories still waiting for a vector (one key's, or any), oldest first."""
        owner_sql = "" if api_key_id is None else " AND api_key_id = %s"
        params: tuple[Any, ...] = (limit,) if api_key_id is None else (api_key_id, limit)
        rows = self.db.fetchall(
            f"SELECT rowid, id, api_key_id, content FROM memories WHERE needs_reindex = 1{owner_sql}"
            " ORDER BY api_key_id, rowid LIMIT %s",
            params,
        )
        return [PendingMemory(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def holds_memories(self) -> bool:
        return self.db.fetchone("SELECT 1 FROM memories LIMIT 1") is not None

    def count(self) -> int:
        return 0

    def knn(
        self, query: bytes, flt: MemoryFilter, k: int, *, query_sql: str = "?", with_vectors: bool = False
    ) -> list[Neighbour]:
        raise StoreError(self.error)
