"""Calls to upstream providers with httpx; failures become clear UpstreamErrors.

A provider that cannot be reached (no connection) is told apart from one that broke off
its answer (the connection was made, then closed or cut mid-answer); both are logged with
the provider's id and its base URL (never its key, never credentials in the URL)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx

from memroute.errors import UpstreamError
from memroute.masking import url_for_logs
from memroute.upstream.route import Route
from memroute.upstream.tls import tls_context

log = logging.getLogger("memroute.upstream")

#: No connection to the provider was made: nothing was sent.
_NOT_CONNECTED = (httpx.ConnectError, httpx.ProxyError, httpx.UnsupportedProtocol)


def upstream_headers(route: Route) -> dict[str, str]:
    """Headers for the provider: its own key, never the client's memroute key."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if route.api_key:
        headers["authorization"] = f"Bearer {route.api_key}"
    return headers


@contextlib.asynccontextmanager
async def open_stream(
    client: httpx.AsyncClient, method: str, route: Route, path: str, body: bytes | None = None
) -> AsyncIterator[httpx.Response]:
    """Send a request and yield the response with its body not yet read."""
    try:
        request = client.build_request(
            method, route.base_url + path, content=body, headers=upstream_headers(route)
        )
    except httpx.InvalidURL:  # a base URL stored before validation was this strict
        raise UpstreamError(f"upstream provider '{route.provider_id}' has an invalid base URL") from None
    try:
        response = await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        raise upstream_failure(route, exc) from None
    try:
        yield response
    finally:
        with anyio.CancelScope(shield=True):  # a cancelled call still closes its connection
            await response.aclose()


async def read_body(response: httpx.Response, route: Route, limit: int | None = None) -> bytes:
    """The whole body of a provider's answer, read as it arrives; a cut-off answer, or one
    of more than `limit` bytes (decoded), is an UpstreamError (502) and is read no further."""
    declared = response.headers.get("content-length", "")
    if limit is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(route, limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if limit is not None and size > limit:
                raise _too_large(route, limit)
            chunks.append(chunk)
    except httpx.HTTPError as exc:
        raise upstream_failure(route, exc) from None
    return b"".join(chunks)


def _too_large(route: Route, limit: int) -> UpstreamError:
    log.warning(
        "upstream.answer_too_large provider=%s url=%s limit=%d",
        route.provider_id,
        url_for_logs(route.base_url),
        limit,
    )
    return UpstreamError(
        f"upstream provider '{route.provider_id}' answered with more than {limit} bytes "
        "(MEMROUTE_MAX_UPSTREAM_BODY_BYTES); nothing of it was passed on"
    )


def upstream_failure(route: Route, exc: httpx.HTTPError) -> UpstreamError:
    """The error for a failed call to `route`'s provider, logged with its base URL: no free
    connection to providers (503), timed out (504), unreachable (502) or broke off its
    answer (502)."""
    name = f"upstream provider '{route.provider_id}'"
    if isinstance(exc, httpx.PoolTimeout):
        log.warning("upstream.pool_full provider=%s", route.provider_id)
        return UpstreamError(
            "all of memroute's connections to upstream providers are busy: retry shortly",
            status=503,
            retry_after=1,
        )
    if isinstance(exc, httpx.TimeoutException):
        what, status = "timed out", 504
    elif isinstance(exc, _NOT_CONNECTED):
        what, status = f"is unreachable ({type(exc).__name__})", 502
    else:
        what, status = f"broke off its answer ({type(exc).__name__})", 502
    log.warning(
        "upstream.failed provider=%s url=%s error=%s",
        route.provider_id,
        url_for_logs(route.base_url),
        type(exc).__name__,
    )
    return UpstreamError(f"{name} {what}", status=status)


async def read_json(client: httpx.AsyncClient, route: Route, path: str, limit: int | None = None) -> Any:
    """GET a JSON document (of at most `limit` bytes) from a provider (for /v1/models)."""
    async with open_stream(client, "GET", route, path) as response:
        data = await read_body(response, route, limit)
        if response.status_code != 200:
            raise UpstreamError(f"upstream provider '{route.provider_id}' answered {response.status_code}")
        return httpx.Response(200, content=data).json()


class LazyClient:
    """One `httpx.Client` for short synchronous calls to providers (rerank, model lists),
    made on first use (most processes never need it) and closed with the service."""

    def __init__(self) -> None:
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def get(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(verify=tls_context())
            return self._client

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
