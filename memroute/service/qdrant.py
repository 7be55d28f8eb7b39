"""Qdrant as vector tier 2 (SPEC §8): its settings, the sync of memories into it, the
tier retrieval uses, and its status.

Sync: migration 0004's triggers queue every change to a memory (while Qdrant is
enabled) in the same transaction; a worker pushes the queue and back-fills every
memory that existed before, resumably, into `<collection>_<dimension>`. Qdrant
answers searches only once the back-fill of its current collection has finished;
until then, and whenever Qdrant fails, retrieval uses sqlite-vec (kept up to date
alongside), then FTS5, and says why. A failure also opens a short circuit breaker,
so a Qdrant that is down costs a chat no more than one failed call per interval.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from memroute.clock import parse_time
from memroute.config import Config
from memroute.embeddings import EmbeddingSources, SourceChoice
from memroute.errors import EmbeddingError, MemrouteError, QdrantError
from memroute.loops import WakeLoop
from memroute.memory.settings import MemorySettings
from memroute.models import MemoryFilter, MemoryRecord
from memroute.service.providers import ProviderRegistry
from memroute.store import SqliteStore
from memroute.store.qdrant_sync import OutboxEntry
from memroute.vectors import VectorHit
from memroute.vectors.qdrant import INSTALL_HINT, QdrantAdapter, client_installed
from memroute.vectors.qdrant_settings import LOCAL_MEMORY, QdrantSettings, normalize, validate_update

log = logging.getLogger("memroute.qdrant")

SYNC_BATCH = 64
POLL_S = 5.0
MAX_BACKOFF_S = 60.0
MODELS_TIMEOUT_S = 5.0
RETIRE_GRACE_S = 10.0  # a replaced connection is closed this long after its last hand-out


class QdrantEngine:
    def __init__(
        self,
        store: SqliteStore,
        config: Config,
        sources: EmbeddingSources,
        providers: ProviderRegistry,
        memory_settings: Callable[[], MemorySettings],
        memory_source: Callable[[MemorySettings], SourceChoice],
        now: Callable[[], str],
    ) -> None:
        self.store = store
        self.config = config
        self.sources = sources
        self.providers = providers
        self._memory_settings = memory_settings
        self._memory_source = memory_source
        self._now = now
        self._fallback = QdrantSettings(
            host=config.qdrant_host,
            port=config.qdrant_port,
            collection=config.qdrant_collection,
            embedding_model=config.qdrant_embedding_model,
            api_key=config.qdrant_api_key,
            hnsw_ef_construct=config.qdrant_hnsw_ef_construct,
        )
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._adapter: QdrantAdapter | None = None
        self._adapter_key: tuple[Any, ...] | None = None
        self._retired: list[tuple[float, QdrantAdapter]] = []  # (close after, adapter)
        self._dims: dict[tuple[str | None, str | None], int] = {}
        self._down_until = 0.0
        self.last_error: str | None = None
        self._installed: bool | None = None
        self._worker = QdrantSyncWorker(self)

    # -- settings --------------------------------------------------------------------

    def settings(self) -> QdrantSettings:
        return normalize(self.store.settings.read_all(), self._fallback)

    def update_settings(self, changes: Mapping[str, Any]) -> QdrantSettings:
        """Validate and store; `enabled` also selects the vector store (REF #5597): on →
        `qdrant`, off → `auto`. Enabling starts a back-fill of every memory."""
        values = validate_update(changes)
        if "qdrantEnabled" in values:
            values["memoryVectorStore"] = "qdrant" if values["qdrantEnabled"] else "auto"
        if values.get("qdrantEnabled"):
            self.installed()  # import qdrant-client now (~1 s), not in the first search
        if values:
            self.store.qdrant.save_settings(values, now=self._now())
            log.info("memory.qdrant.settings_changed fields=%s", ",".join(sorted(values)))
        self._down_until = 0.0
        self.last_error = None
        self._worker.retry_now()
        return self.settings()

    def installed(self) -> bool:
        if self._installed is None:
            self._installed = client_installed()
        return self._installed

    def adapter(self) -> QdrantAdapter:
        """The adapter for the current settings (read again here, so a caller holding an
        older read never switches back). A change of collection settings keeps the
        connection; a change of connection retires the old one, which is closed a little
        later: another thread may still be using it."""
        with self._lock:
            self._close_retired()
            qs = self.settings()
            key = (
                qs.host,
                qs.port,
                qs.https,
                qs.api_key,
                qs.collection,
                qs.quantization,
                qs.hnsw_ef_construct,
            )
            if self._adapter is not None and self._adapter_key == key:
                return self._adapter
            old = self._adapter
            if old is not None and old.connection == (qs.host, qs.port, qs.https, qs.api_key, old.timeout_s):
                self._adapter = old.with_settings(qs)
            else:
                self._retire()
                self._adapter = QdrantAdapter(qs, timeout_s=self.config.qdrant_timeout_s)
            self._adapter_key = key
            return self._adapter

    def _retire(self) -> None:
        """Stop handing out the current adapter (caller holds the lock). Local mode on a
        folder allows one client at a time, so that one is closed at once."""
        adapter, self._adapter, self._adapter_key = self._adapter, None, None
        if adapter is None:
            return
        if adapter.settings.local_location not in (None, LOCAL_MEMORY):
            adapter.close()
        else:
            self._retired.append((time.monotonic() + RETIRE_GRACE_S, adapter))

    def _close_retired(self, everything: bool = False) -> None:
        now = time.monotonic()
        keep = []
        for deadline, adapter in self._retired:
            if everything or deadline <= now:
                adapter.close()
            else:
                keep.append((deadline, adapter))
        self._retired = keep

    def embedding(self, qs: QdrantSettings, ms: MemorySettings) -> SourceChoice:
        """`qdrantEmbeddingModel` when set (a provider's model), else the memory embedding
        source, so Qdrant works offline with the local models."""
        if qs.embedding_model:
            return SourceChoice(
                "remote", qs.embedding_model, None, f"qdrantEmbeddingModel {qs.embedding_model}"
            )
        return self._memory_source(ms)

    def _known_dimension(self, choice: SourceChoice) -> int | None:
        if choice.source != "remote":
            return self.sources.embedder(choice).dimensions
        return self._dims.get((choice.source, choice.model))

    def _dimension(self, choice: SourceChoice) -> int:
        dim = self._known_dimension(choice)
        if dim is None:  # a provider's model: one probe teaches the size
            dim = int(self.sources.embed_documents(choice, ["dimension probe"]).shape[1])
            self._dims[(choice.source, choice.model)] = dim
        return dim

    @staticmethod
    def target(qs: QdrantSettings, collection: str) -> str:
        return f"{qs.where}#{collection}"

    # -- failures --------------------------------------------------------------------

    def trip(self, exc: MemrouteError) -> None:
        """Remember a failure, keep retrieval off Qdrant for `QDRANT_RETRY_S`, and drop the
        connection: the next use reconnects (a restarted server, a closed client)."""
        self.last_error = exc.message
        self._down_until = time.monotonic() + self.config.qdrant_retry_s
        log.warning("memory.qdrant.fail error=%s", exc.message)
        with self._lock:
            self._retire()

    def _recovered(self) -> None:
        if self.last_error is not None:
            log.info("memory.qdrant.recovered")
        self.last_error = None
        self._down_until = 0.0

    # -- retrieval -------------------------------------------------------------------

    def tier(self, ms: MemorySettings) -> tuple[QdrantTier | None, str | None]:
        """The Qdrant tier when `vectorStore` is `qdrant` and Qdrant can answer, else None
        and why (None, None when Qdrant is not asked for)."""
        if ms.vector_store != "qdrant":
            return None, None
        qs = self.settings()
        if not qs.active:
            return None, "vectorStore is qdrant but Qdrant is not enabled (set host and enabled)"
        if not self.installed():
            return None, INSTALL_HINT
        wait = self._down_until - time.monotonic()
        if wait > 0:
            return None, f"Qdrant unavailable ({self.last_error}); retrying in {wait:.0f} s"
        choice = self.embedding(qs, ms)
        if choice.source is None:
            return None, f"Qdrant has no embedding source ({choice.reason})"
        try:
            dim = self._known_dimension(choice)
        except EmbeddingError as exc:
            return None, f"Qdrant embedding failed ({exc.message})"
        state = self.store.qdrant.state()
        collection = f"{qs.collection}_{dim}"
        if dim is None or state.target != self.target(qs, collection) or not state.serving:
            left = (
                self.store.qdrant.remaining(state.backfill_next) if state.backfill_next is not None else "?"
            )
            return None, f"Qdrant back-fill in progress ({left} memories left)"
        try:
            adapter = self.adapter()
        except QdrantError as exc:
            self.trip(exc)
            return None, f"Qdrant unavailable ({exc.message})"
        return QdrantTier(self, adapter, choice, collection), None

    # -- sync ------------------------------------------------------------------------

    def sync_step(self) -> int:
        """Push one batch of queued changes and one of the back-fill; the number of
        memories handled (0: nothing to do). Raises QdrantError / EmbeddingError."""
        with self._sync_lock:  # the worker and `reindex --wait` in one process
            return self._sync_step()

    def drain(self) -> dict[str, Any] | None:
        """Sync until nothing is left (`reindex` with `wait`); None while Qdrant is off."""
        if not self.settings().active:
            return None
        try:
            while self.sync_step():
                pass
        except (QdrantError, EmbeddingError) as exc:
            return {"ok": False, "error": exc.message, "serving": self.store.qdrant.state().serving}
        state = self.store.qdrant.state()
        return {"ok": True, "error": None, "serving": state.serving, "pushed": state.pushed}

    def _sync_step(self) -> int:
        qs = self.settings()
        if not qs.active or not self.installed():
            return 0
        choice = self.embedding(qs, self._memory_settings())
        if choice.source is None:
            return 0
        adapter = self.adapter()
        dim = self._dimension(choice)
        collection, created = adapter.ensure_collection(dim)
        target = self.target(qs, collection)
        repo = self.store.qdrant
        state = repo.state()
        if state.target != target or created:
            if state.target is not None:
                log.warning(
                    "memory.qdrant.new_collection previous=%s now=%s: back-filling every memory",
                    state.target,
                    target,
                )
            repo.restart_backfill(target, now=self._now(), serving=False)
            state = repo.state()
        done = self._push(adapter, choice, collection, repo.outbox(SYNC_BATCH))
        if state.backfill_next is not None:
            rows = repo.backfill_batch(state.backfill_next, SYNC_BATCH)
            self._upsert(adapter, choice, collection, [memory for _, memory in rows])
            finished = len(rows) < SYNC_BATCH
            if finished:
                self._sweep(adapter, collection)
            next_rowid = None if finished else rows[-1][0] + 1
            if repo.advance(target, state.backfill_next, next_rowid, len(rows), now=self._now()) and finished:
                log.info(
                    "memory.qdrant.backfill_done collection=%s pushed=%d", collection, repo.state().pushed
                )
            done += max(1, len(rows))
        self._recovered()
        return done

    def push_key(
        self, adapter: QdrantAdapter, choice: SourceChoice, collection: str, api_key_id: str
    ) -> None:
        """Push one key's queued changes before a search, so what it added a moment ago is
        found (as sqlite-vec embeds a searching key's pending memories first)."""
        batch = self.config.backfill_batch
        if batch > 0:
            self._push(adapter, choice, collection, self.store.qdrant.outbox(batch, api_key_id))

    def _push(
        self, adapter: QdrantAdapter, choice: SourceChoice, collection: str, entries: Sequence[OutboxEntry]
    ) -> int:
        if not entries:
            return 0
        wanted = [e.memory_id for e in entries if e.op == "upsert"]
        found = self.store.memories.get_many(wanted)
        gone = [e.memory_id for e in entries if e.memory_id not in found]
        self._upsert(adapter, choice, collection, list(found.values()))
        adapter.delete(collection, gone)
        self.store.qdrant.ack(entries)
        return len(entries)

    def _upsert(
        self, adapter: QdrantAdapter, choice: SourceChoice, collection: str, memories: Sequence[MemoryRecord]
    ) -> None:
        if not memories:
            return
        matrix = self.sources.embed_documents(choice, [m.content for m in memories])
        vectors = [(m, row) for m, row in zip(memories, matrix, strict=True) if row.any()]
        adapter.upsert(collection, vectors)
        # A text without a single token has no vector: drop any older point of it.
        adapter.delete(collection, [m.id for m, row in zip(memories, matrix, strict=True) if not row.any()])

    def _sweep(self, adapter: QdrantAdapter, collection: str) -> None:
        """Delete points whose memory no longer exists (deleted while Qdrant was off, or
        left in a collection used before)."""
        removed = 0
        for ids in adapter.memory_ids(collection):
            orphans = sorted(set(ids) - self.store.qdrant.existing_ids(ids))
            adapter.delete(collection, orphans)
            removed += len(orphans)
        if removed:
            self.store.qdrant.note_orphans_removed(removed)
            log.info("memory.qdrant.orphans_removed collection=%s count=%d", collection, removed)

    def refresh(self) -> None:
        """`reindex` with Qdrant enabled: push every memory again (Qdrant keeps serving)."""
        state = self.store.qdrant.state()
        if self.settings().active and state.target is not None:
            self.store.qdrant.restart_backfill(state.target, now=self._now(), serving=bool(state.serving))
            self._worker.notify()

    def notify(self) -> None:
        self._worker.notify()

    def start(self) -> None:
        self._worker.start()

    def stop(self) -> None:
        self._worker.stop()
        with self._lock:
            self._retire()
            self._close_retired(everything=True)

    # -- the settings page and engine status ----------------------------------------

    def _ready_adapter(self) -> tuple[QdrantSettings, QdrantAdapter | None, dict[str, Any] | None]:
        qs = self.settings()
        if not qs.active:
            return qs, None, {"ok": False, "latencyMs": 0, "error": "not_configured"}
        if not self.installed():
            return qs, None, {"ok": False, "latencyMs": 0, "error": INSTALL_HINT}
        try:
            return qs, self.adapter(), None
        except QdrantError as exc:
            return qs, None, {"ok": False, "latencyMs": 0, "error": exc.message}

    def health(self) -> dict[str, Any]:
        _, adapter, problem = self._ready_adapter()
        if adapter is None:
            assert problem is not None
            return problem
        return adapter.health()

    def search_test(self, query: str, top_k: int) -> dict[str, Any]:
        """Nearest points of every key for `query` (the settings page's "Search test")."""
        qs, adapter, problem = self._ready_adapter()
        if adapter is None:
            return {"ok": False, "results": [], "error": (problem or {}).get("error")}
        try:
            choice = self.embedding(qs, self._memory_settings())
            if choice.source is None:
                return {"ok": False, "results": [], "error": f"no embedding source ({choice.reason})"}
            vector = self.sources.embed_query(choice, query)
            collection = adapter.collection_name(int(vector.shape[0]))
            if collection not in adapter.collections():
                return {"ok": True, "results": [], "error": None}
            return {"ok": True, "results": adapter.search_raw(collection, vector, top_k), "error": None}
        except (QdrantError, EmbeddingError) as exc:
            return {"ok": False, "results": [], "error": exc.message}

    def cleanup(self) -> dict[str, Any]:
        """Delete points of expired memories and of memories older than `retentionDays`, in
        every collection of ours; reports the memory ids deleted."""
        retention = self._memory_settings().retention_days
        _, adapter, problem = self._ready_adapter()
        if adapter is None:
            return {
                "ok": False,
                "deletedCount": 0,
                "deletedIds": [],
                "retentionDays": retention,
                **(problem or {}),
            }
        now = parse_time(self._now()).timestamp()
        try:
            deleted = [
                memory_id
                for collection in adapter.collections()
                for memory_id in adapter.cleanup(collection, now=now, retention_days=retention)
            ]
        except QdrantError as exc:
            return {
                "ok": False,
                "deletedCount": 0,
                "deletedIds": [],
                "retentionDays": retention,
                "error": exc.message,
            }
        log.info("memory.qdrant.cleanup deleted=%d retentionDays=%d", len(deleted), retention)
        return {
            "ok": True,
            "deletedCount": len(deleted),
            "deletedIds": deleted,
            "retentionDays": retention,
            "error": None,
        }

    def status(self, ms: MemorySettings) -> dict[str, Any]:
        """The engine-status `qdrant` block: REF §8.4's fields plus where, collection,
        points, sync progress and the last error."""
        qs = self.settings()
        repo = self.store.qdrant
        state = repo.state()
        choice = self.embedding(qs, ms)
        out: dict[str, Any] = {
            "enabled": qs.enabled,
            "healthy": None,
            "latencyMs": None,
            "error": None,
            "where": qs.where if qs.host else None,
            "collection": None,
            "points": None,
            "embedding": f"{choice.source}:{choice.model}" if choice.source else None,
            "serving": False,
            "outbox": repo.outbox_count(),
            "backfill": {
                "done": state.backfill_next is None,
                "pending": repo.remaining(state.backfill_next) if state.backfill_next is not None else 0,
                "pushed": state.pushed,
                "total": state.backfill_total,
                "orphansRemoved": state.orphans_removed,
            },
            "lastError": self.last_error,
        }
        if not qs.enabled:
            return out
        health = self.health()
        out.update(healthy=health["ok"], latencyMs=health["latencyMs"], error=health.get("error"))
        if not health["ok"] or choice.source is None:
            return out
        try:
            dim = self._known_dimension(choice)
            adapter = self.adapter()
            if dim is not None:
                collection = adapter.collection_name(dim)
                out["collection"] = collection
                out["serving"] = bool(state.serving) and state.target == self.target(qs, collection)
                if collection in adapter.collections():
                    out["points"] = adapter.count(collection)
        except (QdrantError, EmbeddingError) as exc:
            out["error"] = exc.message
        return out

    def embedding_models(self) -> list[dict[str, str]]:
        """Choices for `qdrantEmbeddingModel`: "" (the memory embedding source), then the
        embedding models each configured provider lists (`/models`, ids containing "embed")."""
        ms = self._memory_settings()
        memory = self._memory_source(ms)
        label = f"{memory.source}:{memory.model}" if memory.source else "none configured"
        models = [{"value": "", "label": f"Memory embedding source ({label})"}]
        found: set[str] = set()
        for route, _ in self.providers.all_routes():
            headers = {"authorization": f"Bearer {route.api_key}"} if route.api_key else {}
            try:
                response = httpx.get(
                    f"{route.base_url.rstrip('/')}/models", headers=headers, timeout=MODELS_TIMEOUT_S
                )
                listed = response.json().get("data", []) if response.status_code == 200 else []
            except (httpx.HTTPError, ValueError, AttributeError) as exc:
                log.info(
                    "memory.qdrant.models_unavailable provider=%s error=%s",
                    route.provider_id,
                    type(exc).__name__,
                )
                continue
            for item in listed if isinstance(listed, list) else []:
                model_id = item.get("id") if isinstance(item, dict) else None
                if isinstance(model_id, str) and "embed" in model_id.lower():
                    found.add(f"{route.provider_id}/{model_id}")
        current = self.settings().embedding_model
        if current:
            found.add(current)
        models.extend({"value": value, "label": value} for value in sorted(found))
        return models


class QdrantTier:
    """Retrieval's view of Qdrant (a `VectorTier`). Hybrid fuses its hits with FTS5 by RRF."""

    name = "qdrant"
    fuse_with_keywords = True

    def __init__(
        self, engine: QdrantEngine, adapter: QdrantAdapter, choice: SourceChoice, collection: str
    ) -> None:
        self._engine = engine
        self._adapter = adapter
        self._choice = choice
        self._collection = collection

    def search(self, query: str, flt: MemoryFilter, k: int) -> list[VectorHit]:
        try:
            if flt.api_key_id is not None:
                self._engine.push_key(self._adapter, self._choice, self._collection, flt.api_key_id)
            vector = self._engine.sources.embed_query(self._choice, query)
            if not vector.any():  # no known word: a zero vector has no direction, so no neighbours
                return []
            return self._adapter.search(self._collection, vector, flt, k)
        except QdrantError as exc:
            self._engine.trip(exc)
            raise


class QdrantSyncWorker:
    """Drains the outbox and the back-fill in the background; wakes on changes, polls for
    settings changed elsewhere, and backs off (`QDRANT_RETRY_S`, doubling up to 60 s)
    while Qdrant fails."""

    def __init__(self, engine: QdrantEngine) -> None:
        self._engine = engine
        self._loop = WakeLoop("qdrant-sync", POLL_S, self._drain)
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
        self._retry_now.set()
        self._loop.stop(30)

    def _drain(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            try:
                done = self._engine.sync_step()
            except QdrantError as exc:
                self._engine.trip(exc)
                self._wait(stopping)
                return
            except EmbeddingError as exc:  # Qdrant itself is fine: searches may go on
                log.warning("memory.qdrant.sync_embedding_failed error=%s", exc.message)
                self._engine.last_error = exc.message
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
        first = self._engine.config.qdrant_retry_s
        self._backoff = min(MAX_BACKOFF_S, max(first, 0.1, self._backoff * 2))
        self._retry_now.clear()
        self._retry_now.wait(self._backoff)
