"""`/api/settings/memory`: read and change the memory settings (admin token required).

Settings live in the database, so a change takes effect at once in every worker."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from memroute.web.auth import require_admin
from memroute.web.routes.memory import memory_of
from memroute.web.schemas import ERROR_RESPONSES, MemorySettingsOut, MemorySettingsUpdate

router = APIRouter(
    prefix="/api/settings",
    tags=["settings"],
    dependencies=[Depends(require_admin)],
    responses=ERROR_RESPONSES,
)


@router.get("/memory", response_model=MemorySettingsOut)
def get_memory_settings(request: Request) -> dict[str, Any]:
    """The current memory settings (15 fields)."""
    return memory_of(request).settings().to_dict()


@router.put("/memory", response_model=MemorySettingsOut)
def put_memory_settings(request: Request, body: MemorySettingsUpdate) -> dict[str, Any]:
    """Change some settings; absent fields keep their value. One bad value rejects the
    whole request (400) and nothing is written. Returns the settings after the write."""
    return memory_of(request).update_settings(body.model_dump(exclude_unset=True)).to_dict()
