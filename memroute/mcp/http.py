"""Streamable HTTP transport of the MCP server, mounted at `/mcp` in the memroute app.

The gate is the `Authorization: Bearer` header: the admin token, or a client key (whose
tools then see only its own memories). No cookie is accepted here, so a web page in a
browser cannot call the tools; that is also why the SDK's DNS-rebinding host check is
off (it would refuse memroute behind a reverse proxy).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from memroute.service import Memory

log = logging.getLogger("memroute.mcp")


class BearerGuard:
    """Raw ASGI wrapper (a class instance, so Starlette passes the ASGI call through)."""

    def __init__(self, app: Any, admin_token: str, memory: Callable[[], Memory]) -> None:
        self.app = app
        self.admin_token = admin_token
        self.memory = memory

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scheme, _, token = Headers(scope=scope).get("authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() == "bearer" and token and await self._known(token):
            await self.app(scope, receive, send)
            return
        log.warning("mcp.http.unauthorized")
        response = JSONResponse(
            {
                "error": {
                    "message": "Authorization: Bearer <admin token or client key> required",
                    "type": "authentication_error",
                }
            },
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )
        await response(scope, receive, send)

    async def _known(self, token: str) -> bool:
        if hmac.compare_digest(token.encode(), self.admin_token.encode()):
            return True
        key = await anyio.to_thread.run_sync(self.memory().keys.authenticate, token)
        return key is not None


def http_endpoint(mcp: MCPServer, admin_token: str, memory: Callable[[], Memory]) -> BearerGuard:
    """The ASGI endpoint for `/mcp`. The host app's lifespan must run `mcp.session_manager.run()`."""
    mcp.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )  # creates mcp.session_manager
    return BearerGuard(StreamableHTTPASGIApp(mcp.session_manager), admin_token, memory)
