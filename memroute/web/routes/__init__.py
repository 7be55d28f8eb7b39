"""Route modules; `register(app)` mounts them all."""

from __future__ import annotations

from fastapi import FastAPI


def register(app: FastAPI) -> None:
    from memroute.web.routes import gateway, health

    app.include_router(health.router)
    app.include_router(gateway.router)
