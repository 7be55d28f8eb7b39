"""One HTTP/1.1 connection to a provider, read with httptools' C parser: one request at a
time, its answer's body handed out as it arrives (decoded when compressed), and kept open
for the next request when the answer ended cleanly.

Every wait (for the head, for the next piece of the body, for a full send buffer to
drain) may last at most the read timeout, watched by one timer per connection that is
re-armed only when it fires (a timer per wait would cost a stream one per piece).
Reading stops while more than `HIGH_WATER` bytes arrived unread, so a provider cannot
fill memory faster than the gateway relays."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping

import httptools

from memroute.upstream.decoding import BodyDecoder, decoder_for
from memroute.upstream.failures import (
    CallFailed,
    IncompleteAnswer,
    InvalidAnswer,
    ProxyFailed,
    ReadFailed,
    ServerDisconnected,
)

HIGH_WATER = 256 * 1024  # bytes of body arrived unread before reading stops
MAX_TUNNEL_HEAD = 16 * 1024  # the most a proxy's answer to CONNECT may hold


class AnswerHeaders(Mapping[str, str]):
    """An answer's headers, looked up by name in any case. A header sent more than once
    has its values joined with `, `."""

    __slots__ = ("_by_name",)

    def __init__(self) -> None:
        self._by_name: dict[str, str] = {}

    def add(self, name: str, value: str) -> None:
        name = name.lower()
        before = self._by_name.get(name)
        self._by_name[name] = value if before is None else f"{before}, {value}"

    def __getitem__(self, name: str) -> str:
        return self._by_name[name.lower()]

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return self._by_name.get(name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._by_name

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)


class ProviderConnection(asyncio.Protocol):
    """A connection to one provider (see the module's docstring). `on_lost` runs when it
    closes, for the pool that may hold it idle."""

    def __init__(self, read_timeout_s: float) -> None:
        self.read_timeout_s = read_timeout_s
        self.transport: asyncio.Transport | None = None
        self.on_lost: Callable[[ProviderConnection], None] | None = None
        self.idle_since = 0.0  # when it was last put back in the pool (loop time)
        self._loop = asyncio.get_running_loop()
        self._waiter: asyncio.Future[None] | None = None
        self._wait_began = 0.0
        self._watchdog: asyncio.TimerHandle | None = None
        self._write_paused = False
        self._tunnel: bytearray | None = None  # a proxy's answer to CONNECT, while awaited
        self._start_answer()

    def _start_answer(self) -> None:
        self._parser = httptools.HttpResponseParser(self)
        self.status_code = 0
        self.headers = AnswerHeaders()
        self.head_done = False
        self.complete = False  # the whole answer arrived (or the connection was closed by us)
        self.keep_alive = False
        self._framed = False  # its length is known (content-length or chunked)
        self._decoder: BodyDecoder | None = None
        self._pieces: list[bytes] = []
        self._unread = 0
        self._got_any = False
        self._failure: CallFailed | None = None
        self._full = False  # reading stopped: too much arrived unread
        self._held = False  # reading stopped: the reader gathers pieces

    # -- the request -----------------------------------------------------------------------

    @property
    def reusable(self) -> bool:
        """It can carry another request: the last answer ended cleanly and allows it."""
        transport = self.transport
        return (
            self.complete
            and self.keep_alive
            and self._failure is None
            and transport is not None
            and not transport.is_closing()
        )

    async def request(self, head: bytes, body: bytes | None, sent: Callable[[], None] | None = None) -> None:
        """Send a request and wait for its answer's head (`status_code`, `headers`); `sent`
        runs once the request is handed to the connection, while the provider works on it."""
        if self.complete:  # a kept-alive connection's next answer
            self._start_answer()
        transport = self.transport
        if transport is None or transport.is_closing():
            raise ServerDisconnected("the connection was closed before the request was sent")
        transport.write(head + body if body else head)
        if sent is not None:
            sent()
        if self._write_paused:
            await self._wait()
        while not self.head_done:
            if self.complete:
                raise ServerDisconnected("the connection was closed before the answer came")
            await self._wait()

    async def read(self) -> bytes:
        """What of the body arrived since the last read, in one piece (b"" at its end)."""
        while not self._pieces:
            if self.complete:
                return b""
            await self._wait()
        pieces, self._pieces, self._unread = self._pieces, [], 0
        if self._full:
            self._full = False
            self._resume()
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    async def hold(self, seconds: float) -> None:
        """Leave the connection unread for `seconds` (the kernel keeps what arrives)."""
        transport = self.transport
        if transport is None or self.complete or transport.is_closing():
            return
        self._held = True
        transport.pause_reading()
        try:
            await asyncio.sleep(seconds)
        finally:
            self._held = False
            self._resume()

    def abort(self) -> None:
        """Close the connection now; a read waiting for it ends as at the answer's end."""
        if not self.complete:
            self.complete = True
            self.keep_alive = False
        self._wake()
        if self.transport is not None:
            self.transport.close()

    async def _wait(self) -> None:
        """Wait for the connection's next event, at most the read timeout; a failure that
        ended the answer is raised."""
        if self._failure is not None:
            raise self._failure
        loop = self._loop
        self._wait_began = loop.time()
        if self._watchdog is None:
            self._watchdog = loop.call_at(self._wait_began + self.read_timeout_s, self._watch)
        waiter = self._waiter = loop.create_future()
        try:
            await waiter
        finally:
            self._waiter = None
        if self._failure is not None:
            raise self._failure

    def _watch(self) -> None:
        """The read timeout's one timer: it times out a wait that began a read timeout ago,
        and else sleeps until the current wait's deadline (none while nothing waits). So a
        stream's pieces arm no timer of their own."""
        self._watchdog = None
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        deadline = self._wait_began + self.read_timeout_s
        if self._loop.time() >= deadline:
            waiter.set_exception(TimeoutError("the provider sent nothing for the read timeout"))
        else:
            self._watchdog = self._loop.call_at(deadline, self._watch)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _resume(self) -> None:
        transport = self.transport
        if not (self._full or self._held) and transport is not None and not transport.is_closing():
            transport.resume_reading()

    def _fail(self, failure: CallFailed) -> None:
        if self._failure is None and not self.complete:
            self._failure = failure
        self._wake()

    # -- a proxy's tunnel ------------------------------------------------------------------

    async def open_tunnel(self, head: bytes) -> None:
        """Send a CONNECT request to the proxy this connects to; return once it answered
        200 (then the connection carries the provider's bytes), else raise ProxyFailed."""
        self._tunnel = bytearray()
        assert self.transport is not None
        self.transport.write(head)
        try:
            while self._tunnel is not None and b"\r\n\r\n" not in self._tunnel:
                await self._wait()
        except CallFailed as failure:
            raise ProxyFailed(f"the proxy did not open a tunnel ({failure.name})") from None
        answer = bytes(self._tunnel or b"")
        self._tunnel = None
        status = answer.split(b"\r\n", 1)[0].split(b" ")
        if len(status) < 2 or status[1] != b"200":
            raise ProxyFailed(f"the proxy answered {b' '.join(status[1:]).decode('latin-1')!r} to CONNECT")
        if not answer.endswith(b"\r\n\r\n"):
            raise ProxyFailed("the proxy sent bytes past its answer to CONNECT")

    # -- asyncio.Protocol ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._tunnel is not None:
            self._tunnel += data
            if len(self._tunnel) > MAX_TUNNEL_HEAD:
                self._tunnel = None
                self._fail(ProxyFailed("the proxy's answer to CONNECT is too long"))
            self._wake()
            return
        if self.complete:  # bytes nobody asked for: the connection cannot be trusted again
            self.keep_alive = False
            if self.transport is not None:
                self.transport.close()
            return
        self._got_any = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(InvalidAnswer("the provider switched protocols"))
        except httptools.HttpParserError as exc:
            self._fail(InvalidAnswer(f"the answer is not valid HTTP ({exc})"))
        except CallFailed as failure:  # its body could not be decoded
            self._fail(failure)
        if self._failure is not None and self.transport is not None:
            self.transport.close()

    def eof_received(self) -> bool:
        if self.head_done and not self.complete and not self._framed:
            self._end_body()  # a body that ends where the connection does
        self._lost(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost(exc)
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self.on_lost is not None:
            self.on_lost(self)

    def _lost(self, exc: Exception | None) -> None:
        if self.complete:
            self.keep_alive = False
            return
        if self._tunnel is not None:
            self._fail(ProxyFailed("the proxy closed the connection"))
        elif exc is not None:
            self._fail(ReadFailed(f"{type(exc).__name__}: {exc}"))
        elif self._got_any:
            self._fail(IncompleteAnswer("the provider closed the connection in the middle of its answer"))
        else:
            self._fail(ServerDisconnected("the provider closed the connection without answering"))

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        self._wake()

    # -- httptools' callbacks --------------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.add(name.decode("latin-1"), value.decode("latin-1"))

    def on_headers_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200:  # an interim answer (e.g. 103 Early Hints): the real one follows
            self.headers = AnswerHeaders()
            return
        self.status_code = status
        headers = self.headers._by_name
        self._framed = "content-length" in headers or "chunked" in headers.get("transfer-encoding", "")
        self._decoder = decoder_for(headers.get("content-encoding"))
        self.head_done = True
        self._wake()

    def on_body(self, body: bytes) -> None:
        if self._decoder is None:
            self._keep(body)
        else:
            for piece in self._decoder.decode(body):
                self._keep(piece)

    def _keep(self, piece: bytes) -> None:
        self._pieces.append(piece)
        self._unread += len(piece)
        if self._unread > HIGH_WATER and not self._full and self.transport is not None:
            self._full = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if not self.head_done:
            return  # the end of an interim answer
        self.keep_alive = self._parser.should_keep_alive()
        self._end_body()

    def _end_body(self) -> None:
        self.complete = True
        self._wake()
