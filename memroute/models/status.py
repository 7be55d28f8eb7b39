"""What the engine reports about itself: the engine status (one record per block), the
embedding sources and providers, and the reports of the Qdrant settings page. Their JSON
(the REST answers, `to_wire`) comes from these fields through `memroute.models.wire`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from memroute.models.results import ExtractionQueue

VectorBackend = Literal["sqlite-vec", "pgvector", "qdrant", "none"]

# -- the engine status -------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class KeywordStatus:
    available: bool
    backend: str
    # Related words (store/related_words.py) and meanings (store/key_meanings.py), each
    # off, idle, building, ready or failed (the state of the word model they share).
    related_words: str = "off"
    meanings: str = "off"


@dataclass(slots=True, frozen=True)
class EmbeddingCacheStats:
    """The query-vector cache: lookups answered, lookups embedded, vectors held."""

    hits: int
    misses: int
    size: int


@dataclass(slots=True, frozen=True)
class EmbeddingStatus:
    """The memory embedding source the settings select, and whether it works here."""

    source: str | None
    model: str | None
    dimensions: int | None
    available: bool
    reason: str
    cache_stats: EmbeddingCacheStats


@dataclass(slots=True, frozen=True)
class VectorStoreStatus:
    """The vector index searches use first, its vectors and the memories waiting for one."""

    backend: VectorBackend
    available: bool
    row_count: int
    needs_reindex: int
    reason: str


@dataclass(slots=True, frozen=True)
class QdrantBackfill:
    done: bool
    pending: int
    pushed: int
    total: int
    orphans_removed: int


@dataclass(slots=True, frozen=True)
class QdrantStatus:
    """Qdrant's block: enabled, health and latency, where, collection, points, the
    embedding, sync progress and the last error (unknowns are None)."""

    enabled: bool
    healthy: bool | None
    latency_ms: float | None
    error: str | None
    where: str | None
    collection: str | None
    points: int | None
    embedding: str | None
    serving: bool
    outbox: int
    backfill: QdrantBackfill
    last_error: str | None


@dataclass(slots=True, frozen=True)
class RerankStatus:
    enabled: bool
    provider: str | None
    model: str | None
    available: bool
    reason: str


@dataclass(slots=True, frozen=True)
class ReindexProgress:
    """The background re-index worker since start."""

    running: bool
    processed: int
    errors: int


@dataclass(slots=True, frozen=True)
class MemoryLimits:
    """The bounds on what a key stores and what they did since start: facts past the
    per-message limit not stored, memories evicted to make room for learned facts, adds
    refused at the per-key cap (`max_memories_per_key` 0: no cap)."""

    max_facts_per_message: int
    facts_dropped: int
    max_memories_per_key: int
    evicted: int
    refused: int


@dataclass(slots=True, frozen=True)
class StorageStatus:
    """Whether the database takes writes, its size and its disk's free space (None when
    unknown, e.g. in memory), and the per-key limits."""

    writable: bool
    reason: str
    database_bytes: int | None
    disk_free_bytes: int | None
    limits: MemoryLimits


@dataclass(slots=True, frozen=True)
class EngineStatus:
    """Which search tiers are active and why, the queues, and whether writes succeed."""

    keyword: KeywordStatus
    embedding: EmbeddingStatus
    vector_store: VectorStoreStatus
    qdrant: QdrantStatus
    rerank: RerankStatus
    extraction_queue: ExtractionQueue
    reindex: ReindexProgress
    storage: StorageStatus


# -- embedding sources -------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class LocalSourceStatus:
    """A local embedding source (`transformers`, `static`) and whether it can work here."""

    source: str
    model: str
    dimensions: int | None
    available: bool
    reason: str


@dataclass(slots=True, frozen=True)
class EmbeddingProvider:
    """A choice for the embedding source: a configured provider (`has_key`; the key itself
    is never part of it) or a local source (the fields of `LocalSourceStatus`)."""

    id: str
    kind: Literal["provider", "local"]
    has_key: bool | None = None
    source: str | None = None
    model: str | None = None
    dimensions: int | None = None
    available: bool | None = None
    reason: str | None = None

    @classmethod
    def local(cls, status: LocalSourceStatus) -> EmbeddingProvider:
        return cls(
            id=status.source,
            kind="local",
            source=status.source,
            model=status.model,
            dimensions=status.dimensions,
            available=status.available,
            reason=status.reason,
        )


# -- Qdrant ------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class QdrantSettingsView:
    """The Qdrant settings as shown: the API key only as whether one is set and its last
    characters."""

    enabled: bool
    host: str
    port: int
    https: bool
    collection: str
    embedding_model: str | None
    quantization: str
    has_api_key: bool
    api_key_masked: str | None


@dataclass(slots=True, frozen=True)
class QdrantHealth:
    """The server's `/readyz` (a collections call in local mode) and how long it took."""

    ok: bool
    latency_ms: float
    error: str | None = None


@dataclass(slots=True, frozen=True)
class QdrantSearchHit:
    id: str
    score: float
    payload: dict[str, Any] | None


@dataclass(slots=True, frozen=True)
class QdrantSearchTest:
    """The settings page's search test: the nearest points over every key."""

    ok: bool
    results: list[QdrantSearchHit]
    error: str | None = None


@dataclass(slots=True, frozen=True)
class QdrantCleanup:
    """Points deleted for expired memories and memories older than `retention_days`."""

    ok: bool
    deleted_count: int
    deleted_ids: list[str]
    retention_days: int
    error: str | None = None


@dataclass(slots=True, frozen=True)
class QdrantModelChoice:
    """A choice for `qdrantEmbeddingModel`: `value` "" is the memory embedding source."""

    value: str
    label: str
