"""`/api/settings/memory`: read and change the memory settings (admin token required).

Settings live in the database, so a change takes effect at once in every worker."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel

from memroute.web.auth import require_admin
from memroute.web.routes.memory import memory_of
from memroute.web.schemas.errors import ERROR_RESPONSES
from memroute.web.schemas.settings import MemorySettingsOut, MemorySettingsUpdate

router = APIRouter(
    prefix="/api/settings",
    tags=["settings"],
    dependencies=[Depends(require_admin)],
    responses=ERROR_RESPONSES,
)


@router.get("/memory", response_model=MemorySettingsOut)
def get_memory_settings(request: Request) -> BaseModel:
    """The current memory settings (15 fields)."""
    return MemorySettingsOut.model_validate(memory_of(request).settings())


@router.put("/memory", response_model=MemorySettingsOut)
def put_memory_settings(request: Request, body: MemorySettingsUpdate) -> BaseModel:
    """Change some settings; absent fields keep their value. One bad value rejects the
    whole request (400) and nothing is written. Returns the settings after the write."""
    settings = memory_of(request).update_settings(body.model_dump(exclude_unset=True))
    return MemorySettingsOut.model_validate(settings)
