"""Real HTTP servers for tests: any ASGI app under uvicorn on a free 127.0.0.1 port,
and a scripted upstream that stands in for a paid LLM provider."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import httpx
import postgres
import wire_formats
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from memroute.upstream.tls import tls_context
from memroute.web.server import build_server
from memroute.web.server_limits import ServerLimits, open_files_limit

if TYPE_CHECKING:
    from memroute import Memory

ADMIN = "admin-test-token-for-memroute-tests"
AUTH = {"Authorization": f"Bearer {ADMIN}"}
# For the tests' own httpx clients (`verify=TLS`): they speak plain HTTP to 127.0.0.1, and
# each client httpx makes without one loads the CA bundle again (~20 ms of CPU).
TLS = tls_context()
JSON_LINES = {"Content-Type": "application/x-ndjson"}  # the import route's body type
# The first message of a raw MCP client over streamable HTTP (JSON-RPC).
MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


def app_server(db: Path, *, memory: Memory | None = None, **env: str) -> LiveServer:
    """memroute's app on `db` (or on `memory`, a `Memory` the test holds) under uvicorn, with
    the admin token ADMIN unless `env` names another."""
    from memroute.config import Config
    from memroute.web.app import create_app

    config = Config.for_path(db, environ={"MEMROUTE_ADMIN_TOKEN": ADMIN, **env})
    config = config.with_overrides(database_url=postgres.url_for(db))
    return LiveServer(create_app(config, memory=memory))


@contextmanager
def management_api(
    db: Path, *, on_response: Callable[[httpx.Response], None] | None = None, **env: str
) -> Iterator[httpx.Client]:
    """memroute's app on `db` under uvicorn, and an httpx client holding the admin token
    (`on_response` sees every response the client gets)."""
    hooks = {"response": [on_response]} if on_response else {}
    with (
        app_server(db, **env) as server,
        httpx.Client(base_url=server.url, headers=AUTH, timeout=30, event_hooks=hooks, verify=TLS) as client,
    ):
        yield client


def wait_until(check: Callable[[], object], timeout: float = 10.0, interval: float = 0.02) -> None:
    """Return once `check()` is true; AssertionError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(interval)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """Runs `app` under uvicorn in a thread the way `memroute serve` does (memroute's
    guarded connections, with the limits of the app's Config or `limits`), on a socket
    bound here to a free 127.0.0.1 port (so parallel test workers never race for one);
    `url` is its base URL."""

    def __init__(self, app: Any, limits: ServerLimits | None = None) -> None:
        # IPPROTO_TCP named, as `memroute serve`'s own sockets have it: asyncio turns Nagle
        # off (TCP_NODELAY) only on sockets whose protocol says TCP, and a plain
        # `socket.socket()` says 0. With Nagle on, an answer's body waited for the client's
        # delayed ACK of its head: 40 ms per request on a kept-alive connection.
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.socket.bind(("127.0.0.1", 0))
        self.port = int(self.socket.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self._started = threading.Event()
        self.server = build_server(
            app,
            limits or ServerLimits.of_app(app),
            port=self.port,
            open_files=open_files_limit(),
            on_started=self._started.set,
        )
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self._started.wait(0.05):
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()
        self.thread.join(30)
        self.socket.close()


@dataclass
class Scripted:
    """What the upstream answers next: a text reply (JSON or SSE per the request's
    `stream`), or an error status with a body."""

    text: str = "OK"
    status: int = 200
    body: Any = None
    chunk_delay: float = 0.0
    delay: float = 0.0  # before answering at all
    raw: list[bytes] | None = None  # a stream of exactly these chunks (garbage, cut short, …)


@dataclass
class ScriptedUpstream:
    """An OpenAI-compatible provider double that records every request it receives."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    script: deque[Scripted] = field(default_factory=deque)
    default_echo: bool = True

    def reply(self, text: str, *, chunk_delay: float = 0.0) -> None:
        self.script.append(Scripted(text=text, chunk_delay=chunk_delay))

    def fail(self, status: int, body: Any) -> None:
        self.script.append(Scripted(status=status, body=body))

    def raw_stream(self, *chunks: bytes) -> None:
        """Answer the next streamed request with exactly these bytes."""
        self.script.append(Scripted(raw=list(chunks)))

    def stall(self, seconds: float) -> None:
        self.script.append(Scripted(text="late", delay=seconds))

    @property
    def last(self) -> dict[str, Any]:
        return self.requests[-1]

    def _next(self, body: dict[str, Any], said: str | None = None) -> Scripted:
        """The next scripted step; unscripted, an echo of `said` (by default the last user
        message's string content)."""
        if self.script:
            return self.script.popleft()
        if said is None:
            messages = body.get("messages") or []
            last_user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
            content = last_user.get("content")
            said = content if isinstance(content, str) else None
        return Scripted(text=said if said and self.default_echo else "OK")

    async def _formatted(self, request: Request, said, whole, events) -> Response:  # type: ignore[no-untyped-def]
        """An answer in a wire format: `said(body)` is echoed (None: the last user message's
        string content), `whole(body, text)` is the answer, `events(body, text)` its stream,
        paced by the step's `chunk_delay`."""
        body = await request.json()
        self.requests.append({"body": body, "headers": dict(request.headers), "path": request.url.path})
        step = self._next(body, said(body))
        if step.delay:
            await asyncio.sleep(step.delay)
        if step.status != 200:
            return JSONResponse(step.body, status_code=step.status)
        if step.raw is not None:
            return StreamingResponse(_chunks(step.raw), media_type="text/event-stream")
        if body.get("stream"):
            paced = _paced(events(body, step.text), step.chunk_delay)
            return StreamingResponse(paced, media_type="text/event-stream")
        return JSONResponse(whole(body, step.text))

    async def responses(self, request: Request) -> Response:
        return await self._formatted(
            request, wire_formats.responses_user_text, wire_formats.response, wire_formats.response_events
        )

    async def messages(self, request: Request) -> Response:
        return await self._formatted(
            request, wire_formats.messages_user_text, wire_formats.message, wire_formats.message_events
        )

    async def count_tokens(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append({"body": body, "headers": dict(request.headers), "path": request.url.path})
        return JSONResponse({"input_tokens": len(json.dumps(body.get("messages")).split())})

    async def chat(self, request: Request) -> Response:
        return await self._formatted(request, lambda body: None, completion, _completion_events)

    async def models(self, request: Request) -> Response:
        self.requests.append({"body": None, "headers": dict(request.headers), "path": request.url.path})
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": "echo-1", "object": "model", "created": 0, "owned_by": "test"}],
            }
        )

    async def embeddings(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append({"body": body, "headers": dict(request.headers), "path": request.url.path})
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [{"object": "embedding", "index": i, "embedding": [0.1, 0.2, 0.3]} for i in range(len(inputs))]
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        )

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
                Route("/v1/embeddings", self.embeddings, methods=["POST"]),
                Route("/v1/responses", self.responses, methods=["POST"]),
                Route("/v1/messages", self.messages, methods=["POST"]),
                Route("/v1/messages/count_tokens", self.count_tokens, methods=["POST"]),
            ]
        )


def completion(body: dict[str, Any], text: str) -> dict[str, Any]:
    """A chat completion that says `text`, for the model `body` asked for."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


async def _chunks(chunks: list[bytes]):  # type: ignore[no-untyped-def]
    for chunk in chunks:
        yield chunk


def completion_events(body: dict[str, Any], text: str) -> list[bytes]:
    """A streamed chat completion's SSE events: one chunk per word, a final chunk, `[DONE]`."""
    events = []
    for index, word in enumerate(text.split(" ")):
        chunk = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": body.get("model"),
            "choices": [
                {"index": 0, "delta": {"content": word if index == 0 else " " + word}, "finish_reason": None}
            ],
        }
        events.append(f"data: {json.dumps(chunk)}\n\n".encode())
    final = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body.get("model"),
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }
    return [*events, f"data: {json.dumps(final)}\n\n".encode(), b"data: [DONE]\n\n"]


async def _completion_events(body: dict[str, Any], text: str):  # type: ignore[no-untyped-def]
    for event in completion_events(body, text):
        yield event


async def _paced(events, delay: float):  # type: ignore[no-untyped-def]
    """`events` (an async iterator of bytes), `delay` seconds after each."""
    async for event in events:
        yield event
        if delay:
            await asyncio.sleep(delay)


class ThreadPerConnection:
    """A TCP server on a free 127.0.0.1 port that serves each connection in a thread of its
    own (`serve_connection`); `with` starts it and stops accepting."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen()
        self.port = int(self._sock.getsockname()[1])
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() below (a close alone does not)
        self._sock.close()
        self._thread.join(5)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:  # shut down by __exit__
                return
            threading.Thread(target=self.serve_connection, args=(conn,), daemon=True).start()

    def serve_connection(self, conn: socket.socket) -> None:
        raise NotImplementedError


class RawUpstream(ThreadPerConnection):
    """A provider at the TCP level, for answers no HTTP framework would send: it reads each
    request, writes exactly `reply` (nothing at all by default), then `trickle` one byte
    every `every` seconds, and hangs up; with `hold` it keeps the connection open until the
    client closes it. `closed_by_client` counts the connections the client closed first."""

    def __init__(
        self, reply: bytes = b"", *, trickle: bytes = b"", every: float = 0.05, hold: bool = False
    ) -> None:
        super().__init__()
        self.reply = reply
        self.trickle = trickle
        self.every = every
        self.hold = hold
        self.requests = 0
        self.closed_by_client = 0
        self._lock = threading.Lock()
        self.url = f"http://127.0.0.1:{self.port}"

    def serve_connection(self, conn: socket.socket) -> None:
        with conn:
            read_request(conn)
            with self._lock:
                self.requests += 1
            try:
                conn.sendall(self.reply)
                for index in range(len(self.trickle)):
                    time.sleep(self.every)
                    conn.sendall(self.trickle[index : index + 1])
                if self.hold and not conn.recv(1):
                    raise ConnectionResetError  # the client closed the connection
            except OSError:
                with self._lock:
                    self.closed_by_client += 1


def read_request(conn: socket.socket, rest: bytes = b"") -> tuple[bytes, bytes, bytes] | None:
    """One request from `conn` (after `rest`, bytes already read): its head, its body (by
    content-length) and what came after it; None when the peer closed first."""
    data = rest
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        body += chunk
    return head, body[:length], body[length:]
