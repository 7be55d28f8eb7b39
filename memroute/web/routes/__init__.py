"""Route modules; `register(app)` mounts them all."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from fastapi import APIRouter, FastAPI
from starlette.routing import BaseRoute

if TYPE_CHECKING:
    from memroute.web.direct_routes import Endpoint


def register(app: FastAPI) -> None:
    """Mount every route on `app`: the process's shared inclusions (`_routes`), then the
    dashboard's static files; the gateway's POST routes are answered before the router
    (memroute/web/direct_routes.py). `app.dependency_overrides` does not reach shared routes
    (memroute overrides none)."""
    from memroute.web import pages
    from memroute.web.direct_routes import answer_directly

    app.router.routes.extend(_routes())
    pages.mount_static(app)
    answer_directly(app, _direct())


@functools.cache
def _direct() -> dict[str, Endpoint]:
    from memroute.web.direct_routes import posted_endpoints
    from memroute.web.routes import gateway

    return posted_endpoints(gateway.router)


@functools.cache
def _routes() -> tuple[BaseRoute, ...]:
    """Every route of the API and the pages, included once per process and shared by each
    app built in it. FastAPI builds a route's handler (its parameters' validators) on the
    first request through an inclusion, ~70 ms of CPU for all of them: shared, that is paid
    once per process, not once per app (the tests build hundreds)."""
    from memroute.web import pages
    from memroute.web.routes import admin, gateway, health, memory, qdrant, session, settings

    shared = APIRouter()
    for router in (
        health.router,
        gateway.router,
        memory.router,
        qdrant.router,
        session.router,
        settings.router,
        admin.keys,
        admin.providers,
        pages.router,
    ):
        shared.include_router(router)
    return tuple(shared.routes)
