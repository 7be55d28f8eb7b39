"""Keeping Qdrant in step with SQLite: the outbox, the resumable back-fill and the orphan
sweep, and the worker that runs them in the background.

Migration 0004's triggers queue every change to a memory (while Qdrant is enabled) in
the same transaction; `QdrantSync.step` pushes the queue and back-fills every memory
that existed before, resumably, into `<collection>_<dimension>`. Qdrant answers
searches only once the back-fill of its current collection has finished (the sync
state's `serving`). Documents are embedded with the source the caller chose.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from memroute.embeddings import EmbeddingSources, SourceChoice
from memroute.errors import EmbeddingError, QdrantError
from memroute.loops import WakeLoop
from memroute.models.records import MemoryRecord
from memroute.store.contract import QdrantOutbox
from memroute.store.records import OutboxEntry
from memroute.vectors.qdrant import QdrantConnection
from memroute.vectors.qdrant_pool import QdrantPool
from memroute.vectors.qdrant_settings import QdrantSettings

log = logging.getLogger("memroute.qdrant")

SYNC_BATCH = 64
POLL_S = 5.0
WAKE_GAP_S = 0.1  # changes within this long after a pass are pushed by the next one together
MAX_BACKOFF_S = 60.0

#: memory ids → the memories that still exist
GetMany = Callable[[Sequence[str]], dict[str, MemoryRecord]]


def sync_target(qs: QdrantSettings, collection: str) -> str:
    """Where a back-fill goes: the server (or local folder) and the collection."""
    return f"{qs.where}#{collection}"


def qdrant_embedding(qs: QdrantSettings, memory_source: Callable[[], SourceChoice]) -> SourceChoice:
    """`qdrantEmbeddingModel` when set (a provider's model), else the memory embedding
    source, so Qdrant works offline with the local models."""
    if qs.embedding_model:
        return SourceChoice("remote", qs.embedding_model, None, f"qdrantEmbeddingModel {qs.embedding_model}")
    return memory_source()


class QdrantSync:
    def __init__(
        self,
        repo: QdrantOutbox,
        get_many: GetMany,
        sources: EmbeddingSources,
        pool: QdrantPool,
        *,
        settings: Callable[[], QdrantSettings],
        memory_source: Callable[[], SourceChoice],
        now: Callable[[], str],
        key_batch: int,
    ) -> None:
        """`settings()` and `memory_source()` are read on every step; `key_batch`: how many
        of a key's queued changes `push_key` sends before a search (0: none)."""
        self.repo = repo
        self._get_many = get_many
        self._sources = sources
        self._pool = pool
        self._settings = settings
        self._memory_source = memory_source
        self._now = now
        self._key_batch = key_batch
        self._lock = threading.Lock()  # the worker and `reindex --wait` in one process
        self._dims: dict[tuple[str | None, str | None], int] = {}

    def known_dimension(self, choice: SourceChoice) -> int | None:
        """The size of `choice`'s vectors, if known without embedding anything."""
        if choice.source != "remote":
            return self._sources.embedder(choice).dimensions
        return self._dims.get((choice.source, choice.model))

    def _dimension(self, choice: SourceChoice) -> int:
        dim = self.known_dimension(choice)
        if dim is None:  # a provider's model: one probe teaches the size
            dim = int(self._sources.embed_documents(choice, ["dimension probe"]).shape[1])
            self._dims[(choice.source, choice.model)] = dim
        return dim

    def step(self) -> int:
        """Push one batch of queued changes and one of the back-fill with the current
        settings; the number of memories handled (0: nothing to do, or Qdrant is off).
        Raises QdrantError / EmbeddingError."""
        with self._lock:
            qs = self._settings()
            if not qs.active or not self._pool.installed():
                return 0
            choice = qdrant_embedding(qs, self._memory_source)
            if choice.source is None:
                return 0
            connection = self._pool.connection()
            done = self._step(connection, choice, self._dimension(choice))
            self._pool.recovered()
            return done

    def _step(self, connection: QdrantConnection, choice: SourceChoice, dim: int) -> int:
        """One batch embedded with `choice` into the collection for `dim`. A new collection,
        or another target, restarts the back-fill."""
        collection, created = connection.ensure_collection(dim)
        target = sync_target(connection.settings, collection)
        state = self.repo.state()
        if state.target != target or created:
            if state.target is not None:
                log.warning(
                    "memory.qdrant.new_collection previous=%s now=%s: back-filling every memory",
                    state.target,
                    target,
                )
            self.repo.restart_backfill(target, now=self._now(), serving=False)
            state = self.repo.state()
        done = self._push(connection, choice, collection, self.repo.outbox(SYNC_BATCH))
        if state.backfill_next is not None:
            done += self._backfill(connection, choice, collection, target, state.backfill_next)
        return done

    def _backfill(
        self, connection: QdrantConnection, choice: SourceChoice, collection: str, target: str, start: int
    ) -> int:
        rows = self.repo.backfill_batch(start, SYNC_BATCH)
        self._upsert(connection, choice, collection, [memory for _, memory in rows])
        finished = len(rows) < SYNC_BATCH
        if finished:
            self._sweep(connection, collection)
        next_rowid = None if finished else rows[-1][0] + 1
        if self.repo.advance(target, start, next_rowid, len(rows), now=self._now()) and finished:
            log.info(
                "memory.qdrant.backfill_done collection=%s pushed=%d", collection, self.repo.state().pushed
            )
        return max(1, len(rows))

    def push_key(
        self, connection: QdrantConnection, choice: SourceChoice, collection: str, api_key_id: str
    ) -> None:
        """Push one key's queued changes before a search, so what it added a moment ago is
        found (as sqlite-vec embeds a searching key's pending memories first)."""
        if self._key_batch > 0:
            self._push(connection, choice, collection, self.repo.outbox(self._key_batch, api_key_id))

    def _push(
        self,
        connection: QdrantConnection,
        choice: SourceChoice,
        collection: str,
        entries: Sequence[OutboxEntry],
    ) -> int:
        if not entries:
            return 0
        wanted = [e.memory_id for e in entries if e.op == "upsert"]
        found = self._get_many(wanted)
        gone = [e.memory_id for e in entries if e.memory_id not in found]
        self._upsert(connection, choice, collection, list(found.values()))
        connection.delete(collection, gone)
        self.repo.ack(entries)
        return len(entries)

    def _upsert(
        self,
        connection: QdrantConnection,
        choice: SourceChoice,
        collection: str,
        memories: Sequence[MemoryRecord],
    ) -> None:
        if not memories:
            return
        matrix = self._sources.embed_documents(choice, [m.content for m in memories])
        vectors = [(m, row) for m, row in zip(memories, matrix, strict=True) if row.any()]
        connection.upsert(collection, vectors)
        # A text without a single token has no vector: drop any older point of it.
        connection.delete(
            collection, [m.id for m, row in zip(memories, matrix, strict=True) if not row.any()]
        )

    def _sweep(self, connection: QdrantConnection, collection: str) -> None:
        """Delete points whose memory no longer exists (deleted while Qdrant was off, or
        left in a collection used before)."""
        removed = 0
        for ids in connection.memory_ids(collection):
            orphans = sorted(set(ids) - self.repo.existing_ids(ids))
            connection.delete(collection, orphans)
            removed += len(orphans)
        if removed:
            self.repo.note_orphans_removed(removed)
            log.info("memory.qdrant.orphans_removed collection=%s count=%d", collection, removed)


class QdrantSyncWorker:
    """Runs `step()` until it has nothing left, in the background; wakes on changes, polls
    for settings changed elsewhere, and backs off (the pool's `retry_s`, doubling up to
    60 s) while Qdrant fails."""

    def __init__(self, step: Callable[[], int], pool: QdrantPool) -> None:
        self._step = step
        self._pool = pool
        self._loop = WakeLoop("qdrant-sync", POLL_S, self._drain, gap_s=WAKE_GAP_S)
        self._backoff = 0.0
        self._retry_now = threading.Event()  # ends a back-off early (settings changed, stopping)

    def start(self) -> None:
        self._loop.start()

    def notify(self) -> None:
        self._loop.wake()

    def retry_now(self) -> None:
        self._retry_now.set()
        self._loop.wake()

    def stop(self) -> None:
        self._loop.stopping.set()  # before ending a back-off: `_wait` checks it after clearing
        self._retry_now.set()
        self._loop.stop(30)

    def _drain(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            try:
                done = self._step()
            except QdrantError as exc:
                self._pool.trip(exc)
                self._wait(stopping)
                return
            except EmbeddingError as exc:  # Qdrant itself is fine: searches may go on
                log.warning("memory.qdrant.sync_embedding_failed error=%s", exc.message)
                self._pool.note(exc.message)
                self._wait(stopping)
                return
            except Exception:  # the database may be busy or closing: try again later
                log.exception("memory.qdrant.sync_error")
                stopping.wait(POLL_S)
                return
            self._backoff = 0.0
            if not done:
                return

    def _wait(self, stopping: threading.Event) -> None:
        """Back off until the next try, a settings change or the stop; a stop that came while
        the failing step ran ends it at once (it is not lost with the cleared retry)."""
        self._backoff = min(MAX_BACKOFF_S, max(self._pool.retry_s, 0.1, self._backoff * 2))
        self._retry_now.clear()
        if not stopping.is_set():
            self._retry_now.wait(self._backoff)
