"""A bare asyncio relay, the floor of what relaying costs a Python process (see
bench/relay_floor.py): each client connection gets a connection to the upstream, and the
bytes pass through both ways. No HTTP parsing, no routing, no key, no memory. With
GATHER_MS above 0 it leaves the upstream unread for that long after each piece past the
second, as memroute does (`MEMROUTE_STREAM_GATHER_MS`). It imports nothing but asyncio, so
it starts at once.

    python -m bench.bare_relay PORT UPSTREAM_PORT [GATHER_MS]
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Sequence

HOST = "127.0.0.1"


class _ToClient(asyncio.Protocol):
    """The upstream side of one relayed connection: what arrives goes to the client."""

    def __init__(self, client: asyncio.Transport, gather_s: float) -> None:
        self.client = client
        self.gather_s = gather_s
        self.pieces = 0  # of the current answer
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.client.write(data)
        if data.endswith(b"0\r\n\r\n"):  # the end of a chunked answer
            self.pieces = 0
            return
        self.pieces += 1
        if self.gather_s and self.pieces > 2 and self.transport is not None:
            self.transport.pause_reading()
            asyncio.get_running_loop().call_later(self.gather_s, self._resume)

    def _resume(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self.client.close()


class _FromClient(asyncio.Protocol):
    """The client side of one relayed connection: what it sends goes upstream."""

    def __init__(self, upstream_port: int, gather_s: float) -> None:
        self.upstream_port = upstream_port
        self.gather_s = gather_s
        self.upstream: asyncio.Transport | None = None
        self.early: list[bytes] = []  # sent before the upstream connection was open

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        client: asyncio.Transport = transport  # type: ignore[assignment]
        asyncio.get_running_loop().create_task(self._open(client))

    async def _open(self, client: asyncio.Transport) -> None:
        loop = asyncio.get_running_loop()
        upstream, _ = await loop.create_connection(
            lambda: _ToClient(client, self.gather_s), HOST, self.upstream_port
        )
        self.upstream = upstream
        for data in self.early:
            upstream.write(data)
        self.early.clear()

    def data_received(self, data: bytes) -> None:
        if self.upstream is None:
            self.early.append(data)
        else:
            self.upstream.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.upstream is not None:
            self.upstream.close()


async def serve(port: int, upstream_port: int, gather_ms: float) -> None:
    """Relay connections to `port` to the upstream on `upstream_port`, until stopped."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _FromClient(upstream_port, gather_ms / 1000), HOST, port)
    async with server:
        await server.serve_forever()


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    port, upstream_port = int(args[0]), int(args[1])
    gather_ms = float(args[2]) if len(args) > 2 else 0.0
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(port, upstream_port, gather_ms))


if __name__ == "__main__":
    main()
