"""SQL for the sqlite-vec tier: `vec_memories` and its `memory_vec_meta` row.

`vec_memories` is a `vec0` table keyed by `memories.rowid` with `api_key_id` as its
partition key, so a per-key k-nearest search reads only that key's vectors (a global
`k` filtered afterwards would starve small keys). A partition allocates whole
chunks, even for one vector, so `chunk_size` is small: 16 float vectors (25 KB) or 32
int8 vectors (12.8 KB, the smallest int8 chunk that fills its pages). sqlite-vec does
not index the partition column of its chunk table, so every search and insert scanned
every key's chunks; an index on it made per-key searches 8× faster at 1M vectors and
26–50× with 10,000 small keys (bench/vec_layout.py, docs/benchmarks.md).

Vectors arrive as bytes (float32, or int8 for a quantised table); the maths lives in
`memroute.vectors`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import apsw
import numpy as np
from numpy.typing import NDArray

from memroute.models.records import MemoryFilter, MemoryRecord
from memroute.store.db import Database
from memroute.store.memories import filter_sql
from memroute.store.memory_sql import COLUMNS, row_to_memory
from memroute.store.records import KeyVectors, KeyWrite, Neighbour, PendingMemory, VecMeta

VEC_CHUNK_FLOAT = 16
VEC_CHUNK_INT8 = 32
# A filtered search asks vec0 for more neighbours until enough pass the filter.
MAX_FETCH = 4096


class VectorRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def available(self) -> bool:
        """Whether the sqlite-vec extension is loaded into this process's connections."""
        return self.db.vec_available

    # -- the meta row and the table ------------------------------------------------

    def meta(self) -> VecMeta:
        return _meta(self.db.read())

    def table_exists(self) -> bool:
        return _table_exists(self.db.read())

    def reset_unless_current(self, signature: str, dim: int, *, int8: bool, now: str) -> int | None:
        """`reset` unless the table already holds `signature`: checked and done in one write
        transaction, so threads that race here reset once (and take no other lock, which a
        caller already inside a transaction would wait on). None when it was current."""
        with self.db.write() as con:
            current = _meta(con)
            if current.ready and current.signature == signature:
                return None
            return self.reset(signature, dim, int8=int8, now=now)

    def reset(self, signature: str, dim: int, *, int8: bool, now: str) -> int:
        """(Re)create `vec_memories` for `signature` and mark every memory for re-embedding.
        Returns how many memories now wait for a vector."""
        column = (
            f"embedding int8[{dim}] distance_metric=l2"
            if int8
            else f"embedding float[{dim}] distance_metric=cosine"
        )
        with self.db.write() as con:
            con.execute("DROP TABLE IF EXISTS vec_memories")
            chunk = VEC_CHUNK_INT8 if int8 else VEC_CHUNK_FLOAT
            con.execute(
                "CREATE VIRTUAL TABLE vec_memories USING vec0("
                f"api_key_id TEXT partition key, {column}, chunk_size={chunk})"
            )
            _index_partitions(con)
            con.execute("UPDATE memories SET needs_reindex = 1 WHERE needs_reindex = 0")
            _bump_all(con)
            con.execute(
                "UPDATE memory_vec_meta SET active_dim = ?, embedding_signature = ?, last_reset_at = ?,"
                " vec_ready = 1, int8_scale = NULL WHERE id = 1",
                (dim, signature, now),
            )
            return int(con.execute("SELECT COUNT(*) FROM memories").fetchone()[0])  # type: ignore[index]

    def mark_all_pending(self) -> int:
        """Ask for every memory to be embedded again (a forced re-index)."""
        with self.db.write() as con:
            con.execute("UPDATE memories SET needs_reindex = 1 WHERE needs_reindex = 0")
            return int(con.changes())

    def set_int8_scale(self, scale: float) -> None:
        with self.db.write() as con:
            con.execute(
                "UPDATE memory_vec_meta SET int8_scale = ? WHERE id = 1 AND int8_scale IS NULL", (scale,)
            )

    def drop_orphans(self) -> int:
        """Delete vectors whose memory is gone (deleted by a process without sqlite-vec), and
        index the partitions of a table an older version created."""
        if not self.available or not self.table_exists():
            return 0
        with self.db.write() as con:
            _index_partitions(con)
            con.execute(
                "DELETE FROM vec_memories WHERE rowid IN (SELECT v.rowid FROM vec_memories v"
                " LEFT JOIN memories m ON m.rowid = v.rowid WHERE m.rowid IS NULL)"
            )
            dropped = int(con.changes())
            if dropped:
                _bump_all(con)
            return dropped

    # -- writes --------------------------------------------------------------------

    def store(
        self, items: Iterable[tuple[PendingMemory, bytes]], *, blob_sql: str = "?"
    ) -> dict[str, KeyWrite]:
        """Write the vectors of memories embedded from `PendingMemory.content`, and clear their
        `needs_reindex`. A memory deleted or edited since it was read is skipped (an edit
        left it marked, so it is embedded again with its new text). Returns what was stored,
        per key (with the generations around it, for in-memory copies to follow)."""
        writes: dict[str, KeyWrite] = {}
        with self.db.write() as con:
            for memory, blob in items:
                row = con.execute(
                    "SELECT api_key_id, content FROM memories WHERE rowid = ?", (memory.rowid,)
                ).fetchone()
                if row is None or row[1] != memory.content:
                    continue
                key = str(row[0])
                write = writes.get(key)
                if write is None:
                    before = self._generation_in(con, key)
                    write = writes[key] = KeyWrite(before, before, [], [])
                con.execute("DELETE FROM vec_memories WHERE rowid = ?", (memory.rowid,))
                con.execute(
                    f"INSERT INTO vec_memories (rowid, api_key_id, embedding) VALUES (?, ?, {blob_sql})",
                    (memory.rowid, key, blob),
                )
                con.execute("UPDATE memories SET needs_reindex = 0 WHERE rowid = ?", (memory.rowid,))
                _bump(con, key)
                write.after += 1
                write.rowids.append(memory.rowid)
                write.blobs.append(blob)
        return writes

    def store_empty(self, memories: Iterable[PendingMemory]) -> None:
        """Mark memories whose text yields no vector as done (and drop any older vector)."""
        with self.db.write() as con:
            for memory in memories:
                con.execute(
                    "UPDATE memories SET needs_reindex = 0 WHERE rowid = ? AND content = ?",
                    (memory.rowid, memory.content),
                )
                if con.changes():
                    con.execute("DELETE FROM vec_memories WHERE rowid = ?", (memory.rowid,))
                    _bump(con, memory.api_key_id)

    def delete_in(self, con: apsw.Connection, rowid: int, api_key_id: str) -> None:
        """Remove one memory's vector inside the caller's transaction (no-op without the table)."""
        if self.available and self.table_exists():
            con.execute("DELETE FROM vec_memories WHERE rowid = ?", (rowid,))
            _bump(con, api_key_id)

    # -- reads ---------------------------------------------------------------------

    def generation(self, api_key_id: str) -> int:
        """How many times this key's vectors changed (0: never); see `load_key`."""
        return self._generation_in(self.db.read(), api_key_id)

    @staticmethod
    def _generation_in(con: apsw.Connection, api_key_id: str) -> int:
        row = con.execute(
            "SELECT generation FROM vec_key_generations WHERE api_key_id = ?", (api_key_id,)
        ).fetchone()
        return int(row[0]) if row else 0

    def chunk_count(self, api_key_id: str) -> int:
        row = (
            self.db.read()
            .execute("SELECT COUNT(*) FROM vec_memories_chunks WHERE partition00 = ?", (api_key_id,))
            .fetchone()
        )
        return int(row[0]) if row else 0

    def load_key(self, api_key_id: str, dim: int, *, int8: bool) -> KeyVectors | None:
        """Every vector of one key, read straight from vec0's chunk tables (sqlite-vec 0.1.x
        layout: per chunk a validity bitmap, `size` int64 rowids and `size` vectors), with the
        key's generation, in one read transaction. None when the tables do not have that
        layout. (`SELECT … FROM vec_memories WHERE api_key_id = ?` would scan every key.)"""
        con = self.db.read()
        item = np.dtype(np.int8) if int8 else np.dtype(np.float32)
        rowids: list[NDArray[np.int64]] = []
        vectors: list[NDArray[Any]] = []
        with con:  # one snapshot for the generation and the vectors
            generation = self.generation(api_key_id)
            try:
                # Row by row: only one chunk's blobs are held besides the copies kept. The
                # vector table's `rowid` is a column without a type: `+` lets its index serve
                # the join (without it every key's vector chunks were scanned, 18 ms a key at
                # 1M vectors).
                for size, validity, ids, blob in con.execute(
                    "SELECT c.size, c.validity, c.rowids, v.vectors FROM vec_memories_chunks c"
                    " JOIN vec_memories_vector_chunks00 v ON v.rowid = +c.chunk_id"
                    " WHERE c.partition00 = ? ORDER BY c.chunk_id",
                    (api_key_id,),
                ):
                    if not (
                        isinstance(size, int)
                        and isinstance(validity, bytes)
                        and isinstance(ids, bytes)
                        and isinstance(blob, bytes)
                        and len(validity) * 8 >= size
                        and len(ids) == 8 * size
                        and len(blob) == item.itemsize * dim * size
                    ):
                        return None
                    valid = (
                        np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[:size] == 1
                    )
                    rowids.append(np.frombuffer(ids, dtype=np.int64)[valid])
                    vectors.append(np.frombuffer(blob, dtype=item).reshape(size, dim)[valid])
            except apsw.SQLError:
                return None
        if not rowids:
            return KeyVectors(generation, np.zeros(0, np.int64), np.zeros((0, dim), item))
        return KeyVectors(generation, np.concatenate(rowids), np.concatenate(vectors))

    def admitted(self, rowids: Sequence[int], flt: MemoryFilter) -> dict[int, str]:
        """The memories among `rowids` that `flt` admits: rowid → id."""
        return {int(r[0]): str(r[1]) for r in self._admitted_rows(rowids, flt, "id")}

    def admitted_memories(self, rowids: Sequence[int], flt: MemoryFilter) -> dict[int, MemoryRecord]:
        """The memories among `rowids` that `flt` admits, read whole: rowid → memory (what
        a search returns, so its caller reads no row twice)."""
        return {int(r[0]): row_to_memory(r[1:]) for r in self._admitted_rows(rowids, flt, COLUMNS)}

    def _admitted_rows(self, rowids: Sequence[int], flt: MemoryFilter, columns: str) -> Iterable[Any]:
        """(rowid, `columns`…) of the memories among `rowids` that `flt` admits."""
        if not rowids:
            return ()
        where, params = filter_sql(flt)
        marks = ",".join("?" * len(rowids))
        # NOT INDEXED: look the rowids up; else the planner may pick the owner index and
        # read every memory of the key (13 ms instead of 0.09 ms at 100k, bench/vec_scaling).
        return self.db.read().execute(
            f"SELECT rowid, {columns} FROM memories NOT INDEXED WHERE rowid IN ({marks}) AND {where}",
            (*rowids, *params),
        )

    def pending(self, api_key_id: str | None, limit: int) -> list[PendingMemory]:
        """Memories still waiting for a vector (one key's, or any), oldest first."""
        owner_sql = "" if api_key_id is None else " AND api_key_id = ?"
        params: tuple[Any, ...] = (limit,) if api_key_id is None else (api_key_id, limit)
        rows = self.db.read().execute(
            "SELECT rowid, id, api_key_id, content FROM memories WHERE needs_reindex = 1"
            f"{owner_sql} ORDER BY api_key_id, rowid LIMIT ?",  # the needs_reindex index's order
            params,
        )
        return [PendingMemory(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def holds_memories(self) -> bool:
        """Whether the database holds any memory at all (of any key)."""
        return self.db.read().execute("SELECT 1 FROM memories LIMIT 1").fetchone() is not None

    def count(self) -> int:
        if not self.available or not self.table_exists():
            return 0
        return int(self.db.read().execute("SELECT COUNT(*) FROM vec_memories").fetchone()[0])  # type: ignore[index]

    def knn(
        self, query: bytes, flt: MemoryFilter, k: int, *, query_sql: str = "?", with_vectors: bool = False
    ) -> list[Neighbour]:
        """The `k` nearest memories that `flt` admits, nearest first (with their stored vectors
        if asked: reading them back by rowid later would scan the whole table).

        vec0 applies `k` before any join, so the search asks for more neighbours (a quarter
        more than `k` first, then 4× each round, at most 4,096, sqlite-vec's limit) until `k`
        of them pass the expiry, session and retention filters or the key has no more vectors."""
        owner_sql, owner_params = (
            ("AND api_key_id = ?", [flt.api_key_id]) if flt.api_key_id is not None else ("", [])
        )
        columns = "rowid, distance, embedding" if with_vectors else "rowid, distance, NULL"
        con = self.db.read()
        # vec0 compares every vector of the key whatever k is, but each neighbour it returns
        # is a row to read and check here: ask for a quarter more than k (most memories pass
        # the filter), then 4× more each round while too few did.
        fetch = min(max(k, 1) + k // 4 + 5, MAX_FETCH)
        while True:
            near = con.execute(
                f"SELECT {columns} FROM vec_memories WHERE embedding MATCH {query_sql} AND k = ?"
                f" {owner_sql} ORDER BY distance",
                (query, fetch, *owner_params),
            ).fetchall()
            admitted = self.admitted_memories([int(r[0]) for r in near], flt)  # type: ignore[arg-type]
            hits = [_neighbour(admitted[int(r[0])], r) for r in near if r[0] in admitted]
            if len(hits) >= k or len(near) < fetch or fetch >= MAX_FETCH:
                return hits[:k]
            fetch = min(fetch * 4, MAX_FETCH)


def _meta(con: apsw.Connection) -> VecMeta:
    """The vector table's meta row as `con` sees it (ready only while the table exists)."""
    row = con.execute(
        "SELECT active_dim, embedding_signature, last_reset_at, vec_ready, int8_scale"
        " FROM memory_vec_meta WHERE id = 1"
    ).fetchone()
    if row is None:
        return VecMeta(None, None, None, False, None)
    return VecMeta(row[0], row[1], row[2], bool(row[3]) and _table_exists(con), row[4])


def _table_exists(con: apsw.Connection) -> bool:
    sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vec_memories'"
    return con.execute(sql).fetchone() is not None


def _neighbour(memory: MemoryRecord, row: Any) -> Neighbour:
    return Neighbour(memory, int(row[0]), float(row[1]), None if row[2] is None else bytes(row[2]))


def _bump(con: apsw.Connection, api_key_id: str) -> None:
    con.execute(
        "INSERT INTO vec_key_generations (api_key_id, generation) VALUES (?, 1)"
        " ON CONFLICT (api_key_id) DO UPDATE SET generation = generation + 1",
        (api_key_id,),
    )


def _bump_all(con: apsw.Connection) -> None:
    con.execute("UPDATE vec_key_generations SET generation = generation + 1")


def _index_partitions(con: apsw.Connection) -> None:
    """Index the partition column of vec0's chunk table (an internal table of sqlite-vec
    0.1.x: checked first, and skipped if its shape is not the expected one)."""
    columns = {str(row[1]) for row in con.execute("PRAGMA table_info(vec_memories_chunks)")}
    if {"partition00", "chunk_id"} <= columns:
        con.execute(
            "CREATE INDEX IF NOT EXISTS vec_memories_chunks_partition"
            " ON vec_memories_chunks (partition00, chunk_id)"
        )
