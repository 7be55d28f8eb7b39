"""`create_app(config)`: the FastAPI application (gateway + management API)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

import anyio
from fastapi import FastAPI

from memroute.config import Config, allowed_cpus
from memroute.gateway.chat import ChatPipeline
from memroute.gateway.limits import GatewayLimiter, KeyLimits, process_share
from memroute.gateway.relay import UpstreamBounds
from memroute.service import Memory
from memroute.upstream.client import PoolSettings, UpstreamClient
from memroute.upstream.tls import tls_context
from memroute.version import package_version
from memroute.web import errors
from memroute.web.auth import client_key, load_or_create_admin_token, same_token
from memroute.web.guards import HostAllowList, JsonBodyRequired, allowed_hosts
from memroute.web.limits import BodyLimit
from memroute.web.mcp_mount import LazyMcpEndpoint
from memroute.web.metrics import CountRequests, standard_metrics
from memroute.web.throttle import AdminTokenThrottle, FailureLog

log = logging.getLogger("memroute.web")

POOL_ACQUIRE_TIMEOUT_S = 1.0
POOL_SPARE_CONNECTIONS = 16  # beyond MEMROUTE_MAX_CONCURRENT: /v1/models asks every provider


def _failure_log(app: FastAPI) -> FailureLog | None:
    """Where every replica counts wrong admin tokens, once the memory is open (None on
    SQLite: one machine's processes each count their share)."""
    memory = getattr(app.state, "memory", None)
    return None if memory is None else memory.admin_failures


def create_app(config: Config, *, memory: Memory | None = None) -> FastAPI:
    """Build the app. The service is opened in the lifespan (unless `memory` is given)
    and closed on shutdown, which drains the extraction queue."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = memory is None
        mem = memory if memory is not None else Memory.open(config=config)
        # A free pooled connection is waited for at most this long (a 503 then, never a queue);
        # the pool holds the gateway's limit of concurrent calls and a few for /v1/models.
        # Pooled upstream connections are dropped after 2 s idle: servers built on uvicorn
        # (vLLM, LM Studio's proxy, the scripted test upstream) close theirs after 5 s, and
        # a request sent on a connection the server is closing fails.
        client = UpstreamClient(
            PoolSettings(
                size=config.max_concurrent + POOL_SPARE_CONNECTIONS,
                pool_wait_s=POOL_ACQUIRE_TIMEOUT_S,
                connect_timeout_s=config.upstream_connect_timeout_s,
                read_timeout_s=config.upstream_timeout_s,
                keepalive_s=2.0,
            ),
            tls_context,
        )
        await client.start()
        try:
            app.state.memory = mem
            app.state.metrics = standard_metrics(lambda: float(mem.extraction_queue().pending))
            app.state.chat = ChatPipeline(
                mem,
                client,
                app.state.metrics,
                config.require_api_key,
                client_secret=client_key,
                is_admin_token=lambda given: same_token(given, app.state.admin_token),
                limiter=GatewayLimiter(
                    config.max_concurrent,
                    KeyLimits(config.key_max_concurrent, config.key_rpm),
                    on_refusal=lambda reason: app.state.metrics.inc(
                        "memroute_gateway_refused_total", reason=reason
                    ),
                    processes=config.workers,
                ),
                bounds=UpstreamBounds(
                    config.upstream_total_timeout_s,
                    config.max_upstream_body_bytes,
                    config.stream_gather_ms / 1000,
                ),
                max_messages=config.max_chat_messages,
                threads=config.chat_threads,
                serial=admissions_take_turns(config),
                local_reads=config.database_url is None,
            )
            try:
                async with anyio.create_task_group() as tasks:  # /mcp's session manager, once used
                    app.state.mcp.serve_in(tasks)
                    try:
                        yield
                    finally:
                        app.state.mcp.serve_in(None)
                        tasks.cancel_scope.cancel()
            finally:
                app.state.chat.close()  # its threads finish what they do before the store closes
                if owned:
                    mem.close()
        finally:
            await client.close()

    app = FastAPI(
        title="memroute",
        version=package_version(),
        summary="Persistent per-API-key memory for OpenAI-compatible LLM clients.",
        lifespan=lifespan,
        docs_url=None,  # /docs and /redoc are pages that need the admin (web/pages.py)
        redoc_url=None,
    )
    app.state.config = config
    app.state.admin_token, app.state.admin_token_created = load_or_create_admin_token(config)
    # Each of `--workers N` processes counts the failures it sees: its share of the limits;
    # on PostgreSQL every replica's are counted in the database too, against the whole limits.
    app.state.admin_throttle = AdminTokenThrottle(
        process_share(config.admin_failures_per_address, config.workers),
        process_share(config.admin_failures_total, config.workers),
        shared=lambda: _failure_log(app),
        shared_limits=(config.admin_failures_per_address, config.admin_failures_total),
    )
    # `/mcp` is built on its first request (memroute/web/mcp_mount.py): the SDK costs ~23 MiB.
    app.state.mcp = LazyMcpEndpoint(lambda: app.state.memory, app.state.admin_token, app.state.admin_throttle)
    app.add_route(
        "/mcp",
        app.state.mcp,  # raw ASGI
        methods=["GET", "POST", "DELETE"],
        include_in_schema=False,
    )
    errors.install(app)
    app.add_middleware(
        BodyLimit,
        limit=config.max_body_bytes,
        chat_limit=config.max_chat_body_bytes,
        import_limit=config.max_import_bytes,
    )
    app.add_middleware(JsonBodyRequired)
    app.add_middleware(HostAllowList, names=allowed_hosts(config.allowed_hosts, config.host))
    app.add_middleware(CountRequests, metrics=lambda: getattr(app.state, "metrics", None))

    from memroute.web.routes import register

    register(app)
    return app


def admissions_take_turns(config: Config) -> bool:
    """Whether the chat admissions take turns (`MEMROUTE_CHAT_SERIAL`, memroute/baton.py):
    only with the SQLite store, and only while the server's processes leave a core free.
    A turn handed on wakes a waiting thread, which must get a core at once: with as many
    processes as cores it waited for one, and two workers on two cores served 5–11 % fewer
    chats taking turns. On PostgreSQL an admission waits on the server several times, and
    handing the turn on at each wait cost more than the turns saved (docs/benchmarks.md)."""
    return config.chat_serial and config.database_url is None and config.workers < len(allowed_cpus())
