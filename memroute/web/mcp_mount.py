"""`/mcp`, built on its first request.

The MCP SDK costs a server ~23 MiB of memory and part of its start-up, and many servers
never serve MCP over HTTP (the tools are also on stdio: `memroute mcp`). So the app
mounts this endpoint instead: the first request to `/mcp` imports the SDK, builds the
MCP server with memroute's tools and starts its session manager in a task of the app's
lifespan (which stops it on shutdown); that request and every later one then go to it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import TaskGroup
from starlette.types import Receive, Scope, Send

from memroute.service import Memory


class LazyMcpEndpoint:
    """Raw ASGI endpoint for `/mcp` (see the module docstring). `serve_in(tasks)` hands it
    the lifespan's task group; until then (no lifespan yet) a request gets a 503."""

    def __init__(self, memory: Callable[[], Memory], admin_token: str, throttle: Any) -> None:
        self._memory = memory
        self._admin_token = admin_token
        self._throttle = throttle
        self._tasks: TaskGroup | None = None
        self._endpoint: Any = None
        self._building = asyncio.Lock()

    def serve_in(self, tasks: TaskGroup | None) -> None:
        self._tasks = tasks

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._endpoint is None:
            async with self._building:
                if self._endpoint is None:
                    if self._tasks is None:
                        from starlette.responses import PlainTextResponse

                        await PlainTextResponse("the server is starting or stopping", status_code=503)(
                            scope, receive, send
                        )
                        return
                    self._endpoint = await self._start(self._tasks)
        await self._endpoint(scope, receive, send)

    async def _start(self, tasks: TaskGroup) -> Any:
        from memroute.mcp.http import http_endpoint
        from memroute.mcp.server import build_server

        mcp = build_server(self._memory, admin_token=self._admin_token)
        endpoint = http_endpoint(mcp, self._admin_token, self._memory, self._throttle)
        running = anyio.Event()

        async def run() -> None:
            async with mcp.session_manager.run():
                running.set()
                await anyio.sleep_forever()

        tasks.start_soon(run)
        await running.wait()
        return endpoint
