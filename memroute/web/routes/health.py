"""Liveness and metrics (no auth: they reveal no memory and no secret)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel

from memroute.version import package_version

router = APIRouter(tags=["health"])


class Healthz(BaseModel):
    status: str
    version: str


@router.get("/healthz", response_model=Healthz)
def healthz() -> Healthz:
    """The process is up and serving."""
    return Healthz(status="ok", version=package_version())


@router.get("/metrics", response_class=PlainTextResponse)
def metrics(request: Request) -> str:
    """Prometheus text format."""
    return str(request.app.state.metrics.render())
