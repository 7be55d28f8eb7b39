"""The gateway's POST routes answered before the router. FastAPI finds a route by trying
each included router in turn and then runs its request handler (dependencies, exception
wrapping) even for an endpoint that takes the request alone: 0.1–0.15 ms of CPU per chat
back to back on the benchmark's VM, 0.25–0.4 ms when the provider takes 70 ms
(docs/benchmarks.md).
`DirectRoutes` sits where the router's own middleware sits, inside every app middleware
and the exception handlers, and answers those paths from a table. The routes stay
registered in the router, which documents them and answers everything else (another
method, a path with a slash at the end)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

Endpoint = Callable[[Request], Awaitable[Response]]


def posted_endpoints(router: APIRouter) -> dict[str, Endpoint]:
    """`router`'s POST routes whose endpoint takes the request alone, by path (one that
    takes parameters FastAPI validates is left to the router)."""
    endpoints: dict[str, Endpoint] = {}
    for route in router.routes:
        if isinstance(route, APIRoute) and "POST" in (route.methods or ()):
            parameters = list(inspect.signature(route.endpoint, eval_str=True).parameters.values())
            if len(parameters) == 1 and parameters[0].annotation is Request:
                endpoints[route.path] = route.endpoint
    return endpoints


class DirectRoutes:
    """ASGI: a POST to one of `endpoints`' paths is answered by its endpoint; anything
    else goes to `app` (the router), and so does every request of an app served under a
    root path (`root_path`: the router strips it)."""

    def __init__(self, app: ASGIApp, endpoints: Mapping[str, Endpoint]) -> None:
        self.app = app
        self.endpoints = dict(endpoints)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and not scope.get("root_path"):
            endpoint = self.endpoints.get(scope["path"])
            if endpoint is not None:
                response = await endpoint(Request(scope, receive, send))
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def answer_directly(app: FastAPI, endpoints: Mapping[str, Endpoint]) -> None:
    """Put `DirectRoutes` for `endpoints` in front of `app`'s router (Starlette's router
    runs its `middleware_stack`, FastAPI's app middleware wraps the router)."""
    app.router.middleware_stack = DirectRoutes(app.router.middleware_stack, endpoints)
