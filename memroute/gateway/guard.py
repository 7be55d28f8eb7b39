"""An upstream call that ends when its client goes away or its deadline passes.

While the gateway waits for a provider, nothing else reads the client's connection, so
a client that hangs up would leave the call (and its slot, and its upstream socket)
running until the provider answers. `guarded` cancels the call when the client goes:
told by memroute's server (the `ON_DISCONNECT` scope extension), else by watching the
ASGI receive channel for `http.disconnect`. The deadline is the request's total time
(`MEMROUTE_UPSTREAM_TOTAL_TIMEOUT`), however slowly the answer trickles in.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from starlette.types import Receive, Scope

from memroute.errors import UpstreamError
from memroute.upstream.route import Route

log = logging.getLogger("memroute.gateway")

T = TypeVar("T")

#: An ASGI scope extension a server may offer: `scope["extensions"][ON_DISCONNECT]["add"](callback)`
#: calls `callback` (no arguments, in the event loop) once the client's connection is lost,
#: soon if it is lost already, and returns a function that forgets the callback.
ON_DISCONNECT = "memroute.on_disconnect"


class ClientGone(Exception):
    """The client closed its connection before its answer was ready."""


def deadline_error(route: Route, seconds: float) -> UpstreamError:
    log.warning("gateway.upstream.deadline provider=%s seconds=%g", route.provider_id, seconds)
    return UpstreamError(
        f"upstream provider '{route.provider_id}' did not finish its answer within {seconds:g} s "
        "(MEMROUTE_UPSTREAM_TOTAL_TIMEOUT)",
        status=504,
    )


async def while_connected(scope: Scope, receive: Receive, work: Callable[[], Awaitable[T]]) -> T:
    """`work()`'s result, run in the caller's task; cancelled, with ClientGone, when the
    client disconnects first (told by the server, else a watcher task on `receive`: plain
    asyncio, the request path pays for no task group). Any error of `work` itself is
    raised as it is."""
    task = asyncio.current_task()
    assert task is not None  # always called from a request's task
    gone = False

    def client_gone() -> None:
        nonlocal gone
        if not gone:
            gone = True
            task.cancel()

    told = (scope.get("extensions") or {}).get(ON_DISCONNECT)
    forget: Callable[[], object]
    if told is not None:
        forget = told["add"](client_gone)
    else:
        forget = asyncio.get_running_loop().create_task(_watch(receive, client_gone)).cancel
    try:
        return await work()
    except asyncio.CancelledError:
        if gone and task.uncancel() == 0:  # cancelled for the client, not from outside
            raise ClientGone from None
        raise
    finally:
        forget()


async def _watch(receive: Receive, client_gone: Callable[[], None]) -> None:
    """Call `client_gone` once the client has closed its connection (the request body is
    read already: `receive` has nothing else to say)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    client_gone()


async def guarded(
    scope: Scope,
    receive: Receive,
    deadline: float,
    route: Route,
    seconds: float,
    work: Callable[[], Awaitable[T]],
) -> T:
    """`work()`'s result, ended early (see `while_connected`) when the client disconnects
    first, and with an UpstreamError (504) when the monotonic `deadline` (`seconds` after
    the start) passes first (`asyncio.timeout`)."""
    timer = asyncio.timeout_at(asyncio.get_running_loop().time() + max(0.0, deadline - time.monotonic()))
    try:
        async with timer:
            return await while_connected(scope, receive, work)
    except TimeoutError:
        if timer.expired():
            raise deadline_error(route, seconds) from None
        raise
