"""The sqlite-vec index: keeps `vec_memories` in step with the embedding source and
searches it per key.

Lifecycle: the table is created when the first vector's dimension is known; its
signature is `source:model:dim[:int8]`, and a change of signature drops and recreates
it and marks every memory for re-embedding. Vectors are written by the re-index
worker, and before a search `catch_up` embeds the searching key's pending memories
(up to the backfill batch), so a memory added a moment ago is found. Writing embeds
documents through `EmbeddingSources` with the source the caller chose; searching
takes a query vector the caller embedded.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from memroute.embeddings import EmbeddingSources, SourceChoice
from memroute.errors import EmbeddingError
from memroute.models.records import MemoryFilter
from memroute.store.contract import VectorStore
from memroute.store.records import KeyWrite, PendingMemory, VecMeta
from memroute.store.vectors import VEC_CHUNK_FLOAT, VEC_CHUNK_INT8
from memroute.vectors import RowAdmission, Vector, VectorHit
from memroute.vectors.int8 import dequantize, fit_scale, quantize
from memroute.vectors.key_cache import MIN_CHUNKS, KeyMatrix, KeyMatrixCache, as_matrix

log = logging.getLogger("memroute.vectors.sqlite_vec")

RESCORE_CANDIDATES = 100  # int8: this many nearest are re-scored against the float query
STORE_CHUNK = 64  # memories embedded in one call, their vectors written in one transaction


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What one batch of `embed_pending` did: the vectors stored, and the source's failure
    that ended it early (the chunks stored before it are kept and counted)."""

    stored: int
    failure: EmbeddingError | None = None


class SqliteVecIndex:
    """The `VectorIndex` on the store's own vector table (hybrid retrieval fuses its hits
    with keyword search by RRF): sqlite-vec in the SQLite file, or pgvector on PostgreSQL
    (`name`), with in-memory copies of large keys (`key_cache`)."""

    fuse_with_keywords = True

    def __init__(
        self,
        vectors: VectorStore,
        sources: EmbeddingSources,
        *,
        int8: bool,
        now: Callable[[], str],
        backfill_batch: int = 32,
        cache_bytes: int = 0,
        name: str = "sqlite-vec",
    ) -> None:
        self.name = name
        self.vectors = vectors
        self.sources = sources
        self.int8 = int8
        self._now = now
        self.backfill_batch = backfill_batch
        self.key_cache = KeyMatrixCache(self._load_key, self._wants_copy, max_bytes=cache_bytes)

    def _wants_copy(self, key: str) -> bool:
        """A key with vectors whose copy fits the cache (estimated from its chunk count
        before anything is loaded)."""
        chunks = self.vectors.chunk_count(key)
        if chunks < MIN_CHUNKS:
            return False
        dim = self.vectors.meta().active_dim or 0
        per_chunk = VEC_CHUNK_INT8 if self.int8 else VEC_CHUNK_FLOAT
        return chunks * per_chunk * (dim * 4 + 8) <= self.key_cache.max_bytes

    def _load_key(self, key: str) -> KeyMatrix | None:
        meta = self.vectors.meta()
        if not meta.ready or meta.active_dim is None or (self.int8 and meta.int8_scale is None):
            return None
        loaded = self.vectors.load_key(key, meta.active_dim, int8=self.int8)
        if loaded is None:
            log.warning("memory.vec_cache.unknown_layout: searching sqlite-vec directly")
            return None
        return KeyMatrix(loaded.generation, loaded.rowids, as_matrix(loaded.vectors, meta.int8_scale))

    @property
    def available(self) -> bool:
        return self.vectors.available

    def signature(self, choice: SourceChoice, dim: int) -> str:
        """`source:model:dim[:int8]` with the model really loaded (offline, the default static
        model is a stand-in distilled locally: its vectors must not pass for potion's)."""
        return self._signature_of(choice.source, self.sources.embedder(choice).model, dim)

    def _signature_of(self, source: str | None, model: str, dim: int) -> str:
        return f"{source}:{model}:{dim}" + (":int8" if self.int8 else "")

    def needs_work(self, choice: SourceChoice) -> bool:
        """Whether a re-index pass has anything to do for `choice`: memories wait for a
        vector, or memories exist and the table was made for another source. No model is
        loaded to find out when the choice names its model and width up front (the bundled
        MiniLM, hashing) or the model is loaded already: an idle server keeps it unloaded."""
        if self.vectors.pending(None, 1):
            return True
        if not self.vectors.holds_memories():
            return False
        wanted = self._known_signature(choice)
        meta = self.vectors.meta()
        return wanted is None or not (meta.ready and meta.signature == wanted)

    def _known_signature(self, choice: SourceChoice) -> str | None:
        loaded = self.sources.loaded(choice)
        if loaded is not None and loaded.dimensions:
            model, dim = loaded.model, loaded.dimensions
        elif choice.source in ("transformers", "hashing") and choice.model and choice.dimensions:
            model, dim = choice.model, choice.dimensions
        else:
            return None
        return self._signature_of(choice.source, model, dim)

    def sync(self, choice: SourceChoice) -> VecMeta:
        """Make the table match `choice` now (a changed source resets it and marks every
        memory for re-embedding), even when no memory is waiting. Loads the model."""
        embedder = self.sources.embedder(choice)
        dim = embedder.dimensions
        if dim is None:  # a remote model: one probe teaches the dimension
            dim = int(self.sources.embed_documents(choice, ["dimension probe"]).shape[1])
        return self.ensure_ready(choice, dim)

    def ensure_ready(self, choice: SourceChoice, dim: int) -> VecMeta:
        """The table for `choice` at `dim`, (re)created when the signature differs."""
        wanted = self.signature(choice, dim)
        meta = self.vectors.meta()
        if meta.ready and meta.signature == wanted:
            return meta
        pending = self.vectors.reset_unless_current(wanted, dim, int8=self.int8, now=self._now())
        if pending is not None:
            log.info("memory.vec.reset signature=%s previous=%s pending=%d", wanted, meta.signature, pending)
        return self.vectors.meta()

    # -- writing vectors -------------------------------------------------------------

    def embed_pending(
        self,
        choice: SourceChoice,
        api_key_id: str | None,
        limit: int,
        stopping: threading.Event | None = None,
    ) -> BatchResult:
        """Embed and store up to `limit` memories still waiting for a vector (one key's, or
        any), shortest first (similar lengths pad little), `STORE_CHUNK` at a time, each chunk
        stored as soon as it is embedded; a set `stopping` ends the batch between two chunks,
        so a stop waits for one chunk's model run at most. A chunk the source fails to embed
        ends the batch with that `failure`; the chunks stored before it are kept and counted."""
        pending = sorted(self.vectors.pending(api_key_id, limit), key=lambda p: len(p.content))
        stored = 0
        for start in range(0, len(pending), STORE_CHUNK):
            if stopping is not None and stopping.is_set():
                break
            try:
                stored += self._embed_and_store(choice, pending[start : start + STORE_CHUNK])
            except EmbeddingError as exc:
                return BatchResult(stored, exc)
        return BatchResult(stored)

    def _embed_and_store(self, choice: SourceChoice, pending: list[PendingMemory]) -> int:
        """Embed `pending` and store their vectors in one transaction: how many were stored (a
        text without a single token gets no vector, and is done)."""
        matrix = self.sources.embed_documents(choice, [p.content for p in pending])
        meta = self.ensure_ready(choice, int(matrix.shape[1]))
        good = [(p, row) for p, row in zip(pending, matrix, strict=True) if np.any(row)]
        stored = 0
        if good:
            writes = self.vectors.store(self._blobs(meta, good), blob_sql=self._blob_sql)
            for key, write in writes.items():
                self._follow(meta, key, write)
                stored += len(write.rowids)
        if len(good) < len(pending):
            self.vectors.store_empty([p for p, row in zip(pending, matrix, strict=True) if not np.any(row)])
        return stored

    def _follow(self, meta: VecMeta, key: str, write: KeyWrite) -> None:
        """Take what was just stored for `key` into its in-memory copy, read back from the
        stored bytes exactly as a rebuild would read them."""
        if meta.active_dim is None or not self.key_cache.holds(key, write.before):
            return  # no copy of the key to follow (re-indexing keys nobody searched)
        joined, shape = b"".join(write.blobs), (len(write.blobs), meta.active_dim)
        if self.int8:
            rows = as_matrix(np.frombuffer(joined, dtype=np.int8).reshape(shape), meta.int8_scale)
        else:
            rows = as_matrix(np.frombuffer(joined, dtype=np.float32).reshape(shape), None)
        self.key_cache.apply(key, write.before, write.after, np.asarray(write.rowids, dtype=np.int64), rows)

    @property
    def _blob_sql(self) -> str:
        return "vec_int8(?)" if self.int8 else "?"

    def _blobs(
        self, meta: VecMeta, rows: list[tuple[PendingMemory, NDArray[np.float32]]]
    ) -> list[tuple[PendingMemory, bytes]]:
        if not rows:
            return []
        if not self.int8:
            return [(p, np.asarray(v, dtype=np.float32).tobytes()) for p, v in rows]
        scale = meta.int8_scale
        if scale is None:
            self.vectors.set_int8_scale(fit_scale(np.stack([v for _, v in rows])))
            scale = self.vectors.meta().int8_scale
            assert scale is not None
        return [(p, quantize(v, scale).tobytes()) for p, v in rows]

    # -- searching -------------------------------------------------------------------

    def catch_up(self, choice: SourceChoice, dim: int, api_key_id: str | None) -> None:
        """Before a search with a `dim`-sized query of `choice`: the table matches `choice`
        (a changed source resets it), and `api_key_id`'s pending memories (up to the
        backfill batch) are embedded. Raises `EmbeddingError` when the source fails."""
        self.ensure_ready(choice, dim)
        if self.backfill_batch > 0 and api_key_id is not None:
            failure = self.embed_pending(choice, api_key_id, self.backfill_batch).failure
            if failure is not None:
                raise failure

    def search(
        self, vector: Vector, flt: MemoryFilter, k: int, admitted: RowAdmission | None = None
    ) -> list[VectorHit]:
        """The `k` memories nearest to `vector` among those `flt` admits (per key inside the
        k-nearest query), best first; score = cosine similarity clipped to [0, 1]. A key's
        in-memory copy checks its candidates with `admitted` when given (the searcher's
        own copy of the key's memories), else by reading their rows."""
        if not np.any(vector):
            # No token the embedding knows ("*", "^"): a zero vector has no direction, so no
            # neighbours (sqlite-vec's cosine distance to it is NULL).
            return []
        meta = self.vectors.meta()
        if not meta.ready:  # nothing embedded yet
            return []
        if flt.api_key_id is not None:
            copy = self.key_cache.get(flt.api_key_id, self.vectors.generation(flt.api_key_id))
            if copy is not None:
                return self._search_copy(copy, vector, flt, k, admitted)
        if not self.int8:
            hits = self.vectors.knn(np.asarray(vector, dtype=np.float32).tobytes(), flt, k)
            return [VectorHit(h.memory_id, max(0.0, 1.0 - h.distance), h.memory) for h in hits]
        if meta.int8_scale is None:  # nothing stored yet
            return []
        return self._search_int8(vector, meta.int8_scale, flt, k)

    def _search_int8(self, vector: Vector, scale: float, flt: MemoryFilter, k: int) -> list[VectorHit]:
        """The nearest int8 vectors, re-scored against the float query."""
        candidates = self.vectors.knn(
            quantize(vector, scale).tobytes(),
            flt,
            max(k, RESCORE_CANDIDATES),
            query_sql="vec_int8(?)",
            with_vectors=True,
        )
        rescored = []
        for hit in candidates:
            assert hit.vector is not None
            approx = dequantize(hit.vector, scale)
            norm = float(np.linalg.norm(approx)) or 1.0
            score = max(0.0, float(np.dot(vector, approx)) / norm)
            rescored.append(VectorHit(hit.memory_id, score, hit.memory))
        rescored.sort(key=lambda h: h.score, reverse=True)
        return rescored[:k]

    def _search_copy(
        self, copy: KeyMatrix, vector: Vector, flt: MemoryFilter, k: int, admitted: RowAdmission | None
    ) -> list[VectorHit]:
        """Exact cosine search of an in-memory copy; the same filter as the SQL path (or
        `admitted`). The filter costs more than the product here, so candidates are checked
        in growing rounds (1.5 k first: most memories pass)."""
        admit = admitted if admitted is not None else (lambda rowids: self.vectors.admitted(rowids, flt))
        scores = copy.matrix @ (vector / (float(np.linalg.norm(vector)) or 1.0))
        total = len(scores)
        hits: list[VectorHit] = []
        seen = np.zeros(total, dtype=bool)  # ties may reorder between rounds: never check one twice
        checked = 0
        want = min(total, max(k + k // 2, 16))
        while len(hits) < k and checked < total:
            if want >= total:
                order = np.argsort(-scores)
            else:
                top = np.argpartition(-scores, want - 1)[:want]
                order = top[np.argsort(-scores[top])]
            window = order[~seen[order]]
            seen[window] = True
            passed = admit([int(r) for r in copy.rowids[window]])
            for index in window:
                memory_id = passed.get(int(copy.rowids[index]))
                if memory_id is not None:
                    hits.append(VectorHit(memory_id, max(0.0, float(scores[index]))))
            checked, want = len(order), min(total, want * 4)
        hits.sort(key=lambda h: h.score, reverse=True)
        return hits[:k]
