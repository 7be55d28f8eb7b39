"""`/api/settings/qdrant*`: Qdrant's settings, health, search test, cleanup and models."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from memroute.web.schemas.common import JsonInt, StrictBody, optional


class QdrantSettingsOut(BaseModel):
    """Qdrant settings. The API key is write-only: only whether one is set and its last 4
    characters are shown."""

    enabled: bool
    host: str = Field(description="host name or URL; ':memory:' or 'local:<dir>' run Qdrant's local mode")
    port: int
    https: bool
    collection: str = Field(description="base name: the collection is `<collection>_<dimension>`")
    embeddingModel: str | None = Field(
        description="'provider/model', or null for the memory embedding source"
    )
    quantization: Literal["none", "int8", "binary"]
    hasApiKey: bool
    apiKeyMasked: str | None


class QdrantSettingsUpdate(StrictBody):
    """Settings to change; absent fields keep their value. `enabled` also sets the memory
    setting `vectorStore` (on → qdrant, off → auto); enabling back-fills every memory."""

    enabled: bool = optional()
    host: str | None = optional(max_length=512)
    port: JsonInt = optional(ge=1, le=65535)
    https: bool = optional()
    collection: str = optional(min_length=1, max_length=100, documented=r"^\s*[A-Za-z0-9_-]+\s*$")
    embeddingModel: str | None = optional(
        max_length=256,
        description="'provider/model'; '' or null = the memory embedding source",
        documented=r"^\s*$|/",
    )
    quantization: Literal["none", "int8", "binary"] = optional()
    apiKey: str | None = optional(max_length=1024, description='"" or null removes the stored key')


class QdrantHealthOut(BaseModel):
    ok: bool
    latencyMs: float
    error: str | None = None


class QdrantSearchRequest(StrictBody):
    query: str = Field(min_length=1, max_length=4096)
    topK: JsonInt = Field(5, ge=1, le=50)


class QdrantSearchHit(BaseModel):
    id: str
    score: float
    payload: dict[str, Any] | None = None


class QdrantSearchOut(BaseModel):
    ok: bool
    results: list[QdrantSearchHit]
    error: str | None = None


class QdrantCleanupOut(BaseModel):
    ok: bool
    deletedCount: int
    deletedIds: list[str] = Field(description="the memory ids whose points were deleted")
    retentionDays: int
    error: str | None = None


class QdrantModel(BaseModel):
    value: str = Field(description="'' = the memory embedding source")
    label: str


class QdrantModelsOut(BaseModel):
    models: list[QdrantModel]
