"""In-memory copies of keys' vectors, searched with numpy.

sqlite-vec's exact scan has no SIMD in its PyPI build: 10,000 vectors of 256 dims take
~7 ms, where a numpy product takes ~0.2 ms (1,000 vectors: ~0.7 ms against ~0.02 ms).
So a key's vectors are also kept as one L2-normalised float32 matrix. A copy is used
only while its generation equals the key's generation in the database (bumped by every
change of the key's vectors, by any process); otherwise the search goes to sqlite-vec
and the copy is rebuilt in the background, never on the request path (a key gets its
first copy once it is searched three times within 30 s). Vectors this
process writes are taken into the copy in place (`apply`), so a key that learns a turn
per chat keeps its copy without a rebuild. Memory is bounded (LRU by bytes).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from memroute.loops import WakeLoop
from memroute.lru import RecentCounts

log = logging.getLogger("memroute.vectors.key_cache")

MIN_CHUNKS = 1  # every key with a vector: a copy takes new vectors in place, so it stays cheap
UNCOPIED_KEYS_REMEMBERED = 10_000
# A key gets its first copy at its third search within 30 s (as a key's in-process index
# in store/key_index.py): with 1,000 keys searched at random, copying at the first search
# loaded ~1 MB per search and tripled the tail of recall's latency.
ADMIT_AFTER = 3
ADMIT_WITHIN_S = 30.0

_Array = TypeVar("_Array", NDArray[np.int64], NDArray[np.float32])


@dataclass(frozen=True, slots=True)
class KeyMatrix:
    """One key's vectors: `rowids[i]` is the memory of row `i` of `matrix`. The arrays are
    views of buffers with room to grow; rows past them are invisible to searches."""

    generation: int
    rowids: NDArray[np.int64]
    matrix: NDArray[np.float32]  # rows L2-normalised: matrix @ query = cosine similarity

    @property
    def nbytes(self) -> int:
        return int(_base(self.rowids).nbytes + _base(self.matrix).nbytes)

    def with_rows(self, generation: int, rowids: NDArray[np.int64], rows: NDArray[np.float32]) -> KeyMatrix:
        """This copy with `rows` (normalised) set for `rowids`: replaced where the row exists,
        appended otherwise. Existing rows are never changed under a search that holds this
        copy: appends go to spare room, a replacement copies the arrays."""
        present = np.isin(rowids, self.rowids)
        ids, matrix = self.rowids, self.matrix
        if present.any():
            ids, matrix = ids.copy(), matrix.copy()
            position = {int(r): i for i, r in enumerate(ids)}
            for rowid, row in zip(rowids[present], rows[present], strict=True):
                matrix[position[int(rowid)]] = row
        return _appended(generation, ids, matrix, rowids[~present], rows[~present])


def _base(array: _Array) -> _Array:
    """The buffer a view was cut from (the array itself when it owns its data)."""
    base = array.base
    return cast("_Array", base) if isinstance(base, np.ndarray) else array


def _appended(
    generation: int,
    ids: NDArray[np.int64],
    matrix: NDArray[np.float32],
    new_ids: NDArray[np.int64],
    new_rows: NDArray[np.float32],
) -> KeyMatrix:
    """`ids`/`matrix` followed by the new rows, written into the spare room of their buffers
    when there is enough (else into new buffers twice the size). Only the cache's newest
    copy of a key is ever extended, so no other copy sees that room."""
    count, extra = len(ids), len(new_ids)
    id_buffer, row_buffer = _base(ids), _base(matrix)
    fits = extra == 0 or (
        ids.base is id_buffer
        and matrix.base is row_buffer
        and len(id_buffer) >= count + extra
        and _writes_at_end(id_buffer, ids)
    )
    if not fits:
        capacity = max(16, 2 * (count + extra))
        id_buffer = np.empty(capacity, dtype=np.int64)
        row_buffer = np.empty((capacity, matrix.shape[1]), dtype=np.float32)
        id_buffer[:count] = ids
        row_buffer[:count] = matrix
    id_buffer[count : count + extra] = new_ids
    row_buffer[count : count + extra] = new_rows
    return KeyMatrix(generation, id_buffer[: count + extra], row_buffer[: count + extra])


def _writes_at_end(buffer: NDArray[np.generic], view: NDArray[np.generic]) -> bool:
    """Whether `view` starts at the buffer's start (its spare room begins right after it)."""
    return bool(view.__array_interface__["data"][0] == buffer.__array_interface__["data"][0])


class KeyMatrixCache:
    def __init__(
        self,
        load: Callable[[str], KeyMatrix | None],
        wants_copy: Callable[[str], bool],
        *,
        max_bytes: int,
    ) -> None:
        """`load(key)` reads a key's vectors with their generation; `wants_copy(key)` says
        whether a key is worth a copy and would fit (checked before loading: a key too
        big for `max_bytes` is never loaded just to be dropped)."""
        self._load = load
        self._wants_copy = wants_copy
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, KeyMatrix] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._wanted: OrderedDict[str, int] = OrderedDict()
        self._loop = WakeLoop("vec-cache", 5.0, self._drain)
        # Keys found too small or too big for a copy, with the generation they were checked at.
        self._uncopied: OrderedDict[str, int] = OrderedDict()
        # Searches of keys without a copy, within `ADMIT_WITHIN_S`.
        self._searches = RecentCounts(ADMIT_WITHIN_S, UNCOPIED_KEYS_REMEMBERED)

    def get(self, key: str, generation: int) -> KeyMatrix | None:
        """The current copy of `key`'s vectors, or None: then a rebuild is requested if the
        key had a copy, or is searched often (`ADMIT_AFTER`; a key searched once in a while
        is not worth loading: ~1 MB per 1,000 vectors read for one search)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.generation == generation:
                self._entries.move_to_end(key)
                return entry
            if self._uncopied.get(key) == generation:
                return None
            if entry is None and self._searches.count(key) < ADMIT_AFTER:
                return None
        self._request(key, generation)
        return None

    def _request(self, key: str, generation: int) -> None:
        if not self._loop.started or self.max_bytes <= 0:
            return
        with self._lock:
            self._wanted[key] = generation
        self._loop.wake()

    def refresh(self, key: str, generation: int | None = None) -> None:
        """Rebuild `key`'s copy now (in this thread), if it needs one and fits.
        `generation`: the key's generation when the copy was asked for."""
        if not self._wants_copy(key):
            with self._lock:
                self._drop(key)
                if generation is not None:
                    self._uncopied[key] = generation
                    self._uncopied.move_to_end(key)
                    while len(self._uncopied) > UNCOPIED_KEYS_REMEMBERED:
                        self._uncopied.popitem(last=False)
            return
        entry = self._load(key)
        with self._lock:
            self._keep(key, entry)

    def holds(self, key: str, generation: int) -> bool:
        """Whether the cache has `key`'s copy at `generation`."""
        with self._lock:
            entry = self._entries.get(key)
            return entry is not None and entry.generation == generation

    def apply(
        self, key: str, before: int, after: int, rowids: NDArray[np.int64], rows: NDArray[np.float32]
    ) -> None:
        """Take the vectors this process just stored for `key` (`rows` normalised, the key's
        generation `before` → `after` around the write) into its copy, if the copy was
        current right before the write; any other change leaves it to a rebuild."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.generation != before:
                return
            self._keep(key, entry.with_rows(after, rowids, rows))

    def _keep(self, key: str, entry: KeyMatrix | None) -> None:
        """Make `entry` the copy of `key` (None, or too big for the cache: no copy), the least
        recently used copies making room for it. Call with `_lock` held."""
        self._drop(key)
        if entry is None or entry.nbytes > self.max_bytes:
            return
        while self._entries and self._bytes + entry.nbytes > self.max_bytes:
            self._drop(next(iter(self._entries)))
        self._entries[key] = entry
        self._bytes += entry.nbytes

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry.nbytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._uncopied.clear()
            self._searches.clear()
            self._bytes = 0

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"keys": len(self._entries), "bytes": self._bytes}

    # -- the background rebuild ---------------------------------------------------------

    def start(self) -> None:
        if self.max_bytes > 0:
            self._loop.start()

    def stop(self) -> None:
        self._loop.stop(10)

    def _drain(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            with self._lock:
                if not self._wanted:
                    return
                key, generation = self._wanted.popitem(last=False)
            try:
                self.refresh(key, generation)
            except Exception:  # the database may be busy or closing; the next search asks again
                log.exception("memory.vec_cache.refresh_failed")


def as_matrix(vectors: NDArray[np.float32] | NDArray[np.int8], scale: float | None) -> NDArray[np.float32]:
    """Float32 rows of unit length (int8 rows dequantised with `scale` first). Works in
    place on a writeable float32 `vectors` (no second copy of a large key)."""
    matrix: NDArray[np.float32] = vectors.astype(np.float32, copy=False)
    if not matrix.flags.writeable:
        matrix = matrix.copy()
    if scale:
        matrix /= np.float32(scale)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    matrix /= norms
    return matrix
