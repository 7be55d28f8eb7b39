"""Re-indexing: embedding the memories still waiting for a vector, a batch at a time,
with the memory embedding source the settings select, in the background or on request.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from memroute.embeddings import SourceChoice
from memroute.errors import EmbeddingError
from memroute.loops import WakeLoop
from memroute.models.status import ReindexProgress
from memroute.store.contract import VectorStore
from memroute.vectors.sqlite_vec import SqliteVecIndex

log = logging.getLogger("memroute.semantic")

# Memories embedded per pass: sorted by length over more texts, MiniLM pads less (512: ~280
# memories/s against ~220 with 64 on 2 cores); their vectors are stored 64 per transaction.
REINDEX_BATCH = 512
ERROR_BACKOFF_S = 30.0
WAKE_GAP_S = 0.1  # new memories within this long after a pass wait for one more pass together


class Reindexer:
    def __init__(
        self, index: SqliteVecIndex, vectors: VectorStore, current_source: Callable[[], SourceChoice]
    ) -> None:
        """`current_source()`: the memory embedding source the settings select now."""
        self._index = index
        self._vectors = vectors
        self._current_source = current_source
        self.last_error: str | None = None
        self._batch_lock = threading.Lock()  # one batch at a time: the worker and `reindex(wait=True)`

    def batch(self, limit: int = REINDEX_BATCH, stopping: threading.Event | None = None) -> tuple[int, int]:
        """Embed one batch of pending memories with the current source: (stored, errors); a
        set `stopping` ends it early (see `SqliteVecIndex.embed_pending`). When the source
        fails, what it stored before counts as stored and what still waits (up to `limit`)
        as errors."""
        choice = self._current_source()
        if choice.source is None or not self._index.available:
            return 0, 0
        try:
            if not self._index.needs_work(choice):
                return 0, 0
            with self._batch_lock:  # else both would embed the same pending memories
                self._index.sync(choice)
                result = self._index.embed_pending(choice, None, limit, stopping)
        except EmbeddingError as exc:
            return 0, self._failed(choice, exc, limit)
        if result.failure is not None:
            return result.stored, self._failed(choice, result.failure, limit)
        self.last_error = None
        return result.stored, 0

    def _failed(self, choice: SourceChoice, exc: EmbeddingError, limit: int) -> int:
        """Note the source's failure (`last_error`, the log): how many memories still wait."""
        self.last_error = exc.message
        log.warning("memory.reindex.failed source=%s reason=%s", choice.source, exc.reason)
        return len(self._vectors.pending(None, limit))


class ReindexWorker:
    """Runs `batch(stopping)` until nothing is left, in the background, whenever an embedding
    source is configured; wakes on new memories and polls for settings changed elsewhere. A
    stop ends the batch running (it gets the stop's event) after the chunk being embedded."""

    def __init__(self, batch: Callable[[threading.Event], tuple[int, int]], poll_s: float) -> None:
        self._batch = batch
        self._loop = WakeLoop("reindex", poll_s, self._drain, gap_s=WAKE_GAP_S)
        self._processed = 0
        self._errors = 0
        self._running = False

    def start(self) -> None:
        self._loop.start()

    def notify(self) -> None:
        self._loop.wake()

    def stop(self) -> None:
        self._loop.stop(30)

    def progress(self) -> ReindexProgress:
        return ReindexProgress(running=self._running, processed=self._processed, errors=self._errors)

    def _drain(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            try:
                self._running = True
                stored, errors = self._batch(stopping)
            except Exception:  # the database may be busy or closing; try again later
                log.exception("memory.reindex.worker_error")
                stored, errors = 0, 1
            finally:
                self._running = False
            self._processed += stored
            self._errors += errors
            if errors:
                stopping.wait(ERROR_BACKOFF_S)
                return
            if not stored:
                return
