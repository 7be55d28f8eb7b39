"""`GET /api/memory/engine-status` and `GET /api/memory/embedding-providers`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from memroute import results
from memroute.web.schemas.derive import wire_model


class KeywordStatus(BaseModel):
    available: bool
    backend: str


class EmbeddingCacheStats(BaseModel):
    hits: int
    misses: int
    size: int


class EmbeddingStatus(BaseModel):
    source: str | None
    model: str | None
    dimensions: int | None
    available: bool
    reason: str
    cacheStats: EmbeddingCacheStats


class VectorStoreStatus(BaseModel):
    backend: Literal["sqlite-vec", "qdrant", "none"]
    available: bool
    rowCount: int
    needsReindex: int
    reason: str


class QdrantBackfill(BaseModel):
    done: bool = Field(description="every memory of the current collection was pushed")
    pending: int = Field(description="memories the back-fill has still to push")
    pushed: int
    total: int = Field(description="memories when the back-fill (re)started")
    orphansRemoved: int = Field(description="points of deleted memories removed at its end")


class QdrantStatus(BaseModel):
    enabled: bool
    healthy: bool | None = Field(description="the server's /readyz (null when disabled)")
    latencyMs: float | None
    error: str | None
    where: str | None = Field(description="the server URL, or 'local mode (...)'; never the key")
    collection: str | None = Field(description="`<collection>_<dimension>` for the current embedding")
    points: int | None
    embedding: str | None = Field(description="source:model Qdrant's vectors come from")
    serving: bool = Field(description="Qdrant answers searches (its back-fill has finished)")
    outbox: int = Field(description="memory changes queued for Qdrant")
    backfill: QdrantBackfill
    lastError: str | None


class RerankStatus(BaseModel):
    enabled: bool
    provider: str | None
    model: str | None
    available: bool
    reason: str


ExtractionQueue = wire_model(results.ExtractionQueue, "ExtractionQueue")


class ReindexProgress(BaseModel):
    running: bool
    processed: int = Field(description="memories embedded by the background worker since start")
    errors: int


class StorageStatus(BaseModel):
    writable: bool = Field(description="false while writes fail because the database or its disk is full")
    reason: str
    databaseBytes: int | None = Field(description="the database file and its WAL")
    diskFreeBytes: int | None


class EngineStatus(BaseModel):
    keyword: KeywordStatus
    embedding: EmbeddingStatus
    vectorStore: VectorStoreStatus
    qdrant: QdrantStatus
    rerank: RerankStatus
    extractionQueue: ExtractionQueue  # type: ignore[valid-type]  # derived from results.ExtractionQueue
    reindex: ReindexProgress
    storage: StorageStatus


class EmbeddingProvider(BaseModel):
    id: str
    kind: Literal["provider", "local"]
    hasKey: bool | None = None
    source: str | None = None
    model: str | None = None
    dimensions: int | None = None
    available: bool | None = None
    reason: str | None = None


class EmbeddingProvidersOut(BaseModel):
    providers: list[EmbeddingProvider]
