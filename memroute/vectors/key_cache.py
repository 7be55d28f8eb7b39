"""In-memory copies of large keys' vectors, searched with numpy.

sqlite-vec's exact scan has no SIMD in its PyPI build: 10,000 vectors of 256 dims take
~7 ms, where a numpy product takes ~0.2 ms. So the vectors of a key with many memories
are also kept as one L2-normalised float32 matrix. A copy is used only while its
generation equals the key's generation in the database (bumped by every change of the
key's vectors, by any process); otherwise the search goes to sqlite-vec and the copy
is rebuilt in the background, never on the request path. Memory is bounded (LRU by
bytes).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from memroute.loops import WakeLoop

log = logging.getLogger("memroute.vectors.key_cache")

MIN_CHUNKS = 64  # keys with fewer vector chunks (≤ 1,024 float vectors) are fast enough in sqlite-vec
UNCOPIED_KEYS_REMEMBERED = 10_000


@dataclass(frozen=True, slots=True)
class KeyMatrix:
    generation: int
    rowids: NDArray[np.int64]
    matrix: NDArray[np.float32]  # rows L2-normalised: matrix @ query = cosine similarity

    @property
    def nbytes(self) -> int:
        return int(self.rowids.nbytes + self.matrix.nbytes)


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

    def get(self, key: str, generation: int) -> KeyMatrix | None:
        """The current copy of `key`'s vectors, or None (then a rebuild is requested)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.generation == generation:
                self._entries.move_to_end(key)
                return entry
            if self._uncopied.get(key) == generation:
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
