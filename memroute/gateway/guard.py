"""An upstream call that ends when its client goes away or its deadline passes.

While the gateway waits for a provider, nothing else reads the client's connection, so
a client that hangs up would leave the call (and its slot, and its upstream socket)
running until the provider answers. `guarded` watches the ASGI receive channel for
`http.disconnect` meanwhile and cancels the call then; the deadline is the request's
total time (`MEMROUTE_UPSTREAM_TOTAL_TIMEOUT`), however slowly the answer trickles in.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from starlette.types import Receive

from memroute.errors import UpstreamError
from memroute.upstream.route import Route

log = logging.getLogger("memroute.gateway")

T = TypeVar("T")


class ClientGone(Exception):
    """The client closed its connection before its answer was ready."""


async def until_disconnected(receive: Receive) -> None:
    """Returns when the client has closed its connection (the request body is read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass


def deadline_error(route: Route, seconds: float) -> UpstreamError:
    log.warning("gateway.upstream.deadline provider=%s seconds=%g", route.provider_id, seconds)
    return UpstreamError(
        f"upstream provider '{route.provider_id}' did not finish its answer within {seconds:g} s "
        "(MEMROUTE_UPSTREAM_TOTAL_TIMEOUT)",
        status=504,
    )


async def while_connected(receive: Receive, work: Callable[[], Awaitable[T]]) -> T:
    """`work()`'s result, run in the caller's task; cancelled, with ClientGone, when the
    client disconnects first (a watcher task cancels the caller's task then: plain
    asyncio, the request path pays for no task group). Any error of `work` itself is
    raised as it is."""
    task = asyncio.current_task()
    assert task is not None  # always called from a request's task
    gone = False

    async def watch() -> None:
        nonlocal gone
        await until_disconnected(receive)
        gone = True
        task.cancel()

    watcher = asyncio.get_running_loop().create_task(watch())
    try:
        return await work()
    except asyncio.CancelledError:
        if gone and task.uncancel() == 0:  # cancelled by the watcher, not from outside
            raise ClientGone from None
        raise
    finally:
        watcher.cancel()


async def guarded(
    receive: Receive, deadline: float, route: Route, seconds: float, work: Callable[[], Awaitable[T]]
) -> T:
    """`work()`'s result, ended early (see `while_connected`) when the client disconnects
    first, and with an UpstreamError (504) when the monotonic `deadline` (`seconds` after
    the start) passes first (`asyncio.timeout`)."""
    timer = asyncio.timeout_at(asyncio.get_running_loop().time() + max(0.0, deadline - time.monotonic()))
    try:
        async with timer:
            return await while_connected(receive, work)
    except TimeoutError:
        if timer.expired():
            raise deadline_error(route, seconds) from None
        raise
