"""The composition root: every concrete part of a `Memory` is built here, once, from the
configuration (the store, the embedding sources, the vector indexes and Qdrant's
pieces, the HTTP client for providers, the workers), and nowhere else.

`Memory.open` calls `build`; a benchmark or a test that needs to reach one part (say,
the sqlite-vec index) builds the parts itself and hands them to `Memory`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memroute.clock import Clock, to_iso
from memroute.config import Config
from memroute.embeddings import EmbeddingSources, SourceChoice, resolve_source
from memroute.embeddings.word_vectors import word_vectors_for
from memroute.errors import StoreError
from memroute.loops import PeriodicTask
from memroute.memory import maintenance
from memroute.memory.decay import DecayPolicy
from memroute.memory.lines import RenderedLines
from memroute.memory.said import SaidSearches
from memroute.memory.settings import MemorySettings, SettingsOfStored
from memroute.service.facts import FactWriter
from memroute.service.held_turns import HeldTurn, HeldTurns
from memroute.service.keys import KeyRing
from memroute.service.learner import TurnLearner
from memroute.service.lease import Lease, new_holder
from memroute.service.providers import ProviderRegistry
from memroute.service.qdrant import QdrantService
from memroute.service.quota import MemoryCap
from memroute.service.reindex import Reindexer, ReindexWorker
from memroute.service.semantic import VECTOR_BACKENDS, SemanticEngine
from memroute.service.sessions import SessionBook
from memroute.service.turn_queue import TurnQueue
from memroute.service.workers import AccessRecorder, ExtractionWorker
from memroute.store import SqliteStore, Store
from memroute.store.changes import CHANGES_KEPT_S
from memroute.store.key_index import KeyIndexes
from memroute.upstream.lazy import LazyClient
from memroute.vectors.qdrant_pool import QdrantPool
from memroute.vectors.qdrant_settings import QdrantSettings
from memroute.vectors.qdrant_settings import normalize as normalize_qdrant_settings
from memroute.vectors.qdrant_sync import QdrantSync, QdrantSyncWorker
from memroute.vectors.sqlite_vec import SqliteVecIndex


@dataclass(frozen=True, slots=True)
class Parts:
    """What a `Memory` runs on. The workers are built stopped; `Memory` starts them."""

    config: Config
    clock: Clock
    store: Store
    settings: Callable[[], MemorySettings]  # read from the database on every call
    keys: KeyRing
    sessions: SessionBook
    providers: ProviderRegistry
    sources: EmbeddingSources
    index: SqliteVecIndex
    reindexer: Reindexer
    qdrant: QdrantService
    semantic: SemanticEngine
    facts: FactWriter
    learner: TurnLearner  # what the extraction worker does with each queued turn
    cap: MemoryCap
    decay_policy: DecayPolicy
    held: HeldTurns  # writes chat turns to the queue, holding them while the database is full
    turn_queue: TurnQueue  # what of a chat turn goes on the queue
    extraction: ExtractionWorker
    access: AccessRecorder
    decay_sweep: PeriodicTask
    rendered: RenderedLines  # how the memories seen lately read when injected
    said: SaidSearches  # what the long requests of each conversation were found to hold
    key_indexes: KeyIndexes  # recalled keys' memories held in process
    prune_changes: PeriodicTask  # trims the change log the key indexes catch up from
    leases: list[Lease]  # of the jobs that run in one process at a time; given back on close


def build(config: Config, clock: Clock) -> Parts:
    """Open (creating and migrating) the configured database and build every part on it."""
    store = open_store(config)
    try:
        return _assemble(store, config, clock)
    except BaseException:
        store.close()
        raise


def open_store(config: Config) -> Store:
    """The configured store: PostgreSQL when `MEMROUTE_DATABASE_URL` is set, else the
    SQLite file."""
    if config.database_url is None:
        return SqliteStore.open(
            config.db_path, synchronous=config.sqlite_synchronous, load_vec=not config.disable_vec
        )
    try:
        from memroute.store.postgres import PostgresStore
    except ImportError as exc:
        raise StoreError(
            "MEMROUTE_DATABASE_URL needs psycopg and psycopg-pool: pip install 'memroute[postgres]'"
        ) from exc
    return PostgresStore.open(
        config.database_url, max_connections=config.database_pool, synchronous=config.postgres_synchronous
    )


def _assemble(store: Store, config: Config, clock: Clock) -> Parts:
    def now() -> str:
        return to_iso(clock())

    settings_of = SettingsOfStored()

    def settings() -> MemorySettings:
        return settings_of(store.settings.read_all())

    providers = ProviderRegistry(
        store, clock, default_base_url=config.upstream_base_url, default_api_key=config.upstream_api_key
    )

    def memory_source(ms: MemorySettings) -> SourceChoice:
        return resolve_source(ms, config, providers.configured)

    sources = EmbeddingSources(config, providers.route)
    index = SqliteVecIndex(
        store.vectors,
        sources,
        int8=config.vec_quantization == "int8" and store.kind == "sqlite",  # PostgreSQL: float32
        now=now,
        backfill_batch=config.backfill_batch,
        cache_bytes=config.vec_cache_mb * 1024 * 1024,
        name=VECTOR_BACKENDS[store.kind],
    )
    holder = new_holder()
    reindex_lease, qdrant_lease, decay_lease = (
        Lease(store.leases, name, holder) for name in ("reindex", "qdrant-sync", "decay")
    )
    provider_http = LazyClient()  # rerank calls and the providers' model lists
    qdrant = _qdrant(
        store, config, sources, providers, provider_http, settings, memory_source, now, qdrant_lease
    )
    reindexer = Reindexer(index, store.vectors, lambda: memory_source(settings()))
    word_vectors = word_vectors_for(config)
    semantic = SemanticEngine(
        store,
        providers,
        settings,
        memory_source,
        sources=sources,
        index=index,
        qdrant=qdrant,
        reindexer=reindexer,
        worker=ReindexWorker(
            lambda stopping: reindex_lease.run(lambda: reindexer.batch(stopping=stopping), (0, 0)),
            config.reindex_poll_s,
        ),
        http=provider_http,
        word_vectors=word_vectors,
        related_words=config.related_words,
        meanings=config.meanings,
    )
    cap = MemoryCap(store, config.max_memories_per_key)
    facts = FactWriter(
        store,
        redact_secrets=config.redact,
        max_facts=config.max_facts_per_message,
        cap=cap,
        now=now,
        on_stored=semantic.notify,
    )
    learner = TurnLearner(store, facts, cap=cap, on_stored=semantic.notify)
    policy = DecayPolicy(
        enabled=config.decay_enabled,
        episodic_days=config.decay_episodic_days,
        access_immunity=config.decay_access_immunity,
    )

    def sweep_decayed() -> None:
        if decay_lease.held():
            maintenance.sweep_decayed(store, policy, owner=None, now=clock(), dry_run=False)
            qdrant.notify()

    def queue_turn(t: HeldTurn) -> int:
        return store.jobs.enqueue(
            t.owner,
            t.session,
            t.source,
            t.text,
            now=t.queued_at,
            request_id=t.request_id,
            speaker=t.speaker,
            capture=t.capture,
            facts=t.facts,
            durable=t.durable,
        )

    def queue_turns(turns: list[HeldTurn]) -> list[int]:
        if len(turns) == 1:  # one statement is atomic alone: on PostgreSQL one round trip, not three
            return [queue_turn(turns[0])]
        with store.transaction(savepoints=False):  # any error ends the transaction: no savepoints
            return [queue_turn(t) for t in turns]

    held = HeldTurns(queue_turns)
    extraction = ExtractionWorker(
        fetch=lambda n: store.jobs.next_batch(max_attempts=config.extraction_max_attempts, limit=n),
        before=held.write_back,
        process=learner.process_jobs,
        fail=lambda job, exc: store.jobs.fail(job.id, f"{type(exc).__name__}: {exc}"),
    )
    turn_queue = TurnQueue(
        held,
        redact=facts.redact,
        max_bytes=config.max_content_bytes,
        now=now,
        # Inside a caller's transaction the worker is woken once it commits: woken before,
        # it would see no job and count the pass as done.
        notify=lambda: store.after_commit(extraction.notify),
    )

    return Parts(
        config=config,
        clock=clock,
        store=store,
        settings=settings,
        keys=KeyRing(store, clock),
        sessions=SessionBook(store, clock),
        providers=providers,
        sources=sources,
        index=index,
        reindexer=reindexer,
        qdrant=qdrant,
        semantic=semantic,
        facts=facts,
        learner=learner,
        cap=cap,
        decay_policy=policy,
        held=held,
        turn_queue=turn_queue,
        extraction=extraction,
        access=AccessRecorder(lambda counts: store.memories.record_access_counts(counts, now=now())),
        decay_sweep=PeriodicTask(
            "decay", config.decay_sweep_interval_s if config.decay_enabled else 0, sweep_decayed
        ),
        rendered=RenderedLines(),
        said=SaidSearches(),
        key_indexes=KeyIndexes(
            store.changes,
            store.memories,
            max_memories=config.recall_index_memories,
            word_vectors=None if word_vectors is None else word_vectors.vectors,
            related_words=config.related_words,
            meanings=config.meanings,
        ),
        prune_changes=PeriodicTask("changes", CHANGES_KEPT_S / 2, store.changes.prune),
        leases=[reindex_lease, qdrant_lease, decay_lease],
    )


def _qdrant(
    store: Store,
    config: Config,
    sources: EmbeddingSources,
    providers: ProviderRegistry,
    http: LazyClient,
    settings: Callable[[], MemorySettings],
    memory_source: Callable[[MemorySettings], SourceChoice],
    now: Callable[[], str],
    lease: Lease,
) -> QdrantService:
    """Qdrant's pieces: stored settings over the environment's, the connection pool with
    its breaker, the sync, and the service that decides when Qdrant answers."""
    fallback = QdrantSettings(
        host=config.qdrant_host,
        port=config.qdrant_port,
        collection=config.qdrant_collection,
        embedding_model=config.qdrant_embedding_model,
        api_key=config.qdrant_api_key,
        hnsw_ef_construct=config.qdrant_hnsw_ef_construct,
    )

    def qdrant_settings() -> QdrantSettings:
        return normalize_qdrant_settings(store.settings.read_all(), fallback)

    pool = QdrantPool(qdrant_settings, timeout_s=config.qdrant_timeout_s, retry_s=config.qdrant_retry_s)
    sync = QdrantSync(
        store.qdrant,
        store.memories.get_many,
        sources,
        pool,
        settings=qdrant_settings,
        memory_source=lambda: memory_source(settings()),
        now=now,
        key_batch=config.backfill_batch,
    )
    return QdrantService(
        qdrant_settings,
        store.qdrant,
        pool,
        sync,
        QdrantSyncWorker(lambda: lease.run(sync.step, 0), pool),
        sources=sources,
        providers=providers,
        http=http,
        memory_settings=settings,
        memory_source=memory_source,
        now=now,
    )
