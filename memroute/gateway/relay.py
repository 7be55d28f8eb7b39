"""Upstream calls of the gateway, bounded: a total deadline, a cap on a non-streamed
answer's size, cancelled when the client disconnects, and a streamed answer's upstream
response closed however its relay ends."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import anyio
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from memroute.gateway.guard import ClientGone, guarded, while_connected
from memroute.upstream.client import UpstreamClient, UpstreamResponse
from memroute.upstream.http import CALL_ERRORS, open_stream, read_body
from memroute.upstream.route import Route

log = logging.getLogger("memroute.gateway")


@dataclass(frozen=True, slots=True)
class UpstreamBounds:
    """A whole answer's time (`MEMROUTE_UPSTREAM_TOTAL_TIMEOUT`), a non-streamed answer's
    size (`MEMROUTE_MAX_UPSTREAM_BODY_BYTES`), and how late a streamed piece may be
    relayed to go with the next (`MEMROUTE_STREAM_GATHER_MS`; see `UpstreamResponse.chunks`)."""

    total_timeout_s: float
    max_body_bytes: int
    gather_s: float = 0.0


async def fetch_once(
    client: UpstreamClient,
    route: Route,
    path: str,
    payload: bytes,
    request: Request,
    bounds: UpstreamBounds,
    headers: Mapping[str, str] | None = None,
    sent: Callable[[], None] | None = None,
) -> tuple[UpstreamResponse, bytes]:
    """POST `payload` (with the client's `headers` the format passes on) and read the whole
    answer (see `guarded` for how it can end early); `sent` runs once the request is on
    its way."""

    async def call() -> tuple[UpstreamResponse, bytes]:
        async with open_stream(client, "POST", route, path, payload, headers, sent) as upstream:
            return upstream, await read_body(upstream, route, bounds.max_body_bytes)

    deadline = time.monotonic() + bounds.total_timeout_s
    return await guarded(request.scope, request.receive, deadline, route, bounds.total_timeout_s, call)


@dataclass
class OpenStream:
    """A streamed answer whose head has arrived. `close` (idempotent) closes the upstream
    response, then runs `on_close`."""

    response: UpstreamResponse
    route: Route
    bounds: UpstreamBounds
    deadline: float
    on_close: Callable[[], None]
    _stack: contextlib.AsyncExitStack[bool | None] = field(default_factory=contextlib.AsyncExitStack)
    _closed: bool = False

    async def read(self, request: Request) -> bytes:
        """The whole body (a non-SSE answer), capped and guarded like `fetch_once`."""

        async def body() -> bytes:
            return await read_body(self.response, self.route, self.bounds.max_body_bytes)

        return await guarded(
            request.scope, request.receive, self.deadline, self.route, self.bounds.total_timeout_s, body
        )

    async def chunks(self) -> AsyncIterator[bytes]:
        """The raw bytes as they arrive, until the answer ends or the deadline passes (then
        the stream just ends, and the reason is logged). One timer for the whole stream
        closes the upstream connection at the deadline, so no chunk pays for a timeout."""
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            self.response.close()

        timer = asyncio.get_running_loop().call_later(max(0.0, self.deadline - time.monotonic()), expire)
        try:
            async for chunk in self.response.chunks(self.bounds.gather_s):
                if expired:
                    break
                yield chunk
        except CALL_ERRORS:
            if not expired:
                raise
        finally:
            timer.cancel()
        if expired:
            log.warning(
                "gateway.stream.deadline provider=%s seconds=%g: the stream was ended",
                self.route.provider_id,
                self.bounds.total_timeout_s,
            )

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            with anyio.CancelScope(shield=True):
                await self._stack.aclose()
        finally:
            self.on_close()


async def open_streamed(
    client: UpstreamClient,
    route: Route,
    path: str,
    payload: bytes,
    request: Request,
    bounds: UpstreamBounds,
    on_close: Callable[[], None],
    headers: Mapping[str, str] | None = None,
    sent: Callable[[], None] | None = None,
) -> OpenStream:
    """POST `payload` for a streamed answer and wait for its head (guarded like
    `fetch_once`; `sent` runs once the request is on its way). On any failure, `on_close`
    has run when this raises."""
    deadline = time.monotonic() + bounds.total_timeout_s
    stack = contextlib.AsyncExitStack()

    async def head() -> UpstreamResponse:
        return await stack.enter_async_context(
            open_stream(client, "POST", route, path, payload, headers, sent)
        )

    try:
        response = await guarded(
            request.scope, request.receive, deadline, route, bounds.total_timeout_s, head
        )
    except BaseException:
        with anyio.CancelScope(shield=True):
            await stack.aclose()
        on_close()
        raise
    return OpenStream(response, route, bounds, deadline, on_close, stack)


class RelayResponse(StreamingResponse):
    """A streamed response that runs `finish` when it ends, however it ends: all sent,
    the client gone, or its body never started. A client that disconnects ends the relay
    (`while_connected`, not Starlette's task group per stream)."""

    def __init__(
        self,
        content: AsyncIterator[bytes],
        finish: Callable[[], Awaitable[None]],
        *,
        headers: dict[str, str],
    ) -> None:
        super().__init__(content, status_code=200, media_type="text/event-stream", headers=headers)
        self._finish = finish

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await while_connected(scope, receive, functools.partial(self.stream_response, send))
        except ClientGone:  # nobody is left to send the rest to
            log.info("gateway.stream.client_left: the client closed its connection; the relay was ended")
        finally:
            with anyio.CancelScope(shield=True):
                await self._finish()
