"""The chat pipeline, one for every wire format (`memroute/gateway/formats/`: chat
completions, responses, messages):

authenticate → check the body → owner (the key, or its end user; none with the
no-memory header, or when the key requires an end user and none is named) → settings
gate → query = last user text → retrieve (leaving out what the request already holds) → inject →
queue the user's last message for learning → forward → relay the answer as it
arrives → (with `captureTurns` all, queue the exchange with its reply, before the
response completes) → count the use of the injected memories (after it). Every answer
carries the request's id (`x-request-id`: the client's, else a new one), which is what
learned memories cite. Admission runs in a pool of threads (`MEMROUTE_CHAT_THREADS`),
which take turns through their Python work (`MEMROUTE_CHAT_SERIAL`, `memroute/baton.py`);
on a local store (SQLite) one that only reads what the process holds and writes only
briefly runs on the event loop (see `ChatPipeline.admit`).

Memory never breaks a chat: any memory failure is logged and the request goes
on without memory.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from memroute.baton import Baton
from memroute.errors import InvalidInput, Unauthorized, WouldBlock
from memroute.gateway.body_json import encoded, loads_or_none, parse_body
from memroute.gateway.due_turn import DueTurn
from memroute.gateway.formats import WireFormat
from memroute.gateway.guard import ClientGone
from memroute.gateway.limits import GatewayLimiter
from memroute.gateway.relay import OpenStream, RelayResponse, UpstreamBounds, fetch_once, open_streamed
from memroute.gateway.sse import ReplyAssembler
from memroute.gateway.threads import CHAT_THREAD_PREFIX
from memroute.masking import url_for_logs
from memroute.memory import validate
from memroute.memory.settings import MemorySettings
from memroute.models.owners import owner_of
from memroute.models.records import ApiKey, RetrievedItem
from memroute.service import Memory
from memroute.service.turn_queue import ChatTurn
from memroute.upstream.client import UpstreamClient, UpstreamResponse
from memroute.upstream.http import CALL_ERRORS, failure_name
from memroute.upstream.route import Route

log = logging.getLogger("memroute.gateway")
T = TypeVar("T")

NO_MEMORY_HEADERS = ("x-memroute-no-memory", "x-omniroute-no-memory")
USER_HEADER = "x-memroute-user-id"
SKIPPED_HEADER = "x-memroute-memory-skipped"  # why a request got no memory, when memroute decided it
SESSION_HEADERS = ("x-memroute-session-id", "x-omniroute-session-id")
DEBUG_HEADER = "x-memroute-debug"
REQUEST_ID_HEADER = "x-request-id"
# A client's request id is kept when it is short and plain; otherwise memroute makes one.
_CLIENT_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
ADMIN_TOKEN_IS_NO_CLIENT_KEY = (
    "this is the admin token, which opens the dashboard and /api/*, not the gateway: send a client key "
    "(create one with `memroute keys create NAME` or on the dashboard's API keys page)"
)
# Answers up to this long are parsed on the event loop, and so are bodies admitted there.
INLINE_PARSE_BYTES = 64 * 1024
_PASSED_RESPONSE_HEADERS = ("content-type", "openai-processing-ms", "retry-after")
UPSTREAM_REQUEST_ID_HEADER = "x-upstream-request-id"  # the provider's own x-request-id


def header_truthy(headers: Mapping[str, str], names: tuple[str, ...]) -> bool:
    return any(headers.get(name, "").strip().lower() in ("true", "1", "yes") for name in names)


def request_id(headers: Mapping[str, str]) -> str:
    """The client's `x-request-id` when it is ≤ 128 characters of [A-Za-z0-9._:-], else a new id."""
    given = headers.get(REQUEST_ID_HEADER, "").strip()
    return given if _CLIENT_REQUEST_ID.fullmatch(given) else f"req_{uuid.uuid4().hex}"


def end_user(headers: Mapping[str, str], named: object) -> str:
    """The end user of a request: the `x-memroute-user-id` header (a bad one is a 400), else
    the id the body names in its format's field (`named`; one that is no valid id, too
    long or with control characters, stands for its digest, so each value is still one
    user); "" for none."""
    header = headers.get(USER_HEADER)
    if header is not None and header.strip():
        return validate.end_user(header, USER_HEADER)
    if not isinstance(named, str) or not named.strip():
        return ""
    try:
        return validate.end_user(named)
    except InvalidInput:
        return "sha256:" + hashlib.sha256(named.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def headers_of(scope: Scope) -> dict[str, str]:
    """A request's headers by (lower-case) name, a repeated one's first value as Starlette's
    `Headers` gives it, decoded once: an admission looks up a dozen of them."""
    found: dict[str, str] = {}
    for name, value in reversed(scope["headers"]):
        found[name.decode("latin-1")] = value.decode("latin-1")
    return found


def first_header(headers: Mapping[str, str], names: tuple[str, ...]) -> str:
    for name in names:
        value = headers.get(name, "").strip()
        if value:
            return value
    return ""


@dataclass(frozen=True, slots=True)
class Injected:
    """What the answer says and the counters count of the memories injected into a request:
    summed up in the admission thread, where they were just recalled. The recalled items
    are not kept: touched again after the provider's answer, at 64 clients, they had left
    the CPU's caches and cost the event loop more to read and to free."""

    ids: tuple[str, ...] = ()
    tokens: int = 0
    details: str = ""  # with the debug header: each one's id, tier and score

    @classmethod
    def of(cls, items: list[RetrievedItem], debug: bool) -> Injected:
        details = ",".join(f"{i.memory.id};tier={i.tier};score={i.score:.4g}" for i in items) if debug else ""
        return cls(tuple(i.memory.id for i in items), sum(i.tokens for i in items), details)


NOTHING_INJECTED = Injected()


@dataclass
class ChatContext:
    """What one request knows about memory."""

    owner: str | None
    session_id: str
    request_id: str = ""
    debug: bool = False  # the answer lists the memories injected (`x-memroute-debug`)
    settings: MemorySettings | None = None  # read once, when memory is on for the request
    injected: Injected = NOTHING_INJECTED
    turn: tuple[str, str] = ("", "")  # the last user turn's text and speaker
    skipped: str = ""  # why memory is off for this request, when the answer should say so

    @property
    def wants_reply(self) -> bool:
        """Whether the assistant's reply is learned from (kept as its episode: `captureTurns`
        all); only then is it read out of the provider's answer."""
        return self.owner is not None and self.settings is not None and self.settings.keeps_replies

    def headers(self) -> dict[str, str]:
        """The memory headers of the answer; with the debug header, which memories were
        injected, and each one's tier and score."""
        injected = self.injected
        out = {
            REQUEST_ID_HEADER: self.request_id,
            "x-memroute-memory-count": str(len(injected.ids)),
            "x-memroute-memory-tokens": str(injected.tokens),
        }
        if self.skipped:
            out[SKIPPED_HEADER] = self.skipped
        if self.debug:
            out["x-memroute-memory-ids"] = ",".join(injected.ids)
            out["x-memroute-memory-details"] = injected.details
        return out


class GatewayMetrics(Protocol):
    """Where the gateway counts requests, injections and memory failures."""

    def inc(self, name: str, amount: float = 1.0, **labels: str) -> None: ...

    def observe(self, name: str, seconds: float) -> None: ...


@dataclass(frozen=True, slots=True)
class Admitted:
    """A chat request ready to go upstream: its key, memory context, whether the client
    asked for a stream, the route, the outgoing body (JSON bytes), its wire format and the
    client headers passed on, and whether the user's turn is still to be queued (once the
    request is on its way, see `DueTurn`)."""

    key: ApiKey | None
    ctx: ChatContext
    stream: bool
    route: Route
    payload: bytes
    fmt: WireFormat
    headers: dict[str, str]
    turn_due: bool = False


class NeedsThread(Exception):
    """An admission on the event loop would wait or work long: it is done in a thread instead."""


class ChatPipeline:
    """The chat request path. The caller gives it how a request names its client key
    (`client_secret`), how to recognise the admin token (`is_admin_token`, for a hint when
    it is sent as a client key), where to count (`metrics`), the limits of upstream calls
    (`limiter`), the bounds of an answer (`bounds`), the most messages a chat may hold and
    how many threads admit chats (`threads`), and whether the store's reads never wait
    (`local_reads`, SQLite): then an admission that reads only what the process holds
    and writes only briefly (`Store.briefly`) runs on the event loop, sparing the trip to
    a thread and back (see `admit`)."""

    def __init__(
        self,
        memory: Memory,
        client: UpstreamClient,
        metrics: GatewayMetrics,
        require_api_key: bool,
        client_secret: Callable[[Request], str | None],
        is_admin_token: Callable[[str], bool],
        *,
        limiter: GatewayLimiter,
        bounds: UpstreamBounds,
        max_messages: int,
        threads: int = 32,
        serial: bool = True,
        local_reads: bool = False,
    ):
        self.memory = memory
        self.client = client
        self.metrics = metrics
        self.require_api_key = require_api_key
        self.client_secret = client_secret
        self.is_admin_token = is_admin_token
        self.limiter = limiter
        self.bounds = bounds
        self.max_messages = max_messages
        # More threads than one key may have chats (MEMROUTE_KEY_MAX_CONCURRENT, 16) keep a key
        # whose admissions are slow (huge bodies, a slow embedding provider) from holding
        # them all; fewer fight less over the interpreter (see docs/usage.md).
        self._threads = ThreadPoolExecutor(threads, thread_name_prefix=CHAT_THREAD_PREFIX)
        # With `serial`, the threads run their Python one at a time (they no longer fight over
        # the interpreter), stepping out for waits outside Python (see memroute/baton.py).
        self._baton = Baton() if serial else None
        self.local_reads = local_reads
        # Whether the settings the last admission read let a chat be admitted on the event
        # loop (not when recall searches vectors): else the next goes to a thread at once.
        self._loop_admits = True

    async def in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in one of the pipeline's threads (when all are busy, it waits)."""
        return await asyncio.get_running_loop().run_in_executor(self._threads, functools.partial(fn, *args))

    def _turn(self) -> AbstractContextManager[None]:
        """The memory work's turn through Python (see `serial`), or none."""
        return nullcontext() if self._baton is None else self._baton.hold()

    def _turn_for_memory(self, on_loop: bool) -> tuple[AbstractContextManager[None], MemorySettings | None]:
        """The settings (None when they cannot be read: `prepare` reads them again and logs
        why), and the turn through Python of an admission in a thread while memory is on;
        none while it is off or on the event loop (such an admission runs as it comes).
        Whether the settings let the next chat be admitted on the event loop is kept (see
        `complete`); `on_loop`, NeedsThread when they do not."""
        try:
            settings = self.memory.settings()
        except Exception:
            return nullcontext(), None
        on = settings.acts_on_chats
        self._loop_admits = not (on and settings.injects and self.memory.recall_searches_vectors(settings))
        if on_loop:
            if not self._loop_admits:
                raise NeedsThread
            return nullcontext(), settings
        return (self._turn() if on and self._baton is not None else nullcontext()), settings

    def close(self) -> None:
        """Wait for the pipeline's threads to finish their work, and end them."""
        self._threads.shutdown(wait=True)

    # -- steps ------------------------------------------------------------------

    def authenticate(self, secret: str | None, on_loop: bool = False) -> ApiKey | None:
        """The request's key (Unauthorized when one is required and this is none). With
        `on_loop`, NeedsThread instead when the key's last use is due to be written."""
        keys = self.memory.keys
        key = keys.find(secret) if on_loop else keys.authenticate(secret)
        if on_loop and key is not None and keys.use_is_due(key):
            raise NeedsThread
        if key is None and self.require_api_key:
            if secret and self.is_admin_token(secret):
                raise Unauthorized(ADMIN_TOKEN_IS_NO_CLIENT_KEY)
            raise Unauthorized("missing, unknown or revoked API key (Authorization: Bearer <memroute key>)")
        return key

    def authenticate_within_limits(self, secret: str | None, on_loop: bool = False) -> ApiKey | None:
        """The key, refused (429) at once when it is over a limit, before any other work."""
        key = self.authenticate(secret, on_loop)
        self.limiter.check(key)
        return key

    @staticmethod
    def context(headers: Mapping[str, str], key: ApiKey | None, named_user: object = None) -> ChatContext:
        """The request's memory context. Its owner is the key, or the key's end user (see
        `end_user`); none with the no-memory header, and none when the key requires an
        end user and the request names none (the answer then says so)."""
        ctx = ChatContext(
            owner=None,
            session_id=first_header(headers, SESSION_HEADERS),
            request_id=request_id(headers),
            debug=header_truthy(headers, (DEBUG_HEADER,)),
        )
        if key is None or header_truthy(headers, NO_MEMORY_HEADERS):
            return ctx
        user = end_user(headers, named_user)
        if key.requires_user_id and not user:
            ctx.skipped = "user-id-required"
            return ctx
        ctx.owner = owner_of(key.id, user)
        return ctx

    def admit(
        self,
        fmt: WireFormat,
        secret: str | None,
        headers: Mapping[str, str],
        raw: bytes,
        on_loop: bool = False,
    ) -> Admitted:
        """Everything before forwarding a request of `fmt`, in one step (on the event loop,
        or in one trip to a worker thread): authenticate (first, so an unknown client
        learns nothing about its body) and check the key's limits, parse and check, route,
        recall and inject, build the outgoing body, and queue the user's turn for learning
        (unless the reply is learned from too: then after the answer; with the SQLite
        store, once the request is on its way: `Admitted.turn_due`). Whether the settings
        and providers changed is asked once for all of it.

        With `on_loop` (on the event loop), an admission that would wait or work long
        raises NeedsThread before it changes anything: when the settings cannot be read,
        the key's last use is due to be written, or the recall needs more than the key's
        index this process holds (vectors, a big key, one not held: see
        `Memory.recall(light=True)`)."""
        with self.memory.config_checked_once():
            return self._admit(fmt, secret, headers, raw, on_loop)

    def _admit(
        self, fmt: WireFormat, secret: str | None, headers: Mapping[str, str], raw: bytes, on_loop: bool
    ) -> Admitted:
        turn, settings = self._turn_for_memory(on_loop)
        if on_loop and settings is None:
            raise NeedsThread
        turn_due = False
        with turn:
            key = self.authenticate_within_limits(secret, on_loop)
            body = parse_body(raw)
            fmt.check(body, self.max_messages)
            ctx = self.context(headers, key, fmt.end_user(body))
            if ctx.owner is not None:
                ctx.settings = settings
            route, outgoing = self.prepare(fmt, ctx, body, body["model"], light=on_loop)
            payload = encoded({**outgoing, "model": route.model})
            if not ctx.wants_reply:  # the user's turn: queued once the request is on its way
                turn_due = self.local_reads and _learning(ctx) is not None
                if not turn_due:
                    self.learn(ctx)  # on PostgreSQL: in this same trip
        passed = {name: headers[name] for name in fmt.passed_headers if name in headers}
        return Admitted(key, ctx, body.get("stream") is True, route, payload, fmt, passed, turn_due)

    def prepare(
        self, fmt: WireFormat, ctx: ChatContext, body: dict[str, Any], model: str, light: bool = False
    ) -> tuple[Route, dict[str, Any]]:
        """Route the model, then retrieve and inject (with `light`, NeedsThread when the
        recall would not be: see `admit`).

        A routing error is the client's or the operator's and is raised; any memory
        failure is logged and the request goes on unchanged."""
        route = self.memory.providers.route(model, fmt.provider_format)
        if ctx.owner is None:
            return route, body
        try:
            if ctx.settings is None:
                ctx.settings = self.memory.settings()
            settings = ctx.settings
            ctx.turn = fmt.user_turn(body)
            if not settings.injects or not fmt.takes_memory(body):
                return route, body
            started = time.perf_counter()
            items = self.memory.recall(
                ctx.owner,
                ctx.turn[0] or None,
                ctx.session_id,
                settings=settings,
                record_access=False,
                already_said=fmt.said(body),
                light=light,
            )
            self.metrics.observe("memroute_retrieval_seconds", time.perf_counter() - started)
            ctx.injected = Injected.of(items, ctx.debug)
            return route, fmt.inject(body, self.memory.memory_block(items), route)
        except WouldBlock:
            raise NeedsThread from None
        except Exception as exc:
            log.warning("memory.retrieval.failed error=%s", type(exc).__name__)
            self.metrics.inc("memroute_memory_errors_total", stage="retrieval")
            ctx.injected = NOTHING_INJECTED
            return route, body

    def _due_turn(self, admitted: Admitted) -> DueTurn | None:
        """The user's turn left to queue once the request is on its way (see `DueTurn`)."""
        if not admitted.turn_due:
            return None
        ctx = admitted.ctx
        return DueTurn(
            functools.partial(self.learn, ctx, wait=False), functools.partial(self.learn, ctx), self._threads
        )

    def learn(self, ctx: ChatContext, reply: str = "", wait: bool = True) -> bool:
        """Queue the exchange for learning (see `Memory.enqueue_turn`); a failure is logged
        and counted, never raised. Without `wait` (on the event loop), False when the write
        would have waited (nothing queued: the caller queues it in a thread)."""
        learning = _learning(ctx)
        if learning is None:
            return True
        owner, settings = learning
        text, speaker = ctx.turn
        turn = ChatTurn(text, reply, speaker, ctx.request_id, ctx.session_id)
        try:
            with self._turn() if wait else nullcontext():
                self.memory.enqueue_turn(owner, turn, settings=settings, wait=wait)
        except WouldBlock:
            return False
        except Exception as exc:
            log.warning("memory.extraction.enqueue_failed error=%s", type(exc).__name__)
            self.metrics.inc("memroute_memory_errors_total", stage="extraction")
        return True

    async def learn_with_reply(self, ctx: ChatContext, reply: str) -> None:
        """After the answer, when the reply is learned from too (`captureTurns` all): queue
        the exchange, on the event loop when its write is brief (SQLite, a short
        exchange), else in a worker thread. Otherwise the user's turn was queued on admission."""
        if not ctx.wants_reply:
            return
        short = len(reply) + len(ctx.turn[0]) <= INLINE_PARSE_BYTES
        if not (self.local_reads and short and self.learn(ctx, reply, wait=False)):
            await self.in_thread(self.learn, ctx, reply)

    def record_use(self, ctx: ChatContext) -> None:
        """Count the injection; the access counts are written in the background, batched."""
        injected = ctx.injected
        if not injected.ids:
            return
        self.metrics.inc("memroute_memories_injected_total", len(injected.ids))
        self.metrics.inc("memroute_memory_tokens_injected_total", injected.tokens)
        try:
            self.memory.record_access_later(injected.ids)
        except Exception as exc:
            log.warning("memory.access.failed error=%s", type(exc).__name__)

    # -- the request ---------------------------------------------------------------

    async def complete(self, request: Request, fmt: WireFormat) -> Response:
        """A request of `fmt`: admitted on the event loop or in a worker thread (see
        `admit`), then forwarded within the limits (a slot held only while the provider
        answers). A client that disconnects while it waits ends its upstream call."""
        raw = await request.body()  # bounded by the body limit
        secret = self.client_secret(request)
        arrival = self.limiter.arrive(secret)
        headers = headers_of(request.scope)
        try:
            admitted = None
            if self.local_reads and self._loop_admits and len(raw) <= INLINE_PARSE_BYTES:
                with suppress(NeedsThread):
                    admitted = self.admit(fmt, secret, headers, raw, on_loop=True)
            if admitted is None:
                admitted = await self.in_thread(self.admit, fmt, secret, headers, raw)
        except BaseException:
            arrival.admitted(None)
            raise
        arrival.admitted(admitted.key)
        self.metrics.inc(
            "memroute_chat_requests_total",
            memory="on" if admitted.ctx.injected.ids else "off",
            route=fmt.name,
        )
        due = self._due_turn(admitted)
        try:
            if admitted.stream:
                return await self._stream(request, admitted, admitted.ctx.headers(), due)
            return await self._once(request, admitted, admitted.ctx.headers(), due)
        except ClientGone:
            return client_gone(admitted.route)
        finally:
            if due is not None:  # the request never left: the turn is queued all the same
                due()

    async def _once(
        self, request: Request, admitted: Admitted, headers: dict[str, str], due: DueTurn | None
    ) -> Response:
        ctx, route = admitted.ctx, admitted.route
        slot = self.limiter.acquire(admitted.key)
        try:
            upstream, content = await fetch_once(
                self.client,
                route,
                admitted.fmt.upstream_path,
                admitted.payload,
                request,
                self.bounds,
                admitted.headers,
                due,
            )
        finally:
            slot.release()
        if due is not None:
            await due.queued()
        if upstream.status_code == 200:
            await self.learn_with_reply(ctx, await reply_of(admitted, content))
            self.record_use(ctx)
        return Response(content, status_code=upstream.status_code, headers={**_passed(upstream), **headers})

    async def _open_stream(self, request: Request, admitted: Admitted, due: DueTurn | None) -> OpenStream:
        """The streamed answer's head, within the key's slot (held until the stream closes),
        the user's turn queued by then."""
        slot = self.limiter.acquire(admitted.key)
        stream = await open_streamed(
            self.client,
            admitted.route,
            admitted.fmt.upstream_path,
            admitted.payload,
            request,
            self.bounds,
            slot.release,
            admitted.headers,
            due,
        )
        if due is not None:
            try:
                await due.queued()
            except BaseException:
                await stream.close()
                raise
        return stream

    async def _stream(
        self, request: Request, admitted: Admitted, headers: dict[str, str], due: DueTurn | None
    ) -> Response:
        ctx, route, fmt = admitted.ctx, admitted.route, admitted.fmt
        stream = await self._open_stream(request, admitted, due)
        upstream = stream.response
        is_sse = "text/event-stream" in upstream.headers.get("content-type", "")
        if upstream.status_code != 200 or not is_sse:
            try:
                content = await stream.read(request)
            finally:
                await stream.close()
            if upstream.status_code == 200:
                await self.learn_with_reply(ctx, await reply_of(admitted, content))
            return Response(
                content, status_code=upstream.status_code, headers={**_passed(upstream), **headers}
            )

        async def relay() -> AsyncIterator[bytes]:
            assembler = ReplyAssembler(fmt.stream_text)
            wanted = ctx.wants_reply
            queued = False
            try:
                async for chunk in stream.chunks():
                    if wanted:  # the reply is learned: the end waits for it (else relayed in one piece)
                        assembler.feed(chunk)
                        done_at = chunk.find(fmt.done_event)
                        if done_at >= 0 and not queued:
                            # Queue the reply before the client sees the end of the stream.
                            if done_at:
                                yield chunk[:done_at]
                            await self.learn_with_reply(ctx, assembler.text)
                            queued = True
                            yield chunk[done_at:]
                            continue
                    yield chunk
                if wanted and not queued:
                    await self.learn_with_reply(ctx, assembler.text)
                self.record_use(ctx)
            except CALL_ERRORS as exc:
                log.warning(
                    "gateway.stream.upstream_error provider=%s url=%s error=%s",
                    route.provider_id,
                    url_for_logs(route.base_url),
                    failure_name(exc),
                )
            finally:
                await stream.close()

        return RelayResponse(
            relay(),
            stream.close,
            headers={"cache-control": "no-cache", "x-accel-buffering": "no", **headers},
        )


def _learning(ctx: ChatContext) -> tuple[str, MemorySettings] | None:
    """The owner and settings a chat's exchange is learned for (None: it is not learned)."""
    owner, settings = ctx.owner, ctx.settings
    if owner is None or settings is None or not settings.extracts:
        return None
    return owner, settings


def client_gone(route: Route) -> Response:
    """The answer to a client that has disconnected (it is never sent): nginx's 499."""
    log.info("gateway.client.disconnected provider=%s: the upstream call was cancelled", route.provider_id)
    return Response(status_code=499)


async def reply_of(admitted: Admitted, content: bytes) -> str:
    """The assistant's text in a non-streamed answer, when the request learns from it
    (else "": the answer is not parsed)."""
    return admitted.fmt.reply_text(await parsed_json(content)) if admitted.ctx.wants_reply else ""


async def parsed_json(content: bytes) -> Any:
    """`content` as JSON (None if it is not JSON); a long answer is parsed in a worker thread."""
    if len(content) > INLINE_PARSE_BYTES:
        return await anyio.to_thread.run_sync(loads_or_none, content)
    return loads_or_none(content)


def _passed(upstream: UpstreamResponse) -> dict[str, str]:
    """The provider's headers the client gets; its own request id under another name, since
    `x-request-id` is memroute's."""
    out = {name: upstream.headers[name] for name in _PASSED_RESPONSE_HEADERS if name in upstream.headers}
    if REQUEST_ID_HEADER in upstream.headers:
        out[UPSTREAM_REQUEST_ID_HEADER] = upstream.headers[REQUEST_ID_HEADER]
    return out
