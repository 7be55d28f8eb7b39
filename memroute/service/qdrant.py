"""Qdrant as the first vector index: its settings, which embedding it uses, whether it
may answer a search now, the sync it runs, and the settings page's operations.

Qdrant answers searches only once the back-fill of its current collection has
finished; until then, and whenever Qdrant fails, retrieval uses sqlite-vec (kept up
to date alongside), then FTS5, and says why. The pieces that talk to Qdrant live in
`memroute.vectors` (connection, pool and breaker, sync); this class decides.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from memroute.clock import parse_time
from memroute.embeddings import EmbeddingSources, SourceChoice
from memroute.errors import EmbeddingError, QdrantError
from memroute.memory.settings import MemorySettings
from memroute.models.results import QdrantDrain
from memroute.models.status import (
    QdrantBackfill,
    QdrantCleanup,
    QdrantHealth,
    QdrantModelChoice,
    QdrantSearchTest,
    QdrantStatus,
)
from memroute.service.providers import ProviderRegistry
from memroute.store.contract import QdrantOutbox
from memroute.upstream.lazy import LazyClient
from memroute.upstream.models import ModelsUnavailable, listed_model_ids
from memroute.vectors.qdrant import INSTALL_HINT, QdrantConnection, QdrantIndex
from memroute.vectors.qdrant_pool import QdrantPool
from memroute.vectors.qdrant_settings import QdrantSettings, validate_update
from memroute.vectors.qdrant_sync import QdrantSync, QdrantSyncWorker, qdrant_embedding, sync_target

log = logging.getLogger("memroute.qdrant")


class QdrantService:
    def __init__(
        self,
        settings: Callable[[], QdrantSettings],
        repo: QdrantOutbox,
        pool: QdrantPool,
        sync: QdrantSync,
        worker: QdrantSyncWorker,
        *,
        sources: EmbeddingSources,
        providers: ProviderRegistry,
        http: LazyClient,
        memory_settings: Callable[[], MemorySettings],
        memory_source: Callable[[MemorySettings], SourceChoice],
        now: Callable[[], str],
    ) -> None:
        """`settings()` reads the stored Qdrant settings over the environment's; `worker`
        runs `sync.step` in the background; `http` lists the providers' models;
        `memory_source(ms)` is the memory embedding source."""
        self.settings = settings
        self._repo = repo
        self._pool = pool
        self._sync = sync
        self._worker = worker
        self._sources = sources
        self._providers = providers
        self._http = http
        self._memory_settings = memory_settings
        self._memory_source = memory_source
        self._now = now

    # -- settings --------------------------------------------------------------------

    def update_settings(self, changes: Mapping[str, Any]) -> QdrantSettings:
        """Validate and store; `enabled` also selects the vector store: on → `qdrant`, off
        → `auto`. Enabling starts a back-fill of every memory."""
        values = validate_update(changes)
        if "qdrantEnabled" in values:
            values["memoryVectorStore"] = "qdrant" if values["qdrantEnabled"] else "auto"
        if values.get("qdrantEnabled"):
            self._pool.installed()  # import qdrant-client now (~1 s), not in the first search
        if values:
            self._repo.save_settings(values, now=self._now())
            log.info("memory.qdrant.settings_changed fields=%s", ",".join(sorted(values)))
        self._pool.reset()
        self._worker.retry_now()
        return self.settings()

    def connection(self) -> QdrantConnection:
        """The connection for the current settings (raises QdrantError)."""
        return self._pool.connection()

    def embedding(self, qs: QdrantSettings, ms: MemorySettings) -> SourceChoice:
        """The embedding of Qdrant's points: `qdrantEmbeddingModel`, else the memory source."""
        return qdrant_embedding(qs, lambda: self._memory_source(ms))

    # -- searching -------------------------------------------------------------------

    def index(self, ms: MemorySettings) -> tuple[QdrantIndex | None, str | None]:
        """The Qdrant index when `vectorStore` is `qdrant` and Qdrant can answer, else None
        and why (None, None when Qdrant is not asked for)."""
        if ms.vector_store != "qdrant":
            return None, None
        qs = self.settings()
        reason = self._unreachable(qs)
        if reason is not None:
            return None, reason
        choice = self.embedding(qs, ms)
        if choice.source is None:
            return None, f"Qdrant has no embedding source ({choice.reason})"
        try:
            dim = self._sync.known_dimension(choice)
        except EmbeddingError as exc:
            return None, f"Qdrant embedding failed ({exc.message})"
        collection = f"{qs.collection}_{dim}"
        state = self._repo.state()
        if dim is None or state.target != sync_target(qs, collection) or not state.serving:
            left = self._repo.remaining(state.backfill_next) if state.backfill_next is not None else "?"
            return None, f"Qdrant back-fill in progress ({left} memories left)"
        try:
            connection = self._pool.connection()
        except QdrantError as exc:
            self._pool.trip(exc)
            return None, f"Qdrant unavailable ({exc.message})"
        return QdrantIndex(connection, collection, choice, self._pool.trip), None

    def _unreachable(self, qs: QdrantSettings) -> str | None:
        """Why Qdrant cannot be asked at all now (None: it can)."""
        if not qs.active:
            return "vectorStore is qdrant but Qdrant is not enabled (set host and enabled)"
        if not self._pool.installed():
            return INSTALL_HINT
        wait = self._pool.unavailable_for()
        if wait > 0:
            return f"Qdrant unavailable ({self._pool.last_error}); retrying in {wait:.0f} s"
        return None

    def catch_up(self, index: QdrantIndex, api_key_id: str | None) -> None:
        """Before a search of `api_key_id`'s memories: push its queued changes."""
        if api_key_id is None:
            return
        try:
            self._sync.push_key(index.connection, index.embedding, index.collection, api_key_id)
        except QdrantError as exc:
            self._pool.trip(exc)
            raise

    # -- sync ------------------------------------------------------------------------

    def sync_step(self) -> int:
        """Push one batch of queued changes and one of the back-fill; the number of
        memories handled (0: nothing to do). Raises QdrantError / EmbeddingError."""
        return self._sync.step()

    def drain(self) -> QdrantDrain | None:
        """Sync until nothing is left (`reindex` with `wait`); None while Qdrant is off."""
        if not self.settings().active:
            return None
        try:
            while self.sync_step():
                pass
        except (QdrantError, EmbeddingError) as exc:
            return QdrantDrain(ok=False, error=exc.message, serving=self._repo.state().serving)
        state = self._repo.state()
        return QdrantDrain(ok=True, error=None, serving=state.serving, pushed=state.pushed)

    def refresh(self) -> None:
        """`reindex` with Qdrant enabled: push every memory again (Qdrant keeps serving)."""
        state = self._repo.state()
        if self.settings().active and state.target is not None:
            self._repo.restart_backfill(state.target, now=self._now(), serving=bool(state.serving))
            self._worker.notify()

    def notify(self) -> None:
        """Memories changed: wake the sync."""
        self._worker.notify()

    def start(self) -> None:
        self._worker.start()

    def stop(self) -> None:
        self._worker.stop()
        self._pool.close()

    # -- the settings page and engine status ----------------------------------------

    def _ready_connection(self) -> tuple[QdrantSettings, QdrantConnection | QdrantHealth]:
        """The settings and a connection, or the health report of why there is none."""
        qs = self.settings()
        if not qs.active:
            return qs, QdrantHealth(ok=False, latency_ms=0.0, error="not_configured")
        if not self._pool.installed():
            return qs, QdrantHealth(ok=False, latency_ms=0.0, error=INSTALL_HINT)
        try:
            return qs, self._pool.connection()
        except QdrantError as exc:
            return qs, QdrantHealth(ok=False, latency_ms=0.0, error=exc.message)

    def health(self) -> QdrantHealth:
        _, connection = self._ready_connection()
        return connection if isinstance(connection, QdrantHealth) else connection.health()

    def search_test(self, query: str, top_k: int) -> QdrantSearchTest:
        """Nearest points of every key for `query` (the settings page's "Search test")."""
        qs, connection = self._ready_connection()
        if isinstance(connection, QdrantHealth):
            return QdrantSearchTest(ok=False, results=[], error=connection.error)
        try:
            choice = self.embedding(qs, self._memory_settings())
            if choice.source is None:
                return QdrantSearchTest(ok=False, results=[], error=f"no embedding source ({choice.reason})")
            vector = self._sources.embed_query(choice, query)
            collection = connection.collection_name(int(vector.shape[0]))
            if collection not in connection.collections():
                return QdrantSearchTest(ok=True, results=[])
            return QdrantSearchTest(ok=True, results=connection.search_raw(collection, vector, top_k))
        except (QdrantError, EmbeddingError) as exc:
            return QdrantSearchTest(ok=False, results=[], error=exc.message)

    def cleanup(self) -> QdrantCleanup:
        """Delete points of expired memories and of memories older than `retentionDays`, in
        every collection of ours; reports the memory ids deleted."""
        retention = self._memory_settings().retention_days
        _, connection = self._ready_connection()
        if isinstance(connection, QdrantHealth):
            return QdrantCleanup(
                ok=False, deleted_count=0, deleted_ids=[], retention_days=retention, error=connection.error
            )
        now = parse_time(self._now()).timestamp()
        try:
            deleted = [
                memory_id
                for collection in connection.collections()
                for memory_id in connection.cleanup(collection, now=now, retention_days=retention)
            ]
        except QdrantError as exc:
            return QdrantCleanup(
                ok=False, deleted_count=0, deleted_ids=[], retention_days=retention, error=exc.message
            )
        log.info("memory.qdrant.cleanup deleted=%d retentionDays=%d", len(deleted), retention)
        return QdrantCleanup(
            ok=True, deleted_count=len(deleted), deleted_ids=deleted, retention_days=retention
        )

    def status(self, ms: MemorySettings) -> QdrantStatus:
        """The engine-status `qdrant` block: enabled, health and latency, where, collection,
        points, the embedding, sync progress and the last error."""
        qs = self.settings()
        state = self._repo.state()
        choice = self.embedding(qs, ms)
        off = QdrantStatus(
            enabled=qs.enabled,
            healthy=None,
            latency_ms=None,
            error=None,
            where=qs.where if qs.host else None,
            collection=None,
            points=None,
            embedding=f"{choice.source}:{choice.model}" if choice.source else None,
            serving=False,
            outbox=self._repo.outbox_count(),
            backfill=QdrantBackfill(
                done=state.backfill_next is None,
                pending=self._repo.remaining(state.backfill_next) if state.backfill_next is not None else 0,
                pushed=state.pushed,
                total=state.backfill_total,
                orphans_removed=state.orphans_removed,
            ),
            last_error=self._pool.last_error,
        )
        if not qs.enabled:
            return off
        health = self.health()
        checked = replace(off, healthy=health.ok, latency_ms=health.latency_ms, error=health.error)
        if not health.ok or choice.source is None:
            return checked
        try:
            dim = self._sync.known_dimension(choice)
            connection = self._pool.connection()
            if dim is None:
                return checked
            collection = connection.collection_name(dim)
            checked = replace(
                checked,
                collection=collection,
                serving=state.serving and state.target == sync_target(qs, collection),
            )
            if collection in connection.collections():
                checked = replace(checked, points=connection.count(collection))
        except (QdrantError, EmbeddingError) as exc:
            checked = replace(checked, error=exc.message)
        return checked

    def embedding_models(self) -> list[QdrantModelChoice]:
        """Choices for `qdrantEmbeddingModel`: "" (the memory embedding source), then the
        embedding models each configured provider lists (`/models`, ids containing "embed")."""
        memory = self._memory_source(self._memory_settings())
        label = f"{memory.source}:{memory.model}" if memory.source else "none configured"
        models = [QdrantModelChoice(value="", label=f"Memory embedding source ({label})")]
        found: set[str] = set()
        for route, _ in self._providers.all_routes():
            try:
                listed = listed_model_ids(self._http.get(), route)
            except ModelsUnavailable as exc:
                log.info("memory.qdrant.models_unavailable provider=%s error=%s", route.provider_id, exc.kind)
                continue
            found.update(f"{route.provider_id}/{i}" for i in listed if "embed" in i.lower())
        current = self.settings().embedding_model
        if current:
            found.add(current)
        models.extend(QdrantModelChoice(value=value, label=value) for value in sorted(found))
        return models
