"""Where a call to a provider goes, and how a connection to it is opened: directly, over
TLS with the shared verifying context, or through an HTTP proxy (a plain request in
absolute form for `http://`, a CONNECT tunnel then TLS for `https://`)."""

from __future__ import annotations

import asyncio
import base64
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import SplitResult, unquote, urlsplit

from memroute.upstream.connection import ProviderConnection
from memroute.upstream.failures import (
    CallFailed,
    ConnectFailed,
    InvalidURL,
    ProxyFailed,
    TLSFailed,
    UnsupportedProtocol,
)

DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Origin:
    """A provider's scheme, host and port; `authority` is how the Host header names it."""

    scheme: str
    host: str
    port: int
    authority: str

    @property
    def tls(self) -> bool:
        return self.scheme == "https"


@dataclass(frozen=True, slots=True)
class CallTarget:
    """Where one URL's request goes: the origin, the request line's path (with its query),
    and the Basic auth a URL's credentials make (None without credentials)."""

    origin: Origin
    path: str
    basic_auth: str | None


def call_target(url: str) -> CallTarget:
    """Parse a provider's URL; raises UnsupportedProtocol or InvalidURL."""
    origin, parts = _origin(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    auth = None
    if parts.username is not None or parts.password is not None:
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        auth = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    return CallTarget(origin, path, auth)


def _origin(url: str) -> tuple[Origin, SplitResult]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidURL(str(exc)) from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise UnsupportedProtocol(f"{scheme or 'no'} scheme: only http and https are called")
    host = parts.hostname
    if not host:
        raise InvalidURL("it names no host")
    port = port or DEFAULT_PORTS[scheme]
    authority = f"[{host}]" if ":" in host else host
    if port != DEFAULT_PORTS[scheme]:
        authority += f":{port}"
    return Origin(scheme, host, port, authority), parts


@dataclass(frozen=True, slots=True)
class Proxy:
    """An HTTP proxy: its address, and the Proxy-Authorization its URL's credentials make."""

    origin: Origin
    authorization: str | None


def proxy_at(url: str) -> Proxy:
    """The proxy a URL from the environment names; raises ProxyFailed for one that cannot
    be used (only `http://` proxies are)."""
    try:
        target = call_target(url if "://" in url else f"http://{url}")
    except CallFailed as failure:
        raise ProxyFailed(f"the proxy's URL cannot be used ({failure.name})") from None
    if target.origin.tls:
        raise ProxyFailed("only http:// proxies are supported")
    return Proxy(target.origin, target.basic_auth)


async def dial(
    origin: Origin,
    proxy: Proxy | None,
    tls: Callable[[], ssl.SSLContext],
    connect_timeout_s: float,
    read_timeout_s: float,
) -> ProviderConnection:
    """A new connection to `origin` (through `proxy` when given), ready for requests; `tls`
    gives the TLS context, asked for only when `origin` speaks TLS. Raises ConnectFailed
    (TLSFailed, ProxyFailed), or TimeoutError after `connect_timeout_s`."""
    loop = asyncio.get_running_loop()

    def connection() -> ProviderConnection:
        return ProviderConnection(read_timeout_s)

    async with asyncio.timeout(connect_timeout_s):
        if proxy is None:
            try:
                if origin.tls:
                    _, conn = await loop.create_connection(
                        connection, origin.host, origin.port, ssl=tls(), server_hostname=origin.host
                    )
                else:
                    _, conn = await loop.create_connection(connection, origin.host, origin.port)
            except ssl.SSLError as exc:
                raise TLSFailed(str(exc)) from None
            except OSError as exc:
                raise ConnectFailed(str(exc)) from None
            return conn
        try:
            _, conn = await loop.create_connection(connection, proxy.origin.host, proxy.origin.port)
        except OSError as exc:
            raise ProxyFailed(str(exc)) from None
        if origin.tls:
            await _tunnel(conn, origin, proxy, tls())
        return conn


async def _tunnel(conn: ProviderConnection, origin: Origin, proxy: Proxy, tls: ssl.SSLContext) -> None:
    """Turn a connection to the proxy into a TLS connection to `origin` through it."""
    host = f"[{origin.host}]" if ":" in origin.host else origin.host
    address = f"{host}:{origin.port}"
    head = f"CONNECT {address} HTTP/1.1\r\nhost: {address}\r\n"
    if proxy.authorization:
        head += f"proxy-authorization: {proxy.authorization}\r\n"
    try:
        await conn.open_tunnel(head.encode() + b"\r\n")
        assert conn.transport is not None
        transport = await asyncio.get_running_loop().start_tls(
            conn.transport, conn, tls, server_hostname=origin.host
        )
    except ssl.SSLError as exc:
        conn.abort()
        raise TLSFailed(str(exc)) from None
    except OSError as exc:
        conn.abort()
        raise ProxyFailed(str(exc)) from None
    except BaseException:
        conn.abort()
        raise
    if transport is None:
        raise ProxyFailed("the tunnel closed during the TLS handshake")
    conn.transport = transport
