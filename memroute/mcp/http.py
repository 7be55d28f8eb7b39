"""Streamable HTTP transport of the MCP server, mounted at `/mcp` in the memroute app.

The gate is the `Authorization: Bearer` header: the admin token, or a client key (whose
tools then see only its own memories). No cookie is accepted here, so a web page in a
browser cannot call the tools; that is also why the SDK's DNS-rebinding host check is
off (the app's own Host allow-list covers `/mcp` too).

A client key is looked up first and never throttled (keys are random and cannot be
guessed); any other token counts as a wrong admin token in the app's shared throttle,
which answers 429 while it is closed. Each session belongs to the caller that opened it
(the admin, or one client key): another caller gets the SDK's 404 "Session not found".
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Protocol

import anyio
from mcp.server import MCPServer
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from memroute.errors import TooManyAttempts
from memroute.service import Memory

log = logging.getLogger("memroute.mcp")

ADMIN_PRINCIPAL = "admin"


class WrongTokenThrottle(Protocol):
    """The web app's throttle of wrong admin tokens (memroute/web/throttle.py)."""

    def verify(self, address: str, given: str, expected: str) -> bool:
        """Whether `given` is `expected`; TooManyAttempts while `address` or the server is
        over its limit, and a wrong token counted."""


class BearerGuard:
    """Raw ASGI wrapper (a class instance, so Starlette passes the ASGI call through)."""

    def __init__(
        self, app: Any, admin_token: str, memory: Callable[[], Memory], throttle: WrongTokenThrottle
    ) -> None:
        self.app = app
        self.admin_token = admin_token
        self.memory = memory
        self.throttle = throttle

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scheme, _, token = Headers(scope=scope).get("authorization", "").partition(" ")
        token = token.strip()
        try:
            principal = await self._principal(token, _address(scope)) if scheme.lower() == "bearer" else None
        except TooManyAttempts as exc:
            log.warning("mcp.http.throttled")
            await _error(429, exc.message, "rate_limit_error", {"Retry-After": str(exc.retry_after or 1)})(
                scope, receive, send
            )
            return
        if principal is None:
            log.warning("mcp.http.unauthorized")
            message = "Authorization: Bearer <admin token or client key> required"
            await _error(401, message, "authentication_error", {"WWW-Authenticate": "Bearer"})(
                scope, receive, send
            )
            return
        # The SDK binds a session to the principal of the request that opened it.
        user = AuthenticatedUser(AccessToken(token="", client_id=principal, scopes=[]))
        await self.app({**scope, "user": user}, receive, send)

    async def _principal(self, token: str, address: str) -> str | None:
        """Who the token is: "key:<id>" for a client key, "admin" for the admin token,
        None for anything else (counted by the throttle, which may refuse first)."""
        if not token:
            return None
        key = await anyio.to_thread.run_sync(self.memory().keys.authenticate, token)
        if key is not None:
            return f"key:{key.id}"
        return ADMIN_PRINCIPAL if self.throttle.verify(address, token, self.admin_token) else None


def _address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "?"


def _error(status: int, message: str, kind: str, headers: dict[str, str]) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status, headers=headers)


def http_endpoint(
    mcp: MCPServer, admin_token: str, memory: Callable[[], Memory], throttle: WrongTokenThrottle
) -> BearerGuard:
    """The ASGI endpoint for `/mcp`. The host app's lifespan must run `mcp.session_manager.run()`."""
    mcp.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )  # creates mcp.session_manager
    return BearerGuard(StreamableHTTPASGIApp(mcp.session_manager), admin_token, memory, throttle)
