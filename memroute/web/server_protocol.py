"""uvicorn's httptools protocol (its C parser) with the guards uvicorn lacks: at the
connection cap a new connection takes the place of the longest-waiting one that holds no
request (idle between requests, or still sending its head, for half a second at least),
and only when every connection is in a request is it answered 503 and closed; a request
head must arrive whole within a deadline, and a request body may not pause longer than
another (slow or idle clients cannot hold the sockets). A request's app is told when its
client's connection is lost (the gateway's `ON_DISCONNECT` scope extension), so the
gateway needs no task of its own to watch for it."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from memroute.gateway.guard import ON_DISCONNECT
from memroute.web.connection_share import ConnectionShare
from memroute.web.head_with_body import HeadWithBody
from memroute.web.logs import LogBudget

log = logging.getLogger("memroute.server")

_BUSY = json.dumps(
    {
        "error": {
            "message": "the server has too many open connections; retry in a moment",
            "type": "server_busy",
        }
    }
).encode()
BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
    b"connection: close\r\ncontent-length: " + str(len(_BUSY)).encode() + b"\r\n\r\n" + _BUSY
)


#: How long a connection must have waited without a request before a new one may take its place.
EVICTABLE_AFTER_S = 0.5


@dataclass(frozen=True, slots=True)
class Guard:
    """What every connection of one server is held to; `share` counts the connections
    served, for the processes sharing the listening socket (memroute/web/connection_share.py)."""

    max_connections: int
    header_timeout_s: float
    body_timeout_s: float
    refusals: LogBudget = field(default_factory=lambda: LogBudget(burst=1, window=10.0), compare=False)
    share: ConnectionShare | None = field(default=None, compare=False)


class GuardedProtocol(HttpToolsProtocol):
    """HttpToolsProtocol for one Guard (set on a subclass by `guarded_protocol`)."""

    guard: Guard

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refused = False
        self.idle_since = 0.0  # when it last started waiting for a request (loop time)
        self.deadline: asyncio.TimerHandle | None = None
        self.waiting_for: str | None = None  # "head" or "body" while a deadline runs
        self.receiving: str | None = None  # "head" or "body" while a request arrives
        self.lost = False
        self.on_lost: list[Callable[[], None]] = []  # called once the connection is lost

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.idle_since = self.loop.time()
        if len(self.connections) >= self.guard.max_connections and not self._make_room():
            self.refused = True
            transport.write(BUSY_RESPONSE)
            transport.close()
            self._log_refusal()
            return
        super().connection_made(transport)
        if self.guard.share is not None:
            self.guard.share.opened()
        self._expect("head", self.guard.header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        if not self.refused:
            if self.guard.share is not None:
                self.guard.share.closed()
            super().connection_lost(exc)
        self.lost = True
        callbacks, self.on_lost = self.on_lost, []
        for callback in callbacks:
            callback()

    def on_disconnect(self, callback: Callable[[], None]) -> Callable[[], None]:
        """`ON_DISCONNECT`: call `callback` once the connection is lost (soon, if it is
        already); the function returned forgets it."""
        if self.lost:
            return self.loop.call_soon(callback).cancel
        self.on_lost.append(callback)
        return functools.partial(self._forget, callback)

    def _forget(self, callback: Callable[[], None]) -> None:
        with contextlib.suppress(ValueError):
            self.on_lost.remove(callback)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.receiving = "head"

    def on_headers_complete(self) -> None:
        extensions = self.scope["extensions"] = dict(self.scope.get("extensions") or {})
        extensions[ON_DISCONNECT] = {"add": self.on_disconnect}
        super().on_headers_complete()
        self.receiving = "body"
        if self.cycle is not None and self.scope["method"] != "HEAD":  # a HEAD answer has no body to wait for
            self.cycle.transport = HeadWithBody(self.transport)  # type: ignore[assignment]

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.receiving = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.idle_since = self.loop.time()
        self._follow()

    def holds_no_request(self, now: float) -> bool:
        """Idle between requests, or still sending a request head, for `EVICTABLE_AFTER_S`
        at least: closing it loses nothing (a client about to reuse its kept-alive
        connection a moment after its last answer is left alone)."""
        return (
            not self.transport.is_closing()
            and self.receiving != "body"
            and (self.cycle is None or self.cycle.response_complete)
            and not self.pipeline
            and now - self.idle_since >= EVICTABLE_AFTER_S
        )

    def _make_room(self) -> bool:
        """At the cap: close the connection that has waited longest without a request (False
        when every open connection is in a request, or closing ones already leave room)."""
        open_now = [c for c in self.connections if not c.transport.is_closing()]
        if len(open_now) < self.guard.max_connections:
            return True
        now = self.loop.time()
        idle = [c for c in open_now if isinstance(c, GuardedProtocol) and c.holds_no_request(now)]
        if not idle:
            return False
        oldest = min(idle, key=lambda c: c.idle_since)
        log.debug("closed an idle connection from %s to make room for a new one", oldest.client)
        oldest.transport.close()
        return True

    def _follow(self) -> None:
        """Start, keep or stop the deadline for what the client must send next."""
        if self.transport.is_closing():
            self._cancel()
            return
        if self.receiving == "body":
            self._expect("body", self.guard.body_timeout_s, restart=True)
        elif self.receiving == "head":
            self._expect("head", self.guard.header_timeout_s)  # part of the next head came
        elif self.cycle is not None and not self.cycle.response_complete:
            self._cancel()  # the request is in; between requests the keep-alive timeout runs

    def _expect(self, what: str, seconds: float, *, restart: bool = False) -> None:
        if self.waiting_for == what and not restart:
            return
        self._cancel()
        self.waiting_for = what
        self.deadline = self.loop.call_later(seconds, self._too_slow)

    def _cancel(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline, self.waiting_for = None, None

    def _too_slow(self) -> None:
        waiting_for, self.deadline, self.waiting_for = self.waiting_for, None, None
        if waiting_for == "body" and self.flow is not None and self.flow.read_paused:
            self._expect("body", self.guard.body_timeout_s)  # the app is not reading yet
            return
        if not self.transport.is_closing():
            log.debug("closed a connection from %s: no complete request %s in time", self.client, waiting_for)
            self.transport.close()

    def _log_refusal(self) -> None:
        skipped = self.guard.refusals.take()
        if skipped is not None:
            log.warning(
                "refused a connection: %d open, the limit is %d (MEMROUTE_MAX_CONNECTIONS); "
                "%d more refused unlogged",
                len(self.connections),
                self.guard.max_connections,
                skipped,
            )


def guarded_protocol(guard: Guard) -> type[GuardedProtocol]:
    """The protocol class uvicorn builds for each connection of a server held to `guard`."""
    return type("MemrouteHttpProtocol", (GuardedProtocol,), {"guard": guard})
