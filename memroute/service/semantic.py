"""Semantic memory: which embedding source the settings select, the sqlite-vec tier
that retrieval uses, the background re-index worker and the engine status.

Everything here degrades instead of failing: no source, no extension or a failing
source leaves retrieval on FTS5 with the reason in `fallbackReason` and in
`engine_status()`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from memroute.config import Config
from memroute.embeddings import EmbeddingSources, SourceChoice, resolve_source
from memroute.errors import EmbeddingError
from memroute.loops import WakeLoop
from memroute.memory.retrieval import Reranker
from memroute.memory.settings import MemorySettings
from memroute.service.providers import ProviderRegistry
from memroute.service.qdrant import QdrantEngine
from memroute.store import SqliteStore
from memroute.upstream.rerank import ProviderReranker
from memroute.vectors import VectorTier
from memroute.vectors.sqlite_vec import SqliteVecIndex

log = logging.getLogger("memroute.semantic")

REINDEX_BATCH = 64
ERROR_BACKOFF_S = 30.0


@dataclass(frozen=True, slots=True)
class TierChoice:
    """The vector tiers for one retrieval, best first (each falls back to the next, the
    last to FTS5), and why a tier is missing or none is left."""

    tiers: tuple[VectorTier, ...]
    source: SourceChoice
    reason: str | None


class SemanticEngine:
    def __init__(
        self,
        store: SqliteStore,
        config: Config,
        providers: ProviderRegistry,
        settings: Callable[[], MemorySettings],
        now: Callable[[], str],
    ) -> None:
        self.store = store
        self.config = config
        self.providers = providers
        self._settings = settings
        self.sources = EmbeddingSources(config, providers.route)
        self.index = SqliteVecIndex(
            store.vectors,
            self.sources,
            int8=config.vec_quantization == "int8",
            now=now,
            backfill_batch=config.backfill_batch,
            cache_bytes=config.vec_cache_mb * 1024 * 1024,
        )
        self.last_error: str | None = None
        self._worker = ReindexWorker(self)
        self.qdrant = QdrantEngine(store, config, self.sources, providers, settings, self.source, now)
        self._http: httpx.Client | None = None
        self._batch_lock = threading.Lock()  # one batch at a time: the worker and `reindex(wait=True)`

    # -- choosing ----------------------------------------------------------------------

    def source(self, settings: MemorySettings) -> SourceChoice:
        return resolve_source(settings, self.config, self.providers.configured)

    def tier(self, settings: MemorySettings) -> TierChoice:
        """The vector tiers retrieval should try for these settings: Qdrant when it is the
        vector store and ready, then sqlite-vec."""
        choice = self.source(settings)
        qdrant, qdrant_note = self.qdrant.tier(settings)
        first: tuple[VectorTier, ...] = (qdrant,) if qdrant is not None else ()
        if choice.source is None:
            return TierChoice(
                first, choice, _join(qdrant_note, f"{choice.reason} — keyword search (FTS5) only")
            )
        if not self.index.available:
            reason = self.store.db.vec_error or "not loaded"
            return TierChoice(
                first, choice, _join(qdrant_note, f"sqlite-vec not available ({reason}) — degraded to FTS5")
            )
        note = f"{qdrant_note} — using sqlite-vec" if qdrant_note else None
        return TierChoice((*first, self.index.tier(choice)), choice, note)

    def reranker(self, settings: MemorySettings) -> tuple[Reranker | None, dict[str, Any]]:
        """The reranker the settings ask for, if its provider is configured, and its status
        (REF §8.4 `rerank`)."""
        wanted = settings.rerank_provider_model or ""
        provider, sep, model = wanted.partition("/")
        status: dict[str, Any] = {
            "enabled": settings.rerank_enabled,
            "provider": provider if sep else None,
            "model": (model if sep else wanted) or None,
            "available": False,
            "reason": "rerank disabled",
        }
        if not settings.rerank_enabled:
            return None, status
        if not (sep and model and self.providers.configured(provider)):
            status["reason"] = (
                "rerank enabled but provider not configured (set rerankProviderModel to provider/model)"
            )
            return None, status
        if self._http is None:
            self._http = httpx.Client()
        status.update(available=True, reason=f"rerank active: {wanted}")
        return ProviderReranker(self.providers.route(wanted), self._http), status

    # -- re-indexing -------------------------------------------------------------------

    def reindex_batch(self, limit: int = REINDEX_BATCH) -> tuple[int, int]:
        """Embed one batch of pending memories with the current source: (stored, errors)."""
        choice = self.source(self._settings())
        if choice.source is None or not self.index.available:
            return 0, 0
        try:
            with self._batch_lock:  # else both would embed the same pending memories
                self.index.sync(choice)
                result = self.index.embed_pending(choice, None, limit)
        except EmbeddingError as exc:
            self.last_error = exc.message
            pending = len(self.store.vectors.pending(None, limit))
            log.warning("memory.reindex.failed source=%s reason=%s", choice.source, exc.reason)
            return 0, pending
        self.last_error = None
        return result.stored, result.errors

    def reindex(self, *, force: bool = False, wait: bool = False) -> dict[str, Any]:
        """Start re-embedding (every memory with `force`) and, with Qdrant enabled, pushing
        every memory to Qdrant again; with `wait`, run both to the end here (`qdrant` in the
        report: None while Qdrant is off)."""
        choice = self.source(self._settings())
        self.qdrant.refresh()
        if force:
            self.store.vectors.mark_all_pending()
        pending = self.store.memories.count_needs_reindex()
        if choice.source is None or not self.index.available:
            reason = choice.reason if choice.source is None else "sqlite-vec not available"
            qdrant = self.qdrant.drain() if wait else None
            return {
                "started": False,
                "pending": pending,
                "processed": 0,
                "errors": 0,
                "reason": reason,
                "qdrant": qdrant,
            }
        if not wait:
            self._worker.notify()
            return {"started": True, "pending": pending, "processed": 0, "errors": 0, "reason": None}
        processed = errors = 0
        while True:
            stored, failed = self.reindex_batch()
            processed, errors = processed + stored, errors + failed
            if failed or not stored:
                break
        return {
            "started": True,
            "pending": self.store.memories.count_needs_reindex(),
            "processed": processed,
            "errors": errors,
            "reason": self.last_error,
            "qdrant": self.qdrant.drain(),
        }

    def notify(self) -> None:
        """New or changed memories wait for vectors."""
        self._worker.notify()
        self.qdrant.notify()

    def start(self) -> None:
        self.store.vectors.drop_orphans()
        self.index.key_cache.start()
        self._worker.start()
        self.qdrant.start()

    def stop(self) -> None:
        self._worker.stop()
        self.qdrant.stop()
        self.index.key_cache.stop()
        self.sources.close()
        if self._http is not None:
            self._http.close()

    # -- status ------------------------------------------------------------------------

    def engine_status(self) -> dict[str, Any]:
        settings = self._settings()
        choice = self.source(settings)
        local = {s["source"]: s for s in self.sources.local_sources()}
        available = choice.source is not None
        reason = choice.reason
        if choice.source in local and not local[choice.source]["available"]:
            available, reason = False, local[choice.source]["reason"]
        if self.last_error:
            reason = f"{reason}; last error: {self.last_error}"
        meta = self.store.vectors.meta()
        pending = self.store.memories.count_needs_reindex()
        if self.index.available:
            vector_store = {
                "backend": "sqlite-vec",
                "available": True,
                "rowCount": self.store.vectors.count(),
                "needsReindex": pending,
                "reason": f"sqlite-vec active, dim={meta.active_dim}"
                + (f", signature {meta.signature}" if meta.signature else ", no vectors yet")
                + (" (int8, re-scored)" if meta.quantization == "int8" else ""),
            }
        else:
            vector_store = {
                "backend": "none",
                "available": False,
                "rowCount": 0,
                "needsReindex": pending,
                "reason": f"sqlite-vec not available ({self.store.db.vec_error}) — using FTS5 only",
            }
        qdrant = self.qdrant.status(settings)
        if settings.vector_store == "qdrant" and qdrant["serving"] and qdrant["healthy"]:
            vector_store = {
                **vector_store,
                "backend": "qdrant",
                "available": True,
                "rowCount": qdrant["points"] or 0,
                "reason": f"Qdrant at {qdrant['where']}, collection {qdrant['collection']}"
                f" (sqlite-vec kept as the fallback: {vector_store['reason']})",
            }
        elif settings.vector_store == "qdrant":
            why = self.qdrant.tier(settings)[1] or "Qdrant is not serving"
            vector_store = {**vector_store, "reason": f"{why} — {vector_store['reason']}"}
        return {
            "keyword": {"available": True, "backend": "FTS5"},
            "embedding": {
                "source": choice.source,
                "model": choice.model,
                "dimensions": choice.dimensions or meta.active_dim,
                "available": available,
                "reason": reason,
                "cacheStats": self.sources.cache_stats(),
            },
            "vectorStore": vector_store,
            "qdrant": qdrant,
            "rerank": self.reranker(settings)[1],
            "reindex": self._worker.progress(),
        }

    def embedding_providers(self) -> list[dict[str, Any]]:
        """Configured providers (for `remote`) and the local sources with their availability."""
        out: list[dict[str, Any]] = []
        for route, _ in self.providers.all_routes():
            out.append({"id": route.provider_id, "kind": "provider", "hasKey": bool(route.api_key)})
        for source in self.sources.local_sources():
            out.append({"id": source["source"], "kind": "local", **source})
        return out


def _join(first: str | None, second: str) -> str:
    return f"{first}; {second}" if first else second


class ReindexWorker:
    """Drains `needs_reindex` in the background, a batch at a time, whenever an embedding
    source is configured; wakes on new memories and polls for settings changed elsewhere."""

    def __init__(self, engine: SemanticEngine) -> None:
        self._engine = engine
        self._loop = WakeLoop("reindex", engine.config.reindex_poll_s, self._drain)
        self._processed = 0
        self._errors = 0
        self._running = False

    def start(self) -> None:
        self._loop.start()

    def notify(self) -> None:
        self._loop.wake()

    def stop(self) -> None:
        self._loop.stop(30)

    def progress(self) -> dict[str, Any]:
        return {"running": self._running, "processed": self._processed, "errors": self._errors}

    def _drain(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            try:
                self._running = True
                stored, errors = self._engine.reindex_batch()
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
