"""`/api/settings/memory`: the memory settings (derived from `MemorySettings`) and their update."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from memroute.memory.settings import MemorySettings
from memroute.web.schemas.common import JsonInt, SettingsStrategy, StrictBody, optional
from memroute.web.schemas.derive import wire_model

EmbeddingSourceName = Literal["remote", "static", "transformers", "auto", "hashing"]
VectorStoreName = Literal["sqlite-vec", "qdrant", "auto"]
ScopeName = Literal["apiKey", "session", "global"]
CaptureTurns = Literal["off", "user", "all"]
ModelName = Annotated[str, Field(max_length=256, description='"provider/model"; null or "" = unset')]


MemorySettingsOut = wire_model(
    MemorySettings,
    "MemorySettingsOut",
    refine={
        "strategy": SettingsStrategy,
        "embedding_source": EmbeddingSourceName,
        "vector_store": VectorStoreName,
        "scope": ScopeName,
        "capture_turns": CaptureTurns,
    },
)


class MemorySettingsUpdate(StrictBody):
    """Settings to change; absent fields keep their value. All or nothing: one bad value → 400."""

    enabled: bool = optional()
    maxTokens: JsonInt = optional(ge=0, le=16000)
    retentionDays: JsonInt = optional(ge=1, le=365)
    strategy: SettingsStrategy = optional()
    skillsEnabled: bool = optional(description="stored for compatibility; has no effect")
    embeddingSource: EmbeddingSourceName = optional()
    embeddingProviderModel: ModelName | None = None
    transformersEnabled: bool = optional()
    staticEnabled: bool = optional()
    rerankEnabled: bool = optional()
    rerankProviderModel: ModelName | None = None
    vectorStore: VectorStoreName = optional()
    scope: ScopeName = optional()
    extractionEnabled: bool = optional()
    injectionEnabled: bool = optional()
    captureTurns: CaptureTurns = optional(description="which chat messages are kept verbatim")
