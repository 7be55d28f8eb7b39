"""The gateway's pooled connections to providers, on aiohttp (its C parser costs a quarter
of the CPU per call that httpx's pure-Python stack did).

A call waits at most `pool_wait_s` for a free pooled connection (then `PoolFull`, never a
queue); each read may pause at most `read_timeout_s`, a new connection take at most
`connect_timeout_s`; an idle pooled connection is dropped after `keepalive_s`. Redirects
are never followed, and cookies a provider sets are never kept (one client's call must not
carry them into another's). Proxies come from the environment (HTTP_PROXY, HTTPS_PROXY,
NO_PROXY), read once per provider address. A base URL with credentials
(`https://user:pass@host/v1`) sends them as Basic auth, in place of the provider's key."""

from __future__ import annotations

import asyncio
import ssl
import urllib.request
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
from yarl import URL

MAX_REMEMBERED_ORIGINS = 256  # providers' addresses whose proxy decision is kept


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

    __slots__ = ("_free", "_response")

    def __init__(self, response: aiohttp.ClientResponse, free: Callable[[], None]) -> None:
        self._response = response
        self._free: Callable[[], None] | None = free

    @property
    def status_code(self) -> int:
        return self._response.status

    @property
    def headers(self) -> Mapping[str, str]:
        """Its headers, looked up by name in any case."""
        return self._response.headers

    async def chunks(self, gather_s: float = 0.0) -> AsyncIterator[bytes]:
        """The body as it arrives: what has arrived each time, in one piece. With
        `gather_s`, once pieces come less than `gather_s` apart (a fast provider's tokens),
        the connection is left unread until `gather_s` after the last piece was handed
        out, and what arrived meanwhile comes as one piece: fewer wake-ups and writes, each
        piece at most `gather_s` late. Pieces that come slower, and the first two (the
        first may have come with the head, so it tells nothing of the pace), are handed
        out at once."""
        content = self._response.content
        loop = asyncio.get_running_loop()
        first, hold = True, False
        while True:
            if hold and not content.is_eof():  # the end, once here, is handed out at once
                await self._unread_for(gather_s)
            asked = loop.time()
            chunk = await content.readany()
            if not chunk:
                return
            hold = not first and gather_s > 0 and loop.time() - asked < gather_s
            first = False
            yield chunk

    async def _unread_for(self, seconds: float) -> None:
        """Leave the connection unread for `seconds` (the kernel keeps what arrives)."""
        connection = self._response.connection
        transport = connection.transport if connection is not None else None
        if transport is None or not transport.is_reading():
            return  # the body is all here, or aiohttp holds the connection back itself
        transport.pause_reading()
        try:
            await asyncio.sleep(seconds)
        finally:
            if not transport.is_closing():
                transport.resume_reading()

    def close(self) -> None:
        """Done with it (again: nothing). Its connection goes back to the pool when the body
        was read to its end, else it is closed, and a read still waiting ends."""
        free, self._free = self._free, None
        if free is None:
            return
        if self._response.content.at_eof():
            self._response.release()
        else:  # a connection with part of an answer unread cannot serve another call
            self._response.close()
        free()


class UpstreamClient:
    """One pool of connections to providers per process, opened inside the event loop
    (`start`) and closed with the app (`close`)."""

    def __init__(self, settings: PoolSettings, tls: ssl.SSLContext) -> None:
        self.settings = settings
        self._tls = tls
        self._free = asyncio.Semaphore(settings.size)
        self._session: aiohttp.ClientSession | None = None
        self._proxies = urllib.request.getproxies()
        self._proxy_of: dict[str, str | None] = {}

    async def start(self) -> None:
        s = self.settings
        connector = aiohttp.TCPConnector(limit=s.size, keepalive_timeout=s.keepalive_s, ssl=self._tls)
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=s.connect_timeout_s, sock_read=s.read_timeout_s
        )
        # trust_env would look the proxy and ~/.netrc up again in a thread for every call.
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=timeout, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False
        )

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    def proxy_for(self, url: str) -> str | None:
        """The environment's proxy for `url` (None: connect directly), worked out once per
        scheme and host."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._proxy_of:
            proxy = self._proxies.get(parts.scheme)
            if proxy and parts.hostname and urllib.request.proxy_bypass(parts.hostname):
                proxy = None
            if len(self._proxy_of) >= MAX_REMEMBERED_ORIGINS:
                self._proxy_of.clear()
            self._proxy_of[origin] = proxy or None
        return self._proxy_of[origin]

    async def send(
        self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]
    ) -> UpstreamResponse:
        """Send a request; its answer with the body not yet read, holding a pooled connection
        until it is closed. Raises PoolFull, or aiohttp's errors (`aiohttp.ClientError`,
        `TimeoutError`)."""
        if self._session is None:
            raise RuntimeError("the upstream client is not started")
        if self._free.locked():  # only then is there anything to wait for
            try:
                await asyncio.wait_for(self._free.acquire(), self.settings.pool_wait_s)
            except TimeoutError:
                raise PoolFull from None
        else:
            await self._free.acquire()
        sent = dict(headers)
        if "@" in url:
            parsed = URL(url)
            if parsed.user or parsed.password:
                sent.pop("authorization", None)  # the URL's credentials are the provider's (Basic auth)
        try:
            response = await self._session.request(
                method, url, data=body, headers=sent, allow_redirects=False, proxy=self.proxy_for(url)
            )
        except BaseException:
            self._free.release()
            raise
        return UpstreamResponse(response, self._free.release)
