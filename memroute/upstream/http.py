"""Calls to upstream providers; failures become clear UpstreamErrors.

A provider that cannot be reached (no connection) is told apart from one that broke off
its answer (the connection was made, then closed or cut mid-answer); both are logged with
the provider's id and its base URL (never its key, never credentials in the URL). The
gateway's calls go through its pooled `UpstreamClient` (short synchronous calls, such as
rerank and model lists, through `memroute.upstream.lazy.LazyClient`)."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from memroute.errors import UpstreamError
from memroute.masking import url_for_logs
from memroute.upstream.client import PoolFull, UpstreamClient, UpstreamResponse
from memroute.upstream.failures import CallFailed, InvalidHeader, InvalidURL
from memroute.upstream.route import Route, url_problem

log = logging.getLogger("memroute.upstream")

#: What a call to a provider can fail with once it was sent (a broken or timed-out answer).
CALL_ERRORS = (CallFailed, TimeoutError)


# The Messages API version an Anthropic provider is asked for when the client names none.
ANTHROPIC_VERSION = "2023-06-01"


def upstream_headers(route: Route) -> dict[str, str]:
    """Headers for the provider: its own key, never the client's memroute key (an
    Anthropic provider's in `x-api-key`, with the API version it needs)."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if route.format == "anthropic":
        headers["anthropic-version"] = ANTHROPIC_VERSION
        if route.api_key:
            headers["x-api-key"] = route.api_key
    elif route.api_key:
        headers["authorization"] = f"Bearer {route.api_key}"
    return headers


@contextlib.asynccontextmanager
async def open_stream(
    client: UpstreamClient,
    method: str,
    route: Route,
    path: str,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    sent: Callable[[], None] | None = None,
) -> AsyncIterator[UpstreamResponse]:
    """Send a request (with the client's `headers` the format passes on, e.g.
    `anthropic-version`) and yield the response with its body not yet read; `sent` runs
    once the request is on its way (see `UpstreamClient.send`)."""
    if url_problem(route.base_url) is not None:  # stored before validation was this strict
        raise UpstreamError(f"upstream provider '{route.provider_id}' has an invalid base URL")
    outgoing = upstream_headers(route)
    if headers:
        outgoing.update(headers)
    try:
        response = await client.send(method, route.base_url + path, body, outgoing, sent)
    except (PoolFull, *CALL_ERRORS) as exc:
        raise upstream_failure(route, exc) from None
    try:
        yield response
    finally:
        response.close()


async def read_body(response: UpstreamResponse, route: Route, limit: int | None = None) -> bytes:
    """The whole body of a provider's answer, read as it arrives; a cut-off answer, or one
    of more than `limit` bytes (decoded), is an UpstreamError (502) and is read no further."""
    declared = response.headers.get("content-length", "")
    if limit is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(route, limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in response.chunks():
            size += len(chunk)
            if limit is not None and size > limit:
                raise _too_large(route, limit)
            chunks.append(chunk)
    except CALL_ERRORS as exc:
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


def failure_name(exc: BaseException) -> str:
    """A short, stable name for how a call failed (what error messages and logs show)."""
    return exc.name if isinstance(exc, CallFailed) else type(exc).__name__


def upstream_failure(route: Route, exc: BaseException) -> UpstreamError:
    """The error for a failed call to `route`'s provider, logged with its base URL: no free
    connection to providers (503), timed out (504), unreachable (502), an invalid base URL
    (502), a header that cannot be sent (502) or broke off its answer (502)."""
    name = f"upstream provider '{route.provider_id}'"
    if isinstance(exc, PoolFull):
        log.warning("upstream.pool_full provider=%s", route.provider_id)
        return UpstreamError(
            "all of memroute's connections to upstream providers are busy: retry shortly",
            status=503,
            retry_after=1,
        )
    if isinstance(exc, InvalidURL):
        return UpstreamError(f"{name} has an invalid base URL")  # stored before validation was this strict
    if isinstance(exc, TimeoutError):
        what, status = "timed out", 504
    elif isinstance(exc, InvalidHeader):
        what, status = f"could not be sent the request ({failure_name(exc)})", 502
    elif isinstance(exc, CallFailed) and not exc.reached:
        what, status = f"is unreachable ({failure_name(exc)})", 502
    else:
        what, status = f"broke off its answer ({failure_name(exc)})", 502
    log.warning(
        "upstream.failed provider=%s url=%s error=%s",
        route.provider_id,
        url_for_logs(route.base_url),
        failure_name(exc),
    )
    return UpstreamError(f"{name} {what}", status=status)


async def read_json(client: UpstreamClient, route: Route, path: str, limit: int | None = None) -> Any:
    """GET a JSON document (of at most `limit` bytes) from a provider (for /v1/models)."""
    async with open_stream(client, "GET", route, path) as response:
        data = await read_body(response, route, limit)
        if response.status_code != 200:
            raise UpstreamError(f"upstream provider '{route.provider_id}' answered {response.status_code}")
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        name = f"upstream provider '{route.provider_id}'"
        raise UpstreamError(f"{name} answered with something other than JSON") from None
