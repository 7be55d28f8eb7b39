"""The one way memroute runs an ASGI app under uvicorn (`memroute serve`, the demo, the
tests): guarded connections, forwarded headers only from trusted proxies, an event loop
that logging cannot end, and, in the foreground, an exit status a supervisor can act on."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import socket
from collections.abc import Callable
from contextlib import suppress
from types import FrameType
from typing import Any

import uvicorn

from memroute.web.connection_share import SHARING_LOOP, ConnectionShare, SharingLoop, can_share
from memroute.web.logs import LogBudget, loop_exception_handler
from memroute.web.server_limits import ServerLimits
from memroute.web.server_protocol import Guard, guarded_protocol

log = logging.getLogger("memroute.server")

# The young generation's collection threshold of a server process (Python's default: 700).
# Nearly everything a request allocates is freed as it finishes, so a young collection
# mostly walks the requests in flight: at 700 the collector ran ~100 times per second under
# load (~0.16 ms per chat). The threshold sits above what the requests a process may hold
# keep alive together (~150–200 tracked objects each for a chat with memory off): at 10,000
# and 64 chats in flight, it still ran 30 times a second, 2.7 ms each (~40 µs per chat).
OBJECTS_PER_REQUEST = 250
YOUNG_COLLECTION_MIN, YOUNG_COLLECTION_MAX = 10_000, 50_000  # the most bounds a collection's pause
# How often a stopping server looks whether its connections have closed (uvicorn paused
# 0.1 s after asking them to, then looked every 0.1 s).
SHUTDOWN_POLL_S = 0.005


def young_collection_threshold(requests_in_flight: int) -> int:
    """The young generation's threshold for a process holding at most `requests_in_flight`
    requests: what they keep alive together, within 10,000 to 50,000."""
    return min(max(OBJECTS_PER_REQUEST * requests_in_flight, YOUNG_COLLECTION_MIN), YOUNG_COLLECTION_MAX)


class MemrouteServer(uvicorn.Server):
    """uvicorn's Server whose event loop logs its errors without ever failing, that knows
    whether a signal stopped it (`signalled`), and that stops with the reason in `failure`
    when a listening socket no longer accepts connections. With `parent_pid` (a worker of
    `memroute serve --workers`), it stops as if signalled once that process is gone.

    With `freeze_heap` (a server process of its own: `memroute serve`), what exists once
    the app has started (modules, the app, the opened service: ~140,000 objects) is moved
    out of the garbage collector's view. A full collection walked all of it, ~100 ms on a
    small machine, which every request in flight then waited for. The young generation is
    collected less often: once more objects were made than `requests_in_flight` keep alive
    (see `young_collection_threshold`).

    Asked to stop (`stop` from any thread, or a signal), it stops at once rather than at
    its next tick, and goes on as soon as its connections have closed (see `shutdown`)."""

    def __init__(
        self,
        config: uvicorn.Config,
        guard: Guard,
        parent_pid: int | None = None,
        freeze_heap: bool = False,
        on_started: Callable[[], object] | None = None,
        requests_in_flight: int = 0,
    ) -> None:
        super().__init__(config)
        self.on_started = on_started
        self.guard = guard
        self.parent_pid = parent_pid
        self.freeze_heap = freeze_heap
        self.requests_in_flight = requests_in_flight
        self.signalled = False
        self.failure: str | None = None
        self.loop_errors = LogBudget()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._loop.set_exception_handler(loop_exception_handler(self.loop_errors))
        await super().serve(sockets)

    def stop(self) -> None:
        """Ask the server to stop (safe from any thread): its event loop notices at once."""
        self.should_exit = True
        self._wake_up()

    def _wake_up(self) -> None:
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with suppress(RuntimeError):  # the loop has closed: nothing is left to wake
                loop.call_soon_threadsafe(wake.set)

    async def main_loop(self) -> None:
        """uvicorn's ticks, one every 0.1 s, but a stop asked for ends the wait for the next."""
        assert self._wake is not None
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864_000
            with suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's shutdown without its fixed pauses: stop accepting, ask every connection
        to close (a busy one once its response is sent), wait until they and the server's
        tasks are done (within `timeout_graceful_shutdown`, if set), then the app's shutdown."""
        log.info("Shutting down")
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state = self.server_state
        for connection in list(state.connections):
            connection.shutdown()
        try:
            async with asyncio.timeout(self.config.timeout_graceful_shutdown):
                while (state.connections or state.tasks) and not self.force_exit:
                    await asyncio.sleep(SHUTDOWN_POLL_S)
                for server in self.servers:
                    await server.wait_closed()
        except TimeoutError:
            log.error("cancelling %d running task(s): the graceful shutdown's time is up", len(state.tasks))
            for task in state.tasks:
                task.cancel(msg="the graceful shutdown's time is up")
        if not self.force_exit:
            await self.lifespan.shutdown()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        share = self.guard.share
        loop = asyncio.get_running_loop()
        if share is not None and isinstance(loop, SharingLoop):
            loop.share = share
        await super().startup(sockets)
        if share is not None:
            share.serving()
        if self.freeze_heap:
            gc.collect()
            gc.freeze()
            young = young_collection_threshold(self.requests_in_flight)
            gc.set_threshold(young, *gc.get_threshold()[1:])
        if self.on_started is not None:
            self.on_started()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.signalled = True
        super().handle_exit(sig, frame)
        self._wake_up()

    async def on_tick(self, counter: int) -> bool:
        if self.parent_pid is not None and counter % 10 == 0 and os.getppid() != self.parent_pid:
            log.warning("the parent process %d is gone; stopping", self.parent_pid)
            self.parent_pid, self.signalled, self.should_exit = None, True, True
        if self.started and self.failure is None:
            self.failure = dead_listener(self.servers)
            if self.failure:
                log.error("%s; stopping the server", self.failure)
        return self.failure is not None or await super().on_tick(counter)


def dead_listener(servers: list[asyncio.base_events.Server]) -> str | None:
    """Why one of `servers` can no longer accept connections, or None while all can."""
    accepting = getattr(socket, "SO_ACCEPTCONN", None)
    if accepting is None:  # pragma: no cover - platforms without the option
        return None
    for server in servers:
        for sock in server.sockets:
            try:
                listening = sock.getsockopt(socket.SOL_SOCKET, accepting)
            except OSError as exc:
                return f"the listening socket failed ({exc})"
            if not listening:
                return f"the listening socket {sock.getsockname()} no longer accepts connections"
    return None


def build_server(
    app: Any,
    limits: ServerLimits,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    open_files: int | None = None,
    log_level: str = "warning",
    access_log: bool = True,
    parent_pid: int | None = None,
    freeze_heap: bool = False,
    requests_in_flight: int = 0,
    share: ConnectionShare | None = None,
    on_started: Callable[[], object] | None = None,
) -> MemrouteServer:
    """A server for `app` held to `limits` (its connection cap sized for `open_files`), with
    a line per request for uvicorn's access logger unless `access_log` is off, sharing its
    listening socket's connections evenly with other processes by `share`, and running
    `on_started` in the event loop's thread once the app has started; with `freeze_heap`, see
    MemrouteServer. It leaves the logging set-up alone: `memroute serve` installs its own first."""
    guard = Guard(
        limits.connection_cap(open_files), limits.header_timeout_s, limits.body_timeout_s, share=share
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=guarded_protocol(guard),
        # uvloop measured no faster here, and it handles running out of files (EMFILE on
        # accept) differently: asyncio's loop pauses accepting and carries on.
        # Processes sharing the socket take connections in turn (memroute/web/connection_share.py).
        loop=SHARING_LOOP if share is not None and can_share() else "asyncio",
        ws="none",  # nothing in memroute speaks WebSocket; an upgrade would leave the guard
        lifespan="on",
        log_config=None,
        log_level=log_level,
        access_log=access_log,
        timeout_keep_alive=limits.keep_alive_timeout_s,
        proxy_headers=bool(limits.trusted_proxies),
        forwarded_allow_ips=list(limits.trusted_proxies),
    )
    return MemrouteServer(config, guard, parent_pid, freeze_heap, on_started, requests_in_flight)


def describe(server: MemrouteServer, limits: ServerLimits) -> str:
    """One log line with the limits a server holds its clients to."""
    proxies = ", ".join(limits.trusted_proxies) or "none (X-Forwarded-* ignored)"
    return (
        f"connections: at most {server.guard.max_connections} open; a request head within "
        f"{limits.header_timeout_s:g} s, body pauses up to {limits.body_timeout_s:g} s, idle "
        f"keep-alive {limits.keep_alive_timeout_s} s; trusted proxies: {proxies}"
    )


def serve_in_foreground(server: MemrouteServer, sockets: list[socket.socket] | None = None) -> int:
    """Run `server` in this thread until a signal stops it, then 0. When its event loop
    ends with an error, or it stops by itself, log why and return 1."""
    try:
        server.run(sockets=sockets)
    except KeyboardInterrupt:
        if server.signalled:  # uvicorn raises the Ctrl+C it handled again once it stopped
            return 0
        log.critical("the server was interrupted; exiting with status 1")
        return 1
    except SystemExit:
        raise
    except BaseException as exc:
        log.critical("the event loop ended with an error: %r; exiting with status 1", exc, exc_info=True)
        return 1
    if server.failure or not server.signalled:
        log.critical(
            "the server stopped without a shutdown signal (%s); exiting with status 1",
            server.failure or "no reason given",
        )
        return 1
    return 0
