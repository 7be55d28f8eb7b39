"""Semantic search: which embedding source the settings select, the search step (the
vector indexes one retrieval tries, and the query embedded once per source), the
reranker, re-indexing and the engine status.

Everything here degrades instead of failing: no source, no extension or a failing
source leaves retrieval on FTS5 with the reason in `fallbackReason` and in
`engine_status()`. The parts are built by `memroute.service.build`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from memroute.embeddings import EmbeddingSources, SourceChoice
from memroute.embeddings.word_vectors import WordVectors
from memroute.errors import EmbeddingError
from memroute.memory.retrieval import KEYWORDS_ONLY, Reranker, VectorSearch, join_reasons
from memroute.memory.settings import MemorySettings
from memroute.models.records import MemoryFilter
from memroute.models.results import ExtractionQueue, ReindexReport
from memroute.models.status import (
    EmbeddingProvider,
    EmbeddingStatus,
    EngineStatus,
    KeywordStatus,
    QdrantStatus,
    RerankStatus,
    StorageStatus,
    VectorBackend,
    VectorStoreStatus,
)
from memroute.service.providers import ProviderRegistry
from memroute.service.qdrant import QdrantService
from memroute.service.reindex import Reindexer, ReindexWorker
from memroute.store import Store, VecMeta
from memroute.upstream.lazy import LazyClient
from memroute.upstream.rerank import ProviderReranker
from memroute.vectors import Vector, VectorIndex
from memroute.vectors.sqlite_vec import SqliteVecIndex

log = logging.getLogger("memroute.semantic")

# What searches keywords and vectors in each store (`Store.kind`), as the status names them.
KEYWORD_BACKENDS = {"sqlite": "FTS5", "postgresql": "PostgreSQL full-text"}
VECTOR_BACKENDS: dict[str, VectorBackend] = {"sqlite": "sqlite-vec", "postgresql": "pgvector"}


@dataclass(frozen=True, slots=True)
class _Candidate:
    """A vector index of a plan, the source its vectors were embedded with, and what it
    does before a search (`catch_up(query dimension, api key id)`)."""

    index: VectorIndex
    source: SourceChoice
    catch_up: Callable[[int, str | None], None]


class SearchPlan:
    """How one query is searched: the vector indexes to try, best first (each falls back to
    the next, the last to FTS5), the memory embedding source, and why an index is missing
    or none is left. The query is embedded once per embedding source, on first use."""

    def __init__(
        self,
        sources: EmbeddingSources,
        query: str,
        candidates: tuple[_Candidate, ...],
        source: SourceChoice,
        reason: str | None,
        wait_for_model: bool = True,
    ) -> None:
        self._sources = sources
        self._wait_for_model = wait_for_model
        self._query = query
        self._candidates = {id(c.index): c for c in candidates}
        self.indexes: tuple[VectorIndex, ...] = tuple(c.index for c in candidates)
        self.source = source
        self.reason = reason
        self._embedded: dict[tuple[str | None, str | None, str], Vector] = {}

    @property
    def vector_search(self) -> VectorSearch | None:
        """What retrieval asks (None when no index can answer)."""
        return VectorSearch(self.indexes, self.query_vector) if self.indexes else None

    def query_vector(self, index: VectorIndex, flt: MemoryFilter, text: str | None = None) -> Vector:
        """The query (or `text`, what retrieval asks instead) embedded as `index` expects
        it, after `index` has caught up with the latest writes of `flt`'s key. Raises
        EmbeddingError (or the index's error); without `wait_for_model`, also while the
        model is not loaded yet (it starts loading in the background)."""
        candidate = self._candidates[id(index)]
        if not self._wait_for_model and not self._sources.ready(candidate.source):
            self._sources.load_in_background(candidate.source)
            raise EmbeddingError(
                f"the {candidate.source.source} model is loading",
                reason="loading",
                source=candidate.source.source,
            )
        asked = self._query if text is None else text
        key = (candidate.source.source, candidate.source.model, asked)
        vector = self._embedded.get(key)
        if vector is None:
            vector = self._embedded[key] = self._sources.embed_query(candidate.source, asked)
        candidate.catch_up(int(vector.shape[0]), flt.api_key_id)
        return vector


class SemanticEngine:
    def __init__(
        self,
        store: Store,
        providers: ProviderRegistry,
        settings: Callable[[], MemorySettings],
        source: Callable[[MemorySettings], SourceChoice],
        *,
        sources: EmbeddingSources,
        index: SqliteVecIndex,
        qdrant: QdrantService,
        reindexer: Reindexer,
        worker: ReindexWorker,
        http: LazyClient,
        word_vectors: WordVectors | None = None,
        related_words: bool = True,
        meanings: bool = True,
    ) -> None:
        """`source(settings)` is the memory embedding source the settings select; `http` is
        the client the reranker calls its provider with; `word_vectors` the model of the
        related words and meanings (None: both off), for the engine status, with whether
        each is on."""
        self._store = store
        self._keywords = KEYWORD_BACKENDS[store.kind]
        self._source = source
        self._providers = providers
        self._settings = settings
        self._sources = sources
        self._index = index
        self.qdrant = qdrant
        self._reindexer = reindexer
        self._worker = worker
        self._http = http
        self._word_vectors = word_vectors
        self._word_uses = (related_words, meanings)

    def _word_state(self, used: bool) -> str:
        """The word model's state for a use of it that is on (`used`), else "off"."""
        return self._word_vectors.state if used and self._word_vectors is not None else "off"

    # -- choosing ----------------------------------------------------------------------

    def source(self, settings: MemorySettings) -> SourceChoice:
        """The memory embedding source these settings select."""
        return self._source(settings)

    def searches_vectors(self, settings: MemorySettings) -> bool:
        """Whether `plan` may search a vector index with these settings (Qdrant asked for,
        or an embedding source with sqlite-vec loaded), cheaply: no index is asked."""
        if settings.vector_store == "qdrant":
            return True
        return self.source(settings).source is not None and self._index.available

    def plan(self, settings: MemorySettings, query: str, *, wait_for_model: bool = True) -> SearchPlan:
        """The vector indexes retrieval should try for `query` with these settings: Qdrant
        when it is the vector store and ready, then sqlite-vec. Without `wait_for_model`
        a model not loaded yet is not waited for (see `SearchPlan.query_vector`)."""
        choice = self.source(settings)
        qdrant, qdrant_note = self.qdrant.index(settings)
        first: tuple[_Candidate, ...] = ()
        if qdrant is not None:
            first = (
                _Candidate(qdrant, qdrant.embedding, lambda _dim, key: self.qdrant.catch_up(qdrant, key)),
            )
        if choice.source is None:
            reason = join_reasons(qdrant_note, choice.reason + KEYWORDS_ONLY)
            return SearchPlan(self._sources, query, first, choice, reason, wait_for_model)
        if not self._index.available:
            vec_error = self._store.vec_error or "not loaded"
            reason = join_reasons(
                qdrant_note, f"{self._index.name} not available ({vec_error}) — degraded to {self._keywords}"
            )
            return SearchPlan(self._sources, query, first, choice, reason, wait_for_model)
        index = self._index
        local = _Candidate(index, choice, lambda dim, key: index.catch_up(choice, dim, key))
        note = f"{qdrant_note} — using {index.name}" if qdrant_note else None
        return SearchPlan(self._sources, query, (*first, local), choice, note, wait_for_model)

    def reranker(self, settings: MemorySettings) -> tuple[Reranker | None, RerankStatus]:
        """The reranker the settings ask for, if its provider is configured, and its status
        (the engine status's `rerank` block)."""
        wanted = settings.rerank_provider_model or ""
        provider, sep, model = wanted.partition("/")
        status = RerankStatus(
            enabled=settings.rerank_enabled,
            provider=provider if sep else None,
            model=(model if sep else wanted) or None,
            available=False,
            reason="rerank disabled",
        )
        if not settings.rerank_enabled:
            return None, status
        if not (sep and model and self._providers.configured(provider)):
            reason = "rerank enabled but provider not configured (set rerankProviderModel to provider/model)"
            return None, replace(status, reason=reason)
        status = replace(status, available=True, reason=f"rerank active: {wanted}")
        return ProviderReranker(self._providers.route(wanted), self._http.get()), status

    # -- re-indexing -------------------------------------------------------------------

    def reindex(self, *, force: bool = False, wait: bool = False) -> ReindexReport:
        """Start re-embedding (every memory with `force`) and, with Qdrant enabled, pushing
        every memory to Qdrant again; with `wait`, run both to the end here (`qdrant` in the
        report: None while Qdrant is off)."""
        choice = self.source(self._settings())
        self.qdrant.refresh()
        if force:
            self._store.vectors.mark_all_pending()
        pending = self._store.memories.count_needs_reindex()
        if choice.source is None or not self._index.available:
            reason = choice.reason if choice.source is None else f"{self._index.name} not available"
            qdrant = self.qdrant.drain() if wait else None
            return ReindexReport(started=False, pending=pending, reason=reason, qdrant=qdrant)
        if not wait:
            self._worker.notify()
            return ReindexReport(started=True, pending=pending)
        processed = errors = 0
        while True:
            stored, failed = self._reindexer.batch()
            processed, errors = processed + stored, errors + failed
            if failed or not stored:
                break
        return ReindexReport(
            started=True,
            pending=self._store.memories.count_needs_reindex(),
            processed=processed,
            errors=errors,
            reason=self._reindexer.last_error,
            qdrant=self.qdrant.drain(),
        )

    def notify(self) -> None:
        """New or changed memories wait for vectors."""
        self._worker.notify()
        self.qdrant.notify()

    def start(self) -> None:
        self._store.vectors.drop_orphans()
        self._index.key_cache.start()
        self._worker.start()
        self.qdrant.start()

    def stop(self) -> None:
        self._worker.stop()
        self.qdrant.stop()
        self._index.key_cache.stop()
        self._sources.close()
        self._http.close()

    # -- status ------------------------------------------------------------------------

    def engine_status(self, extraction_queue: ExtractionQueue, storage: StorageStatus) -> EngineStatus:
        """Every search tier with whether it works and why, around the facade's
        `extraction_queue` and `storage` blocks."""
        settings = self._settings()
        choice = self.source(settings)
        meta = self._store.vectors.meta()
        local = {s.source: s for s in self._sources.local_sources()}
        available = choice.source is not None
        reason = choice.reason
        if choice.source in local and not local[choice.source].available:
            available, reason = False, local[choice.source].reason
        if self._reindexer.last_error:
            reason = f"{reason}; last error: {self._reindexer.last_error}"
        qdrant = self.qdrant.status(settings)
        return EngineStatus(
            keyword=KeywordStatus(
                available=True,
                backend=self._keywords,
                related_words=self._word_state(self._word_uses[0]),
                meanings=self._word_state(self._word_uses[1]),
            ),
            embedding=EmbeddingStatus(
                source=choice.source,
                model=choice.model,
                dimensions=choice.dimensions or meta.active_dim,
                available=available,
                reason=reason,
                cache_stats=self._sources.cache_stats(),
            ),
            vector_store=self._vector_store_status(settings, meta, qdrant),
            qdrant=qdrant,
            rerank=self.reranker(settings)[1],
            extraction_queue=extraction_queue,
            reindex=self._worker.progress(),
            storage=storage,
        )

    def _vector_store_status(
        self, settings: MemorySettings, meta: VecMeta, qdrant: QdrantStatus
    ) -> VectorStoreStatus:
        """The store's vector table's state, or Qdrant's when it is the vector store and serving."""
        pending = self._store.memories.count_needs_reindex()
        if self._index.available:
            local = VectorStoreStatus(
                backend=VECTOR_BACKENDS[self._store.kind],
                available=True,
                row_count=self._store.vectors.count(),
                needs_reindex=pending,
                reason=f"{self._index.name} active, dim={meta.active_dim}"
                + (f", signature {meta.signature}" if meta.signature else ", no vectors yet")
                + (" (int8, re-scored)" if meta.quantization == "int8" else ""),
            )
        else:
            local = VectorStoreStatus(
                backend="none",
                available=False,
                row_count=0,
                needs_reindex=pending,
                reason=f"{self._index.name} not available ({self._store.vec_error})"
                f" — using {self._keywords} only",
            )
        if settings.vector_store != "qdrant":
            return local
        if qdrant.serving and qdrant.healthy:
            return replace(
                local,
                backend="qdrant",
                available=True,
                row_count=qdrant.points or 0,
                reason=f"Qdrant at {qdrant.where}, collection {qdrant.collection}"
                f" ({self._index.name} kept as the fallback: {local.reason})",
            )
        why = self.qdrant.index(settings)[1] or "Qdrant is not serving"
        return replace(local, reason=f"{why} — {local.reason}")

    def embedding_providers(self) -> list[EmbeddingProvider]:
        """Configured providers (for `remote`) and the local sources with their availability."""
        providers = [
            EmbeddingProvider(id=route.provider_id, kind="provider", has_key=bool(route.api_key))
            for route, _ in self._providers.all_routes()
        ]
        return providers + [EmbeddingProvider.local(source) for source in self._sources.local_sources()]
