"""Memory vectors on PostgreSQL with pgvector: `vec_memories`, keyed by the memory's
rowid, with the owner beside each vector.

A search is exact within the owner: the owner's vectors are compared in one statement
that also applies the filter (expiry, session, type), so it never takes a global top-k
and filters afterwards (an approximate index over every key would). The key copies of
`vectors/key_cache.py` read a key's vectors in pgvector's binary form. Vectors are
float32 (SQLite's int8 quantization does not apply here). Without the pgvector extension
(`CREATE EXTENSION vector` refused or not installed) `available` is False and `error`
says why: the engine then uses Qdrant when configured, else keywords only.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import psycopg

from memroute.errors import StoreError
from memroute.models.records import MemoryFilter, MemoryRecord
from memroute.store.memory_sql import COLUMNS, M_COLUMNS, row_to_memory
from memroute.store.postgres.db import PgDatabase
from memroute.store.postgres.memories import filter_sql
from memroute.store.postgres.shared_copy import SharedCopy, bump
from memroute.store.records import KeyVectors, KeyWrite, Neighbour, PendingMemory, VecMeta
from memroute.store.vectors import VEC_CHUNK_FLOAT

log = logging.getLogger("memroute.store.postgres")

# A key's recall reads this many times `k` of its nearest vectors before the filter: enough
# when the filter drops under half of them (at 10,000 memories in one key, 30 days of
# retention dropped ~10 %); else one statement with the filter inside answers.
NEAREST_FIRST = 2


def _literal(blob: bytes) -> str:
    """A float32 vector's bytes as pgvector's text input."""
    values = np.frombuffer(blob, dtype=np.float32)
    return "[" + ",".join(repr(float(v)) for v in values) + "]"


class PgVectorRepository:
    def __init__(self, db: PgDatabase) -> None:
        self.db = db
        self._meta = SharedCopy(db, "vector meta", self._read_meta)
        self.error: str | None = None
        try:
            with db.write() as con:
                con.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            self.error = f"pgvector is not available on this server ({type(exc).__name__}: {exc})".strip()
            log.warning("store.postgres.no_pgvector error=%s", exc)

    @property
    def available(self) -> bool:
        return self.error is None

    # -- the meta row and the table ------------------------------------------------

    def meta(self) -> VecMeta:
        """The vector table's meta row, read through the process's copy (every search asks
        for it; a reset on another replica is seen within half a second)."""
        if self.db.in_write_transaction():
            with self.db.read() as con:
                return _meta(con)
        return self._meta.read()

    def _read_meta(self) -> VecMeta:
        with self.db.read() as con:
            return _meta(con)

    def table_exists(self) -> bool:
        with self.db.read() as con:
            return _table_exists(con)

    def reset_unless_current(self, signature: str, dim: int, *, int8: bool, now: str) -> int | None:
        """`reset` unless the table already holds `signature`, checked and done in one
        transaction (the meta row locked, so replicas that race here reset once)."""
        with self.db.write() as con:
            con.execute("SELECT 1 FROM memory_vec_meta WHERE id = 1 FOR UPDATE")
            current = _meta(con)
            if current.ready and current.signature == signature:
                return None
            return self.reset(signature, dim, int8=int8, now=now)

    def reset(self, signature: str, dim: int, *, int8: bool, now: str) -> int:
        """(Re)create `vec_memories` for `signature` (float32 at `dim`) and mark every
        memory for re-embedding; how many memories now wait for a vector."""
        self._check()
        with self.db.write() as con:
            con.execute("DROP TABLE IF EXISTS vec_memories")
            con.execute(
                "CREATE TABLE vec_memories (rowid bigint PRIMARY KEY,"
                f' api_key_id text COLLATE "C" NOT NULL, embedding vector({int(dim)}) NOT NULL)'
            )
            con.execute("CREATE INDEX vec_memories_owner ON vec_memories (api_key_id)")
            con.execute("UPDATE memories SET needs_reindex = 1 WHERE needs_reindex = 0")
            con.execute("UPDATE vec_key_generations SET generation = generation + 1")
            con.execute(
                "UPDATE memory_vec_meta SET active_dim = %s, embedding_signature = %s, last_reset_at = %s,"
                " vec_ready = 1, int8_scale = NULL WHERE id = 1",
                (dim, signature, now),
            )
            bump(con)
            self._meta.forget()  # once this commits
            row = con.execute("SELECT count(*) FROM memories").fetchone()
            return int(row[0]) if row else 0

    def mark_all_pending(self) -> int:
        """Ask for every memory to be embedded again (a forced re-index)."""
        with self.db.write() as con:
            return int(con.execute("UPDATE memories SET needs_reindex = 1 WHERE needs_reindex = 0").rowcount)

    def set_int8_scale(self, scale: float) -> None:
        raise StoreError("vectors on PostgreSQL are float32: int8 quantization is SQLite's")

    def drop_orphans(self) -> int:
        """Delete vectors whose memory is gone."""
        if not self.available or not self.table_exists():
            return 0
        with self.db.write() as con:
            gone = con.execute(
                "DELETE FROM vec_memories AS v WHERE NOT EXISTS"
                " (SELECT 1 FROM memories AS m WHERE m.rowid = v.rowid) RETURNING v.api_key_id"
            ).fetchall()
            for owner in {str(r[0]) for r in gone}:
                _bump(con, owner)
            return len(gone)

    # -- writes --------------------------------------------------------------------

    def store(
        self, items: Iterable[tuple[PendingMemory, bytes]], *, blob_sql: str = "?"
    ) -> dict[str, KeyWrite]:
        """Write the vectors (float32 bytes) of memories embedded from
        `PendingMemory.content` and clear their `needs_reindex`; a memory deleted or edited
        since it was read is skipped. What was stored, per key, with its generations."""
        self._check()
        writes: dict[str, KeyWrite] = {}
        with self.db.write() as con:
            for memory, blob in items:
                # Marked done only while its text is the one embedded (an edit since keeps it
                # pending); the memories' write lock is taken here, before the vector's row.
                row = con.execute(
                    "UPDATE memories SET needs_reindex = 0 WHERE rowid = %s AND content = %s"
                    " RETURNING api_key_id",
                    (memory.rowid, memory.content),
                ).fetchone()
                if row is None:
                    continue
                key = str(row[0])
                write = writes.get(key)
                if write is None:
                    before = _generation(con, key)
                    write = writes[key] = KeyWrite(before, before, [], [])
                con.execute(
                    "INSERT INTO vec_memories (rowid, api_key_id, embedding) VALUES (%s, %s, %s::vector)"
                    " ON CONFLICT (rowid) DO UPDATE SET api_key_id = excluded.api_key_id,"
                    " embedding = excluded.embedding",
                    (memory.rowid, key, _literal(blob)),
                )
                _bump(con, key)
                write.after += 1
                write.rowids.append(memory.rowid)
                write.blobs.append(blob)
        return writes

    def store_empty(self, memories: Iterable[PendingMemory]) -> None:
        """Mark memories whose text yields no vector as done (and drop any older vector)."""
        with self.db.write() as con:
            for memory in memories:
                done = con.execute(
                    "UPDATE memories SET needs_reindex = 0 WHERE rowid = %s AND content = %s",
                    (memory.rowid, memory.content),
                )
                if done.rowcount and _table_exists(con):
                    con.execute("DELETE FROM vec_memories WHERE rowid = %s", (memory.rowid,))
                    _bump(con, memory.api_key_id)

    def delete_in(self, con: Any, rowid: int, api_key_id: str) -> None:
        """Remove one memory's vector inside the caller's transaction (no-op without the table)."""
        if not (self.available and _table_exists(con)):
            return
        if con.execute("DELETE FROM vec_memories WHERE rowid = %s", (rowid,)).rowcount:
            _bump(con, api_key_id)

    # -- reads ---------------------------------------------------------------------

    def generation(self, api_key_id: str) -> int:
        """How many times this key's vectors changed (0: never); see `load_key`."""
        with self.db.read() as con:
            return _generation(con, api_key_id)

    def chunk_count(self, api_key_id: str) -> int:
        """The key's vectors in SQLite's chunks of `VEC_CHUNK_FLOAT` (what the key copy's
        size estimate counts in)."""
        if not self.table_exists():
            return 0
        row = self.db.fetchone("SELECT count(*) FROM vec_memories WHERE api_key_id = %s", (api_key_id,))
        count = int(row[0]) if row else 0
        return -(-count // VEC_CHUNK_FLOAT)

    def load_key(self, api_key_id: str, dim: int, *, int8: bool) -> KeyVectors | None:
        """Every vector of one key with its generation, read in one snapshot (pgvector's
        binary form: a 4-byte header, then big-endian float32s)."""
        if int8:
            return None
        with self.db.read() as con, con.transaction():
            if not self.db.in_write_transaction():
                con.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            generation = _generation(con, api_key_id)
            rows = con.execute(
                "SELECT rowid, vector_send(embedding) FROM vec_memories WHERE api_key_id = %s ORDER BY rowid",
                (api_key_id,),
            ).fetchall()
        if not rows:
            return KeyVectors(generation, np.zeros(0, np.int64), np.zeros((0, dim), np.float32))
        rowids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
        body = b"".join(bytes(r[1])[4:] for r in rows)
        if len(body) != 4 * dim * len(rows):
            return None
        vectors = np.frombuffer(body, dtype=">f4").astype(np.float32).reshape(len(rows), dim)
        return KeyVectors(generation, rowids, vectors)

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
        if not self.available or not self.table_exists():
            return 0
        row = self.db.fetchone("SELECT count(*) FROM vec_memories")
        return int(row[0]) if row else 0

    def knn(
        self, query: bytes, flt: MemoryFilter, k: int, *, query_sql: str = "?", with_vectors: bool = False
    ) -> list[Neighbour]:
        """The `k` nearest memories (cosine distance) that `flt` admits, nearest first (equal
        distances in rowid order, as sqlite-vec gives them: a row's place in the table moves
        with every update here): an exact scan of the owner's vectors, never a global k.
        One key's recall first takes the key's `NEAREST_FIRST × k` nearest vectors alone
        and reads the memories the filter admits among them: the first `k` of those (all of
        them when the key has no more vectors) are the answer. Else, and for a filter by
        session or type (which drops many), one statement with the filter inside. At 10,000
        memories in one key the first way takes ~3 ms, the statement ~5."""
        self._check()
        literal = _literal(query)
        if flt.api_key_id and not flt.session_id and not flt.type:
            wanted = NEAREST_FIRST * k
            near = self.db.fetchall(
                "SELECT rowid, embedding <=> %s::vector AS distance FROM vec_memories"
                " WHERE api_key_id = %s ORDER BY distance, rowid LIMIT %s",
                (literal, flt.api_key_id, wanted),
            )
            admitted = {int(r[0]): r[1:] for r in self._admitted_rows([r[0] for r in near], flt, COLUMNS)}
            if len(admitted) >= k or len(near) < wanted:
                found = [(int(rowid), float(distance)) for rowid, distance in near]
                kept = [(rowid, distance) for rowid, distance in found if rowid in admitted][:k]
                return [
                    Neighbour(row_to_memory(admitted[rowid]), rowid, distance) for rowid, distance in kept
                ]
        where, params = filter_sql(flt, "m")
        owner, owner_params = ("v.api_key_id = %s AND ", [flt.api_key_id]) if flt.api_key_id else ("", [])
        rows = self.db.fetchall(
            f"SELECT near.rowid, near.distance, {M_COLUMNS} FROM ("
            " SELECT v.rowid, v.embedding <=> %s::vector AS distance"
            " FROM vec_memories AS v JOIN memories AS m ON m.rowid = v.rowid"
            f" WHERE {owner}{where} ORDER BY distance, v.rowid LIMIT %s"
            ") AS near JOIN memories AS m ON m.rowid = near.rowid ORDER BY near.distance, near.rowid",
            (literal, *owner_params, *params, k),
        )
        return [Neighbour(row_to_memory(r[2:]), int(r[0]), float(r[1])) for r in rows]

    def _check(self) -> None:
        if self.error is not None:
            raise StoreError(self.error)


def _meta(con: Any) -> VecMeta:
    """The vector table's meta row as `con` sees it (ready only while the table exists)."""
    row = con.execute(
        "SELECT active_dim, embedding_signature, last_reset_at, vec_ready, int8_scale"
        " FROM memory_vec_meta WHERE id = 1"
    ).fetchone()
    if row is None:
        return VecMeta(None, None, None, False, None)
    return VecMeta(row[0], row[1], row[2], bool(row[3]) and _table_exists(con), row[4])


def _table_exists(con: Any) -> bool:
    row = con.execute("SELECT to_regclass('vec_memories') IS NOT NULL").fetchone()
    return bool(row and row[0])


def _generation(con: Any, api_key_id: str) -> int:
    row = con.execute(
        "SELECT generation FROM vec_key_generations WHERE api_key_id = %s", (api_key_id,)
    ).fetchone()
    return int(row[0]) if row else 0


def _bump(con: Any, api_key_id: str) -> None:
    con.execute(
        "INSERT INTO vec_key_generations (api_key_id, generation) VALUES (%s, 1)"
        " ON CONFLICT (api_key_id) DO UPDATE SET generation = vec_key_generations.generation + 1",
        (api_key_id,),
    )
