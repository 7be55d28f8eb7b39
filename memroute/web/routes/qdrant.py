"""`/api/settings/qdrant*`: Qdrant's settings, health, a search test and
cleanup (admin token required). The API key is write-only: no route returns it."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel

from memroute.service.qdrant import QdrantService
from memroute.web.auth import require_admin
from memroute.web.routes.memory import memory_of
from memroute.web.schemas.errors import ERROR_RESPONSES
from memroute.web.schemas.qdrant import (
    QdrantCleanupOut,
    QdrantHealthOut,
    QdrantModelsOut,
    QdrantSearchOut,
    QdrantSearchRequest,
    QdrantSettingsOut,
    QdrantSettingsUpdate,
)

router = APIRouter(
    prefix="/api/settings/qdrant",
    tags=["qdrant"],
    dependencies=[Depends(require_admin)],
    responses=ERROR_RESPONSES,
)


def qdrant_of(request: Request) -> QdrantService:
    return memory_of(request).qdrant


@router.get("", response_model=QdrantSettingsOut)
def get_qdrant_settings(request: Request) -> BaseModel:
    """The Qdrant settings, with the API key masked (`hasApiKey`, `apiKeyMasked`)."""
    return QdrantSettingsOut.model_validate(qdrant_of(request).settings().public())


@router.put("", response_model=QdrantSettingsOut)
def put_qdrant_settings(request: Request, body: QdrantSettingsUpdate) -> BaseModel:
    """Change some settings; one bad value rejects the request (400) and nothing is written.
    `enabled` also sets `vectorStore` (on → qdrant, off → auto); a body without it leaves
    both alone. Enabling back-fills every memory (progress in engine-status)."""
    settings = qdrant_of(request).update_settings(body.model_dump(exclude_unset=True))
    return QdrantSettingsOut.model_validate(settings.public())


@router.get("/health", response_model=QdrantHealthOut)
def qdrant_health(request: Request) -> BaseModel:
    """`/readyz` of the server (or a call in local mode) with its latency;
    `error: "not_configured"` while Qdrant is disabled or has no host."""
    return QdrantHealthOut.model_validate(qdrant_of(request).health())


@router.post("/search", response_model=QdrantSearchOut)
def qdrant_search(request: Request, body: QdrantSearchRequest) -> BaseModel:
    """The `topK` points nearest to `query` over every key, with their payloads."""
    return QdrantSearchOut.model_validate(qdrant_of(request).search_test(body.query, body.topK))


@router.post("/cleanup", response_model=QdrantCleanupOut)
def qdrant_cleanup(request: Request) -> BaseModel:
    """Delete the points of expired memories and of memories not updated within the memory
    setting `retentionDays`; returns the memory ids deleted. SQLite is not touched."""
    return QdrantCleanupOut.model_validate(qdrant_of(request).cleanup())


@router.get("/embedding-models", response_model=QdrantModelsOut)
def qdrant_embedding_models(request: Request) -> BaseModel:
    """Choices for `embeddingModel`: "" (the memory embedding source) and the embedding
    models the configured providers list."""
    return QdrantModelsOut.model_validate({"models": qdrant_of(request).embedding_models()})
