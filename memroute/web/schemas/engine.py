"""`GET /api/memory/engine-status` and `GET /api/memory/embedding-providers`: the records
of `memroute.models.status`, derived."""

from __future__ import annotations

from memroute.models import results, status
from memroute.web.schemas.derive import envelope, list_of, wire_model

KeywordStatus = wire_model(status.KeywordStatus, "KeywordStatus")
EmbeddingCacheStats = wire_model(status.EmbeddingCacheStats, "EmbeddingCacheStats")
EmbeddingStatus = wire_model(status.EmbeddingStatus, "EmbeddingStatus")
VectorStoreStatus = wire_model(status.VectorStoreStatus, "VectorStoreStatus")
QdrantBackfill = wire_model(
    status.QdrantBackfill,
    "QdrantBackfill",
    describe={
        "done": "every memory of the current collection was pushed",
        "pending": "memories the back-fill has still to push",
        "total": "memories when the back-fill (re)started",
        "orphans_removed": "points of deleted memories removed at its end",
    },
)
QdrantStatus = wire_model(
    status.QdrantStatus,
    "QdrantStatus",
    describe={
        "healthy": "the server's /readyz (null when disabled)",
        "where": "the server URL, or 'local mode (...)'; never the key",
        "collection": "`<collection>_<dimension>` for the current embedding",
        "embedding": "source:model Qdrant's vectors come from",
        "serving": "Qdrant answers searches (its back-fill has finished)",
        "outbox": "memory changes queued for Qdrant",
    },
)
RerankStatus = wire_model(status.RerankStatus, "RerankStatus")
ExtractionQueue = wire_model(results.ExtractionQueue, "ExtractionQueue")
ReindexProgress = wire_model(
    status.ReindexProgress,
    "ReindexProgress",
    describe={"processed": "memories embedded by the background worker since start"},
)
MemoryLimits = wire_model(status.MemoryLimits, "MemoryLimits")
StorageStatus = wire_model(
    status.StorageStatus,
    "StorageStatus",
    describe={
        "writable": "false while writes fail because the database or its disk is full",
        "database_bytes": "the database file and its WAL",
    },
)
EngineStatus = wire_model(status.EngineStatus, "EngineStatus")

EmbeddingProvider = wire_model(status.EmbeddingProvider, "EmbeddingProvider")
EmbeddingProvidersOut = envelope("EmbeddingProvidersOut", providers=list_of(EmbeddingProvider))
