"""The gateway's pooled connections to providers: memroute's own HTTP/1.1 client on
asyncio and httptools' C parser (memroute/upstream/connection.py), which costs a fifth
less CPU per call than aiohttp did.

A call waits at most `pool_wait_s` for a free pooled connection (then `PoolFull`, never a
queue); each read may pause at most `read_timeout_s`, a new connection take at most
`connect_timeout_s`; an idle pooled connection is dropped after `keepalive_s` (one timer
sweeps the pool), at most `size` are kept idle, and one is reused only after an answer
that ended cleanly. Redirects are never followed, and
cookies a provider sets are never kept (one client's call must not carry them into
another's). Answers compressed with gzip or deflate arrive decoded. Proxies come from the
environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY), read once per provider address. A base
URL with credentials (`https://user:pass@host/v1`) sends them as Basic auth, in place of
the provider's key."""

from __future__ import annotations

import asyncio
import re
import ssl
import urllib.request
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from memroute.upstream.connection import ProviderConnection
from memroute.upstream.decoding import ACCEPTED_ENCODINGS
from memroute.upstream.dial import CallTarget, Origin, Proxy, call_target, dial, proxy_at
from memroute.upstream.failures import InvalidHeader, ServerDisconnected
from memroute.version import package_version

MAX_REMEMBERED_URLS = 256  # providers' URLs whose parsing and proxy decision are kept
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS"})  # sent again once when a kept-alive connection had closed
SET_BY_THE_CLIENT = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive"})
_NOT_IN_A_NAME = re.compile(r"[^!#$%&'*+.^_`|~0-9A-Za-z-]")  # a header's name is a token
_NOT_IN_A_VALUE = re.compile(r"[\r\n\x00]")


class PoolFull(Exception):
    """No pooled connection to providers came free in time."""


@dataclass(frozen=True, slots=True)
class PoolSettings:
    """How the gateway's connections to providers are pooled and timed."""

    size: int
    pool_wait_s: float
    connect_timeout_s: float
    read_timeout_s: float
    keepalive_s: float


class UpstreamResponse:
    """A provider's answer whose body is read as it arrives (decoded when the provider
    compressed it). `close` once done with it."""

    __slots__ = ("_conn", "_done", "headers", "status_code")

    def __init__(self, conn: ProviderConnection, done: Callable[[ProviderConnection], None]) -> None:
        self._conn = conn
        self._done: Callable[[ProviderConnection], None] | None = done
        self.status_code = conn.status_code
        self.headers: Mapping[str, str] = conn.headers  # looked up by name in any case

    async def chunks(self, gather_s: float = 0.0) -> AsyncIterator[bytes]:
        """The body as it arrives: what has arrived each time, in one piece. With
        `gather_s`, once pieces come less than `gather_s` apart (a fast provider's tokens),
        the connection is left unread until `gather_s` after the last piece was handed
        out, and what arrived meanwhile comes as one piece: fewer wake-ups and writes, each
        piece at most `gather_s` late. Pieces that come slower, and the first two (the
        first may have come with the head, so it tells nothing of the pace), are handed
        out at once. Raises CallFailed or TimeoutError when the answer breaks off."""
        conn = self._conn
        loop = asyncio.get_running_loop()
        first, hold = True, False
        while True:
            if hold:
                await conn.hold(gather_s)  # the end, once here, is handed out at once
            asked = loop.time()
            chunk = await conn.read()
            if not chunk:
                return
            hold = not first and gather_s > 0 and loop.time() - asked < gather_s
            first = False
            yield chunk

    def close(self) -> None:
        """Done with it (again: nothing). Its connection goes back to the pool when the body
        has all arrived, else it is closed, and a read still waiting ends."""
        done, self._done = self._done, None
        if done is not None:
            done(self._conn)


class UpstreamClient:
    """One pool of connections to providers per process, used inside the event loop
    (`start`) and closed with the app (`close`)."""

    def __init__(self, settings: PoolSettings, tls: Callable[[], ssl.SSLContext]) -> None:
        self.settings = settings
        self._tls = tls
        self._free = asyncio.Semaphore(settings.size)
        self._idle: dict[tuple[Origin, Proxy | None], list[ProviderConnection]] = {}
        self._pool_key: dict[ProviderConnection, tuple[Origin, Proxy | None]] = {}
        self._idle_count = 0
        self._sweeper: asyncio.TimerHandle | None = None
        self._proxies = urllib.request.getproxies()
        self._routes: dict[str, tuple[CallTarget, Proxy | None]] = {}
        self._started = False

    async def start(self) -> None:
        self._started = True

    async def close(self) -> None:
        """Close every idle connection; one still in use closes when its answer is closed."""
        self._started = False
        for idle in list(self._idle.values()):
            for conn in list(idle):
                conn.abort()
        self._idle.clear()
        self._idle_count = 0
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None

    def proxy_for(self, url: str) -> str | None:
        """The environment's proxy for `url` (None: connect directly)."""
        parts = urlsplit(url)
        proxy = self._proxies.get(parts.scheme)
        if proxy and parts.hostname and urllib.request.proxy_bypass(parts.hostname):
            return None
        return proxy or None

    def _route(self, url: str) -> tuple[CallTarget, Proxy | None]:
        """Where `url` goes and through which proxy, worked out once per URL."""
        known = self._routes.get(url)
        if known is None:
            target = call_target(url)
            proxy_url = self.proxy_for(url)
            known = (target, proxy_at(proxy_url) if proxy_url else None)
            if len(self._routes) >= MAX_REMEMBERED_URLS:
                self._routes.clear()
            self._routes[url] = known
        return known

    async def send(
        self,
        method: str,
        url: str,
        body: bytes | None,
        headers: Mapping[str, str],
        sent: Callable[[], None] | None = None,
    ) -> UpstreamResponse:
        """Send a request; its answer with the body not yet read, holding a pooled connection
        until it is closed. `sent` runs each time the request is handed to a connection (a
        request sent again on a fresh connection runs it again). Raises PoolFull, CallFailed
        or TimeoutError."""
        if not self._started:
            raise RuntimeError("the upstream client is not started")
        if self._free.locked():  # only then is there anything to wait for
            try:
                await asyncio.wait_for(self._free.acquire(), self.settings.pool_wait_s)
            except TimeoutError:
                raise PoolFull from None
        else:
            await self._free.acquire()
        conn: ProviderConnection | None = None
        try:
            target, proxy = self._route(url)
            head = request_head(method, target, proxy, headers, body)
            key = (target.origin, proxy)
            conn = self._take(key)
            if conn is not None:
                try:
                    await conn.request(head, body, sent)
                except ServerDisconnected:  # the provider closed it as it was reused
                    if method not in IDEMPOTENT:
                        raise  # it may have acted on the request: never sent twice
                    conn.abort()
                    conn = None  # sent again once, on a fresh connection
            if conn is None:
                conn = await self._dial(key)
                await conn.request(head, body, sent)
        except BaseException:
            if conn is not None:
                conn.abort()
            self._free.release()
            raise
        return UpstreamResponse(conn, self._done)

    async def _dial(self, key: tuple[Origin, Proxy | None]) -> ProviderConnection:
        s = self.settings
        conn = await dial(key[0], key[1], self._tls, s.connect_timeout_s, s.read_timeout_s)
        self._pool_key[conn] = key
        conn.on_lost = self._lost
        return conn

    def _take(self, key: tuple[Origin, Proxy | None]) -> ProviderConnection | None:
        """An idle connection to `key`'s origin, the most recently used first (one idle
        longer than `keepalive_s` is closed instead)."""
        idle = self._idle.get(key)
        if not idle:
            return None
        oldest_kept = asyncio.get_running_loop().time() - self.settings.keepalive_s
        while idle:
            conn = idle.pop()
            self._idle_count -= 1
            if conn.reusable and conn.idle_since > oldest_kept:
                return conn
            conn.abort()
        return None

    def _done(self, conn: ProviderConnection) -> None:
        """An answer was closed: its connection is kept for the next call when it can carry
        one (and fewer than the pool's size are idle), else closed."""
        self._free.release()
        key = self._pool_key.get(conn)
        if key is None or not self._started or not conn.reusable or self._idle_count >= self.settings.size:
            conn.abort()
            return
        loop = asyncio.get_running_loop()
        conn.idle_since = loop.time()
        self._idle.setdefault(key, []).append(conn)
        self._idle_count += 1
        if self._sweeper is None:
            self._sweeper = loop.call_later(self.settings.keepalive_s, self._sweep)

    def _sweep(self) -> None:
        """Close the connections idle for `keepalive_s`; come back when the next one will
        have been (one timer for the whole pool, none per call)."""
        self._sweeper = None
        loop = asyncio.get_running_loop()
        oldest_kept = loop.time() - self.settings.keepalive_s
        next_due = None
        for idle in self._idle.values():
            while idle and idle[0].idle_since <= oldest_kept:  # oldest first
                stale = idle.pop(0)
                self._idle_count -= 1
                stale.abort()
            if idle and (next_due is None or idle[0].idle_since < next_due):
                next_due = idle[0].idle_since
        if next_due is not None:
            self._sweeper = loop.call_at(next_due + self.settings.keepalive_s, self._sweep)

    def _lost(self, conn: ProviderConnection) -> None:
        """A connection closed (by either side): forget it."""
        key = self._pool_key.pop(conn, None)
        idle = self._idle.get(key) if key is not None else None
        if idle and conn in idle:
            idle.remove(conn)
            self._idle_count -= 1


def request_head(
    method: str, target: CallTarget, proxy: Proxy | None, headers: Mapping[str, str], body: bytes | None
) -> bytes:
    """A request's head: `headers` (less what the client sets itself) after the Host line;
    a URL's credentials in place of any `authorization`; a plain request through a proxy in
    absolute form with the proxy's credentials. Raises InvalidHeader for a header that
    would break the head (a line break, a NUL, a name that is not a token)."""
    origin = target.origin
    path = target.path
    through_proxy = proxy is not None and not origin.tls
    if through_proxy:
        path = f"{origin.scheme}://{origin.authority}{path}"
    lines = [f"{method} {path} HTTP/1.1", f"host: {origin.authority}"]
    given = set()
    for name, value in headers.items():
        low = name.lower()
        if low in SET_BY_THE_CLIENT or (low == "authorization" and target.basic_auth):
            continue
        given.add(low)
        lines.append(f"{name}: {value}")
    bad = _unsendable(headers)
    if bad is not None:
        raise InvalidHeader(f"the header {bad[:40]!r} cannot be sent")
    if target.basic_auth:
        lines.append(f"authorization: {target.basic_auth}")
    if through_proxy and proxy is not None and proxy.authorization:
        lines.append(f"proxy-authorization: {proxy.authorization}")
    if "accept-encoding" not in given:
        lines.append(f"accept-encoding: {ACCEPTED_ENCODINGS}")
    if "user-agent" not in given:
        lines.append(f"user-agent: memroute/{package_version()}")
    if body is not None or method in ("POST", "PUT", "PATCH"):
        lines.append(f"content-length: {len(body or b'')}")
    lines.append("\r\n")
    return "\r\n".join(lines).encode()


def _unsendable(headers: Mapping[str, str]) -> str | None:
    """The name of the first header that would break a request's head (a name that is not
    a token, a value with a line break or a NUL), or None: one scan of them all when none does."""
    names, values = "".join(headers), "".join(headers.values())
    if all(headers) and not _NOT_IN_A_NAME.search(names) and not _NOT_IN_A_VALUE.search(values):
        return None
    return next(
        n for n, v in headers.items() if not n or _NOT_IN_A_NAME.search(n) or _NOT_IN_A_VALUE.search(v)
    )
