"""`/api/settings/qdrant*`: Qdrant's settings, health, search test, cleanup and models."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memroute.models import status
from memroute.web.schemas.common import JsonInt, StrictBody, optional
from memroute.web.schemas.derive import envelope, list_of, wire_model

QdrantSettingsOut = wire_model(
    status.QdrantSettingsView,
    "QdrantSettingsOut",
    doc="""Qdrant settings. The API key is write-only: only whether one is set and its last 4
    characters are shown.""",
    refine={"quantization": Literal["none", "int8", "binary"]},
    describe={
        "host": "host name or URL; ':memory:' or 'local:<dir>' run Qdrant's local mode",
        "collection": "base name: the collection is `<collection>_<dimension>`",
        "embedding_model": "'provider/model', or null for the memory embedding source",
    },
)


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


QdrantHealthOut = wire_model(status.QdrantHealth, "QdrantHealthOut")


class QdrantSearchRequest(StrictBody):
    query: str = Field(min_length=1, max_length=4096)
    topK: JsonInt = Field(5, ge=1, le=50)


QdrantSearchHit = wire_model(status.QdrantSearchHit, "QdrantSearchHit")
QdrantSearchOut = wire_model(status.QdrantSearchTest, "QdrantSearchOut")
QdrantCleanupOut = wire_model(
    status.QdrantCleanup,
    "QdrantCleanupOut",
    describe={"deleted_ids": "the memory ids whose points were deleted"},
)
QdrantModel = wire_model(
    status.QdrantModelChoice, "QdrantModel", describe={"value": "'' = the memory embedding source"}
)
QdrantModelsOut = envelope("QdrantModelsOut", models=list_of(QdrantModel))
