"""Route modules; `register(app)` mounts them all."""

from __future__ import annotations

from fastapi import FastAPI


def register(app: FastAPI) -> None:
    from memroute.web.routes import admin, gateway, health, memory, qdrant, session, settings

    app.include_router(health.router)
    app.include_router(gateway.router)
    app.include_router(memory.router)
    app.include_router(qdrant.router)
    app.include_router(session.router)
    app.include_router(settings.router)
    app.include_router(admin.keys)
    app.include_router(admin.providers)

    from memroute.web import pages

    pages.mount(app)
