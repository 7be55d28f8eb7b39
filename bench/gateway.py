"""Gateway overhead: the official SDKs against the local echo upstream, directly and
through memroute, on each of memroute's three routes, all in one run.

Servers: the echo upstream (`memroute.gateway.echo.EchoUpstream`, which answers all three
wire formats) and memroute (`create_app(config)`, its openai-format upstream the echo server,
and `claude`, an anthropic-format provider at the same server), each under its own uvicorn
in its own process (as `memroute serve` runs; `--in-process` runs both in threads of the
benchmark process instead, as `memroute demo` does). The clients are sync, `max_retries=0`:

- chat: `openai.OpenAI`, `chat.completions.create`;
- responses: `openai.OpenAI`, `responses.create` (memory goes in `instructions`);
- messages: `anthropic.Anthropic`, `messages.create` and `messages.stream` (memory goes in
  `system`); direct means the anthropic SDK against the echo server itself.

Cases (the same realistic 5–15-word questions in every case):

- direct: client → echo upstream;
- off: client → memroute → upstream, memory settings `enabled=false`
  (authentication, routing, forwarding only);
- on: `enabled=true`, N memories stored for the key; the full pipeline: retrieval (hybrid,
  2,000-token budget), injection, forwarding, the question and the echoed reply queued
  for extraction when they hold a statement lead ("Do I like X …?"; plain questions are
  skipped), the access-count bump after the response;
- on, no extraction: `enabled=true, extractionEnabled=false` (retrieval + injection only);
- busy: a first-person statement before each question ("I prefer Go for CLI tools. …");
  the echo reply restates it, so each request stores facts in the background; off vs on.

The chat route runs every case, streaming (direct, off, on), the concurrent pool and the busy
phase; the responses and messages routes run direct, off and on sequentially and streaming
direct vs on (`--routes` picks the routes).

Sequential requests are timed in rounds, the cases interleaved (order rotated every round)
so drift of the shared VM hits every case alike; the extraction queue is drained before
each block. Streaming: time to the first content chunk. Concurrent: a pool of 8 threads
sharing one client.

    python -m bench.gateway                     # 1000 sequential requests per case, 1000 memories
    python -m bench.gateway --requests 500 --memories 5000
    python -m bench.gateway --in-process
    python -m bench.gateway --routes responses,messages --requests 300 --stream 150
    python -m bench.gateway --quick
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import multiprocessing
import os
import socket
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.common import (
    NO_MODEL,
    Latency,
    Report,
    emit,
    log,
    ms,
    parser,
    process_cpu_s,
    remove_database,
    table,
    verdict,
    work_dir,
)
from bench.corpus import _STATEMENTS, MemoryGenerator, Picker, _fill, queries
from bench.insert import add_generated
from memroute import Memory
from memroute.config import Config
from memroute.web.serve import bound_socket

HOST = "127.0.0.1"
MODEL = "echo-1"
ADMIN_TOKEN = "bench-admin-token-for-memroute-benchmarks"
TARGET_ON_MINUS_OFF_MS = 3.0  # memory on minus memory off, p50
TARGET_TTFT_MS = 5.0  # streaming time to first token, memory on minus direct, p50
THREADS = 8

DIRECT, OFF, ON, ON_NO_EXTRACTION = "direct", "off", "on", "on, no extraction"
BUSY_OFF, BUSY_ON = "off, statements", "on, extraction busy"
SEQUENTIAL_CASES = (DIRECT, OFF, ON, ON_NO_EXTRACTION)
STREAM_CASES = (DIRECT, OFF, ON)
CONCURRENT_CASES = (DIRECT, OFF, ON)
CHAT, RESPONSES, MESSAGES = "chat", "responses", "messages"
ROUTES = (CHAT, RESPONSES, MESSAGES)
ROUTE_CASES = (DIRECT, OFF, ON)  # sequential cases of the responses and messages routes
ROUTE_STREAM_CASES = (DIRECT, ON)
ANTHROPIC_PROVIDER = "claude"  # a bare model on /v1/messages goes to the one anthropic-format provider
MAX_TOKENS = 256
# Memory settings of each case (None: the client talks to the upstream directly).
SETTINGS: dict[str, dict[str, bool] | None] = {
    DIRECT: None,
    OFF: {"enabled": False, "extraction_enabled": True},
    ON: {"enabled": True, "extraction_enabled": True, **NO_MODEL},  # memory on: keyword search
    ON_NO_EXTRACTION: {"enabled": True, "extraction_enabled": False, **NO_MODEL},
    BUSY_OFF: {"enabled": False, "extraction_enabled": True},
    BUSY_ON: {"enabled": True, "extraction_enabled": True, **NO_MODEL},
}


@dataclass(frozen=True, slots=True)
class Plan:
    requests: int = 1000  # timed sequential requests per case (split over the rounds)
    stream: int = 500  # timed streaming requests per case
    concurrent: int = 800  # timed requests per case through the 8-thread pool
    busy: int = 500  # timed sequential requests per case of the busy phase
    rounds: int = 10
    warmup: int = 50  # untimed requests per case before the first round (and 5 per block)
    memories: int = 1000


FULL = Plan()
MODERATE = Plan(requests=300, stream=200, concurrent=400, busy=300, rounds=5, warmup=30)
QUICK = Plan(requests=40, stream=20, concurrent=80, busy=20, rounds=2, warmup=5, memories=200)
SMOKE = Plan(requests=8, stream=4, concurrent=16, busy=4, rounds=2, warmup=2, memories=50)


# -- servers ---------------------------------------------------------------------------


def gateway_config(db: Path, upstream_url: str) -> Config:
    env = {
        "MEMROUTE_UPSTREAM_BASE_URL": upstream_url + "/v1",
        "MEMROUTE_ADMIN_TOKEN": ADMIN_TOKEN,
        "MEMROUTE_KEY_RPM": "0",  # one key sends every timed request
    }
    # For A/B runs: recall read from SQL (MEMROUTE_RECALL_INDEX_MEMORIES=0), the words asked
    # alone (MEMROUTE_RELATED_WORDS=false), no recall by meaning (MEMROUTE_MEANINGS=false).
    for name in ("MEMROUTE_RECALL_INDEX_MEMORIES", "MEMROUTE_RELATED_WORDS", "MEMROUTE_MEANINGS"):
        if name in os.environ:
            env[name] = os.environ[name]
    return Config.for_path(db, environ=env)


def _app(kind: str, db: str | None, upstream_url: str | None) -> Any:
    if kind == "echo":
        from memroute.gateway.echo import EchoUpstream

        return EchoUpstream().app()
    from memroute.web.app import create_app

    assert db is not None and upstream_url is not None
    return create_app(gateway_config(Path(db), upstream_url))


def _serve(kind: str, report: Connection, db: str | None, upstream_url: str | None) -> None:
    """Entry point of a server process: it holds a free port first and sends its number
    through `report` (so no other process can take it meanwhile), then serves there."""
    listener = bound_socket(HOST)
    port = int(listener.getsockname()[1])
    report.send(port)
    report.close()
    app = _app(kind, db, upstream_url)
    if kind == "echo":
        import uvicorn

        uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning")).run(sockets=[listener])
        return
    # The gateway runs as `memroute serve` runs it: its guarded protocol, limits and loop.
    from memroute.web.server import build_server
    from memroute.web.server_limits import ServerLimits, open_files_limit

    limits = ServerLimits.of_app(app)
    server = build_server(app, limits, host=HOST, port=port, open_files=open_files_limit(), freeze_heap=True)
    server.run(sockets=[listener])


@dataclass
class Server:
    url: str
    pid: int | None  # None when it runs in a thread of this process

    def cpu_s(self) -> float | None:
        """User + system CPU time of the server process so far."""
        return None if self.pid is None else process_cpu_s(self.pid)


@contextlib.contextmanager
def launch(
    kind: str, *, in_process: bool, db: Path | None = None, upstream_url: str | None = None
) -> Iterator[Server]:
    """Start the echo upstream or memroute under uvicorn; stops it (running the app's shutdown) on exit."""
    db_text = None if db is None else str(db)
    if in_process:
        from memroute.web.serve import serving

        with serving(_app(kind, db_text, upstream_url), host=HOST) as url:
            yield Server(url, None)
        return
    spawn = multiprocessing.get_context("spawn")
    told, report = spawn.Pipe(duplex=False)
    proc = spawn.Process(
        target=_serve, args=(kind, report, db_text, upstream_url), name=f"bench-{kind}", daemon=True
    )
    proc.start()
    report.close()
    try:
        if not told.poll(60):
            raise EOFError
        port = int(told.recv())
    except EOFError:
        proc.kill()
        raise RuntimeError(f"the {kind} server did not start") from None
    deadline = time.monotonic() + 60
    while True:  # uvicorn listens after the lifespan startup, so a connection means ready
        try:
            socket.create_connection((HOST, port), timeout=1).close()
            break
        except OSError:
            if not proc.is_alive() or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"the {kind} server did not start") from None
            time.sleep(0.05)
    try:
        yield Server(f"http://{HOST}:{port}", proc.pid)
    finally:
        proc.terminate()  # SIGTERM: uvicorn shuts down gracefully (memroute drains its queue)
        proc.join(60)
        if proc.is_alive():
            proc.kill()
            proc.join(5)


# -- the clients -------------------------------------------------------------------------


if TYPE_CHECKING:  # the SDKs are imported when a client is made: the load benchmark needs neither
    import anthropic
    import openai


def client(url: str, secret: str) -> openai.OpenAI:
    import openai

    return openai.OpenAI(base_url=url + "/v1", api_key=secret, max_retries=0, timeout=60)


def anthropic_client(url: str, secret: str) -> anthropic.Anthropic:
    """The anthropic SDK at `url` (it appends /v1/messages itself)."""
    import anthropic

    return anthropic.Anthropic(base_url=url, api_key=secret, max_retries=0, timeout=60)


def messages(text: str) -> list[Any]:
    return [{"role": "user", "content": text}]


def expect(reply: str | None, text: str) -> None:
    """The echo upstream's reply to `text`, else AssertionError."""
    if reply != "You said: " + text:
        raise AssertionError(f"unexpected reply {reply!r}")


def injected(headers: Mapping[str, str]) -> tuple[int, int]:
    """(memories injected, their tokens) from memroute's headers."""
    return int(headers.get("x-memroute-memory-count", 0)), int(headers.get("x-memroute-memory-tokens", 0))


def ask(c: openai.OpenAI, text: str) -> None:
    reply = c.chat.completions.create(model=MODEL, messages=messages(text))
    expect(reply.choices[0].message.content, text)


def ask_raw(c: openai.OpenAI, text: str) -> tuple[int, int]:
    """One untimed request; (memories injected, their tokens) from memroute's headers."""
    raw = c.chat.completions.with_raw_response.create(model=MODEL, messages=messages(text))
    expect(raw.parse().choices[0].message.content, text)
    return injected(raw.headers)


def ask_stream(c: openai.OpenAI, text: str) -> tuple[int, int]:
    """(ns to the first content chunk, ns to the end of the stream)."""
    clock = time.perf_counter_ns
    start = clock()
    first = 0
    parts = []
    with c.chat.completions.create(model=MODEL, messages=messages(text), stream=True) as stream:
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                if not first:
                    first = clock()
                parts.append(chunk.choices[0].delta.content)
    end = clock()
    expect("".join(parts), text)
    return first - start, end - start


def ask_responses(c: openai.OpenAI, text: str) -> None:
    expect(c.responses.create(model=MODEL, input=text).output_text, text)


def ask_responses_raw(c: openai.OpenAI, text: str) -> tuple[int, int]:
    raw = c.responses.with_raw_response.create(model=MODEL, input=text)
    expect(raw.parse().output_text, text)
    return injected(raw.headers)


def stream_responses(c: openai.OpenAI, text: str) -> tuple[int, int]:
    """(ns to the first `response.output_text.delta`, ns to the end of the stream)."""
    clock = time.perf_counter_ns
    start = clock()
    first = 0
    parts = []
    with c.responses.create(model=MODEL, input=text, stream=True) as stream:
        for event in stream:
            if event.type == "response.output_text.delta" and event.delta:
                first = first or clock()
                parts.append(event.delta)
    end = clock()
    expect("".join(parts), text)
    return first - start, end - start


def message_text(message: anthropic.types.Message) -> str:
    return "".join(block.text for block in message.content if block.type == "text")


def ask_messages(c: anthropic.Anthropic, text: str) -> None:
    expect(message_text(c.messages.create(model=MODEL, max_tokens=MAX_TOKENS, messages=messages(text))), text)


def ask_messages_raw(c: anthropic.Anthropic, text: str) -> tuple[int, int]:
    raw = c.messages.with_raw_response.create(model=MODEL, max_tokens=MAX_TOKENS, messages=messages(text))
    expect(message_text(raw.parse()), text)
    return injected(raw.headers)


def stream_messages(c: anthropic.Anthropic, text: str) -> tuple[int, int]:
    """(ns to the first text of `messages.stream`, ns to the end of the stream)."""
    clock = time.perf_counter_ns
    start = clock()
    first = 0
    parts = []
    with c.messages.stream(model=MODEL, max_tokens=MAX_TOKENS, messages=messages(text)) as stream:
        for piece in stream.text_stream:
            first = first or clock()
            parts.append(piece)
    end = clock()
    expect("".join(parts), text)
    return first - start, end - start


@dataclass(frozen=True, slots=True)
class Api:
    """How the benchmark asks one route with its SDK: the timed request, an untimed one that
    returns memroute's injection headers, a streamed one (ns to the first text, to the end)."""

    call: str  # the SDK call, for the report
    connect: Callable[[str, str], Any]  # (server URL, key) → client
    ask: Callable[[Any, str], None]
    ask_raw: Callable[[Any, str], tuple[int, int]]
    ask_stream: Callable[[Any, str], tuple[int, int]]


APIS = {
    CHAT: Api("`openai` `chat.completions.create`", client, ask, ask_raw, ask_stream),
    RESPONSES: Api("`openai` `responses.create`", client, ask_responses, ask_responses_raw, stream_responses),
    MESSAGES: Api(
        "`anthropic` `messages.create` / `messages.stream`",
        anthropic_client,
        ask_messages,
        ask_messages_raw,
        stream_messages,
    ),
}


def tag(route: str, block: str) -> str:
    """The name of a block of `route` in the CPU figures (chat's have no prefix)."""
    return block if route == CHAT else f"{route} {block}"


# -- measurement -------------------------------------------------------------------------


@dataclass
class CpuMeter:
    """CPU seconds of the client (this process) and of each server process over a block."""

    servers: dict[str, Server]
    used: dict[str, float] = field(default_factory=dict)

    def snapshot(self) -> dict[str, float | None]:
        return {"client": time.process_time(), **{name: s.cpu_s() for name, s in self.servers.items()}}

    @contextlib.contextmanager
    def block(self, case: str) -> Iterator[None]:
        before = self.snapshot()
        yield
        after = self.snapshot()
        for name, value in after.items():
            start = before[name]
            if value is not None and start is not None:
                self.used[f"{case}/{name}"] = self.used.get(f"{case}/{name}", 0.0) + value - start


def machine_busy_s() -> float:
    """CPU seconds the whole machine has spent busy (all processes, all CPUs) since boot."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


@dataclass
class Load:
    """How much CPU other processes of the machine used during the run (they distort the figures)."""

    meter: CpuMeter
    started: float = 0.0
    machine: float = 0.0
    ours: float = 0.0

    def _ours(self) -> float:
        return sum(v for v in self.meter.snapshot().values() if v is not None)

    def start(self) -> None:
        self.started, self.machine, self.ours = time.perf_counter(), machine_busy_s(), self._ours()

    def stop(self) -> dict[str, float]:
        wall = time.perf_counter() - self.started
        machine = machine_busy_s() - self.machine
        ours = self._ours() - self.ours
        return {
            "wall_s": wall,
            "machine_busy_s": machine,
            "ours_s": ours,
            "others_s": max(0.0, machine - ours),
        }


@dataclass
class CaseResult:
    latency: Latency
    wall_ns: int = 0
    per_round_p50: list[float] = field(default_factory=list)
    injected: list[tuple[int, int]] = field(default_factory=list)

    @property
    def per_s(self) -> float:
        return self.latency.n / (self.wall_ns / 1e9)


class Bench:
    def __init__(self, side: Memory, key_id: str, secret: str, upstream: Server, gateway: Server) -> None:
        self.side = side
        self.key_id = key_id
        self.clients = {  # per route: the client of each side
            route: {
                "direct": api.connect(upstream.url, "unused"),
                "gateway": api.connect(gateway.url, secret),
            }
            for route, api in APIS.items()
        }
        self.meter = CpuMeter({"upstream": upstream, "gateway": gateway})
        self.drains: list[tuple[str, int, float]] = []  # (case, pending after the block, drain seconds)
        # The SDKs' clients hold ~200,000 objects that live as long as the run: frozen, the
        # collection before each timed block (and any during it) no longer scans them (~170 ms).
        gc.collect()
        gc.freeze()

    def prepare(self, case: str, route: str = CHAT) -> Any:
        """Apply the case's settings (read by the gateway on every request); its client on `route`."""
        settings = SETTINGS[case]
        if settings is None:
            return self.clients[route]["direct"]
        self.side.update_settings(settings)
        return self.clients[route]["gateway"]

    def drain(self, case: str, timeout: float = 120.0) -> None:
        """Wait until the gateway's extraction worker has processed everything queued."""
        started = time.perf_counter()
        pending = first = self.side.extraction_queue().pending
        while pending:
            if time.perf_counter() - started > timeout:
                raise RuntimeError(f"the extraction queue did not drain ({pending} pending)")
            time.sleep(0.01)
            pending = self.side.extraction_queue().pending
        settings = SETTINGS[case]
        if settings is not None and settings["enabled"]:
            self.drains.append((case, first, time.perf_counter() - started))

    def sequential(
        self, cases: Sequence[str], texts: list[str], *, rounds: int, warmup: int, route: str = CHAT
    ) -> dict[str, CaseResult]:
        """Each case times the same texts on `route`, in `rounds` interleaved blocks."""
        api = APIS[route]
        results = {case: CaseResult(Latency([])) for case in cases}
        warm, texts = texts[:warmup], texts[warmup:]
        for case in cases:
            c = self.prepare(case, route)
            for text in warm:
                results[case].injected.append(api.ask_raw(c, text))
            self.drain(case)
        per_round = -(-len(texts) // rounds)
        clock = time.perf_counter_ns
        for r in range(rounds):
            chunk = texts[r * per_round : (r + 1) * per_round]
            order = list(cases[r % len(cases) :]) + list(cases[: r % len(cases)])
            for case in order:
                c = self.prepare(case, route)
                for text in warm[-5:]:  # re-warm the connection and caches after the switch
                    results[case].injected.append(api.ask_raw(c, text))
                self.drain(case)
                gc.collect()
                samples = []
                with self.meter.block(tag(route, case)):
                    started = clock()
                    for text in chunk:
                        t = clock()
                        api.ask(c, text)
                        samples.append(clock() - t)
                    results[case].wall_ns += clock() - started
                results[case].latency.samples.extend(samples)
                results[case].per_round_p50.append(Latency(samples).p50)
                self.drain(case)
            log(f"{route} sequential round {r + 1}/{rounds} done")
        return results

    def streaming(
        self, cases: Sequence[str], texts: list[str], *, rounds: int, warmup: int, route: str = CHAT
    ) -> dict[str, tuple[Latency, Latency]]:
        """Each case streams the same texts on `route`, in `rounds` interleaved blocks: (time
        to the first text, time to the end of the stream) per case."""
        ask_stream = APIS[route].ask_stream
        ttft: dict[str, list[int]] = {case: [] for case in cases}
        total: dict[str, list[int]] = {case: [] for case in cases}
        warm, texts = texts[:warmup], texts[warmup:]
        for case in cases:
            c = self.prepare(case, route)
            for text in warm:
                ask_stream(c, text)
            self.drain(case)
        per_round = -(-len(texts) // rounds)
        for r in range(rounds):
            chunk = texts[r * per_round : (r + 1) * per_round]
            for case in list(cases[r % len(cases) :]) + list(cases[: r % len(cases)]):
                c = self.prepare(case, route)
                for text in warm[-5:]:
                    ask_stream(c, text)
                self.drain(case)
                gc.collect()
                with self.meter.block(tag(route, f"stream {case}")):
                    for text in chunk:
                        first, end = ask_stream(c, text)
                        ttft[case].append(first)
                        total[case].append(end)
                self.drain(case)
        log(f"{route} streaming done")
        return {case: (Latency(ttft[case]), Latency(total[case])) for case in cases}

    def concurrent(self, cases: Sequence[str], texts: list[str]) -> dict[str, CaseResult]:
        out = {}
        clock = time.perf_counter_ns

        def timed(c: openai.OpenAI, text: str) -> int:
            t = clock()
            ask(c, text)
            return clock() - t

        for case in cases:
            c = self.prepare(case)
            with ThreadPoolExecutor(THREADS) as pool:
                list(pool.map(lambda t, c=c: timed(c, t), texts[: THREADS * 4]))  # open the connections
                self.drain(case)
                gc.collect()
                with self.meter.block(f"{case} ×{THREADS}"):
                    started = clock()
                    samples = list(pool.map(lambda t, c=c: timed(c, t), texts))
                    wall = clock() - started
            out[case] = CaseResult(Latency(samples), wall)
            self.drain(case)
            log(f"concurrent {case}: {len(texts) / (wall / 1e9):.0f} req/s")
        return out


def statements(seed: int, texts: Sequence[str]) -> list[str]:
    """Each question behind a first-person statement ("I prefer Go for CLI tools. …")."""
    p = Picker(seed)
    return [f"{_fill(p, p.uniform(_STATEMENTS))} {text}" for text in texts]


def store_memories(side: Memory, key_id: str, n: int, seed: int) -> None:
    for g in MemoryGenerator(seed).for_owner(n):
        add_generated(side, key_id, g)


@dataclass
class ChatFigures:
    """The chat route's results: every sequential case, streaming, the concurrent pool and
    the busy phase (the key's memories before and after it)."""

    seq: dict[str, CaseResult]
    stream: dict[str, tuple[Latency, Latency]]
    conc: dict[str, CaseResult]
    busy: dict[str, CaseResult]
    busy_memories: tuple[int, int]


@dataclass
class RouteFigures:
    """Another route's results: direct, off and on sequentially, streaming direct vs on."""

    seq: dict[str, CaseResult]
    stream: dict[str, tuple[Latency, Latency]]


def run_chat(bench: Bench, plan: Plan, qs: list[str], busy_texts: list[str]) -> ChatFigures:
    """Every phase of the chat route: sequential, streaming, concurrent, extraction busy."""
    log(f"chat sequential: {plan.requests} requests per case, cases {', '.join(SEQUENTIAL_CASES)}")
    seq = bench.sequential(
        SEQUENTIAL_CASES,
        qs[: plan.requests + plan.warmup],
        rounds=plan.rounds,
        warmup=plan.warmup,
    )
    log(f"chat streaming: {plan.stream} requests per case")
    stream = bench.streaming(
        STREAM_CASES, qs[: plan.stream + plan.warmup], rounds=plan.rounds, warmup=plan.warmup
    )
    log(f"concurrent: {plan.concurrent} requests per case, {THREADS} threads")
    conc = bench.concurrent(CONCURRENT_CASES, qs[: plan.concurrent])
    before_busy = bench.side.stats(bench.key_id).total
    log(f"busy extraction: {plan.busy} requests per case")
    busy = bench.sequential((BUSY_OFF, BUSY_ON), busy_texts, rounds=plan.rounds, warmup=plan.warmup)
    return ChatFigures(seq, stream, conc, busy, (before_busy, bench.side.stats(bench.key_id).total))


def run_route(bench: Bench, plan: Plan, route: str, qs: list[str]) -> RouteFigures:
    """The responses or the messages route: sequential direct / off / on, streaming direct vs on."""
    log(f"{route} sequential: {plan.requests} requests per case, cases {', '.join(ROUTE_CASES)}")
    seq = bench.sequential(
        ROUTE_CASES, qs[: plan.requests + plan.warmup], rounds=plan.rounds, warmup=plan.warmup, route=route
    )
    log(f"{route} streaming: {plan.stream} requests per case")
    stream = bench.streaming(
        ROUTE_STREAM_CASES,
        qs[: plan.stream + plan.warmup],
        rounds=plan.rounds,
        warmup=plan.warmup,
        route=route,
    )
    return RouteFigures(seq, stream)


def run(
    plan: Plan,
    *,
    seed: int,
    data_dir: Path | None,
    in_process: bool = False,
    routes: Sequence[str] = ROUTES,
) -> Report:
    with work_dir(data_dir) as directory:
        db = directory / "gateway-bench.db"
        remove_database(db)
        side = Memory.open(db, start_workers=False)  # setup and settings; the gateway has its own
        try:
            key, secret = side.keys.create("bench")
            side.update_settings(enabled=False, **NO_MODEL)  # no model loaded at start
            started = time.perf_counter()
            store_memories(side, key.id, plan.memories, seed)
            stored = side.stats(key.id).total
            log(f"{stored} memories stored in {time.perf_counter() - started:.1f} s")
            qs = queries(seed + 1, max(plan.requests, plan.stream, plan.concurrent, plan.busy) + plan.warmup)
            busy_texts = statements(seed + 2, qs[: plan.busy + plan.warmup])
            with launch("echo", in_process=in_process) as upstream:
                side.providers.add(ANTHROPIC_PROVIDER, upstream.url + "/v1", format="anthropic")
                with launch("gateway", in_process=in_process, db=db, upstream_url=upstream.url) as gateway:
                    bench = Bench(side, key.id, secret, upstream, gateway)
                    load = Load(bench.meter)
                    load.start()
                    load_start = os.getloadavg()[0]
                    chat = run_chat(bench, plan, qs, busy_texts) if CHAT in routes else None
                    others = {route: run_route(bench, plan, route, qs) for route in routes if route != CHAT}
                    cpu_load = load.stop()
                    cpu_load["loadavg_1min_start"] = load_start
                    cpu_load["loadavg_1min_end"] = os.getloadavg()[0]
            context = {
                "load": cpu_load,
                "memories": stored,
                "in_process": in_process,
                "cpu": bench.meter.used,
                "drains": bench.drains,
                "cores": os.cpu_count(),
            }
        finally:
            side.close()
    return report(plan, chat, others, context)


# -- the report --------------------------------------------------------------------------


def _cpu_per_request(context: dict[str, Any], case: str, n: int) -> str:
    cpu = context["cpu"]
    if context["in_process"]:
        return f"{cpu.get(f'{case}/client', 0.0) / n * 1e3:.2f} (one process: client + both servers)"
    parts = []
    for proc in ("client", "upstream", "gateway"):
        value = cpu.get(f"{case}/{proc}")
        if value is not None:
            parts.append(f"{value / n * 1e3:.2f}")
        else:
            parts.append("—")
    return " / ".join(parts)


def _cpu_header(context: dict[str, Any]) -> str:
    return "CPU ms/request" if context["in_process"] else "CPU ms/request: client / upstream / gateway"


def _injected(res: CaseResult) -> str:
    counts = [n for n, _ in res.injected]
    tokens = [t for _, t in res.injected]
    if not counts or not any(counts):
        return "0"
    return f"{statistics.mean(counts):.0f} ({statistics.mean(tokens):,.0f} tokens)"


def _data_key(route: str, name: str) -> str:
    """Where a figure of `route` goes in the JSON (chat's keys have no prefix)."""
    return name if route == CHAT else f"{route}/{name}"


def _sequential_table(
    route: str, seq: dict[str, CaseResult], context: dict[str, Any], data: dict[str, Any]
) -> str:
    """The sequential cases of `route`, one row each; their figures go in `data`."""
    direct = seq[DIRECT].latency
    rows = []
    for case, res in seq.items():
        lat = res.latency
        rows.append(
            [
                case,
                lat.n,
                f"{res.per_s:,.0f}",
                ms(lat.p50),
                ms(lat.p99),
                ms(lat.mean),
                ms(lat.max),
                "—" if case == DIRECT else f"+{ms(lat.p50 - direct.p50)} (×{lat.p50 / direct.p50:.2f})",
                _injected(res),
                _cpu_per_request(context, tag(route, case), lat.n),
            ]
        )
        data[_data_key(route, f"sequential/{case}")] = {
            **lat.to_dict(),
            "per_s": res.per_s,
            "per_round_p50_ms": res.per_round_p50,
        }
    headers = ["case", "n", "req/s", "p50", "p99", "mean", "max", "p50 vs direct", "memories injected"]
    return table([*headers, _cpu_header(context)], rows)


def _stream_table(
    route: str, stream: dict[str, tuple[Latency, Latency]], context: dict[str, Any], data: dict[str, Any]
) -> str:
    """The streamed cases of `route`, one row each; their figures go in `data`."""
    s_rows = []
    for case, (ttft, total) in stream.items():
        s_rows.append(
            [
                case,
                ttft.n,
                ms(ttft.p50),
                ms(ttft.p99),
                "—" if case == DIRECT else f"+{ms(ttft.p50 - stream[DIRECT][0].p50)}",
                ms(total.p50),
                ms(total.p99),
                _cpu_per_request(context, tag(route, f"stream {case}"), ttft.n),
            ]
        )
        data[_data_key(route, f"stream/{case}")] = {"ttft": ttft.to_dict(), "total": total.to_dict()}
    headers = ["case", "n", "TTFT p50", "TTFT p99", "TTFT p50 vs direct", "total p50", "total p99"]
    return table([*headers, _cpu_header(context)], s_rows)


def route_targets(seq: dict[str, CaseResult], stream: dict[str, tuple[Latency, Latency]]) -> dict[str, Any]:
    """The figures of one route held against the targets (p50s, ms)."""
    on, off, direct = seq[ON], seq[OFF], seq[DIRECT]
    return {
        "requests": on.latency.n,
        "streamed": stream[ON][0].n,
        "on_minus_off_p50_ms": on.latency.p50 - off.latency.p50,
        "on_minus_off_per_round_ms": [
            a - b for a, b in zip(on.per_round_p50, off.per_round_p50, strict=True)
        ],
        "off_minus_direct_p50_ms": off.latency.p50 - direct.latency.p50,
        "ttft_on_minus_direct_p50_ms": stream[ON][0].p50 - stream[DIRECT][0].p50,
    }


def _intro(rep: Report, context: dict[str, Any], routes: Sequence[str]) -> None:
    where = (
        "both servers in threads of the benchmark process (one GIL shared with the client)"
        if context["in_process"]
        else "each server in its own uvicorn process, the client in a third"
    )
    calls = "; ".join(f"{route}: {APIS[route].call}" for route in routes)
    rep.add(
        f"The official SDKs (sync; {calls}) → echo upstream, directly or through memroute; {where}; "
        f"{context['cores']} CPUs shared by client, gateway and upstream, so every latency includes "
        "the client SDK's and the echo server's own work, and the gateway competes with them for CPU. "
        f"{context['memories']:,} memories stored for the key. Times in ms."
    )
    rep.add(
        "Cases: *direct* — the client talks to the echo upstream; *off* — through memroute with memory "
        "settings `enabled=false` (authentication, routing, forwarding); *on* — `enabled=true`: hybrid "
        "retrieval (2,000-token budget), injection, the question and the echoed reply queued for "
        "extraction when they hold a statement lead (“Do I like X …?”; plain questions are skipped; the "
        "worker extracts in the background during the run) and the access-count bump after the "
        "response; *on, no extraction* — the same with `extractionEnabled=false`."
    )
    load = context["load"]
    rep.add(
        f"During the {load['wall_s']:.0f} s of measurement the benchmark's processes used "
        f"{load['ours_s']:.0f} CPU-s and other processes of the machine {load['others_s']:.1f} CPU-s "
        f"({load['others_s'] / load['wall_s'] * 100:.0f} % of one CPU; 1-minute load average "
        f"{load['loadavg_1min_start']:.2f} → {load['loadavg_1min_end']:.2f})."
    )


def _concurrent_section(conc: dict[str, CaseResult], context: dict[str, Any], data: dict[str, Any]) -> str:
    c_rows = []
    for case in CONCURRENT_CASES:
        res = conc[case]
        c_rows.append(
            [
                case,
                res.latency.n,
                f"{res.per_s:,.0f}",
                f"{res.per_s / conc[DIRECT].per_s:.2f}",
                ms(res.latency.p50),
                ms(res.latency.p99),
                _cpu_per_request(context, f"{case} ×{THREADS}", res.latency.n),
            ]
        )
        data[f"concurrent/{case}"] = {**res.latency.to_dict(), "per_s": res.per_s}
    return f"**Concurrent** ({THREADS} threads sharing one client):\n\n" + table(
        ["case", "n", "req/s", "vs direct", "p50", "p99", _cpu_header(context)],
        c_rows,
    )


def _busy_section(chat: ChatFigures, context: dict[str, Any], data: dict[str, Any]) -> str:
    before, after = chat.busy_memories
    b_drains = [(p, s) for case, p, s in context["drains"] if case == BUSY_ON]
    b_rows = []
    for case in (BUSY_OFF, BUSY_ON):
        res = chat.busy[case]
        b_rows.append(
            [
                case,
                res.latency.n,
                f"{res.per_s:,.0f}",
                ms(res.latency.p50),
                ms(res.latency.p99),
                ms(res.latency.max),
                _injected(res),
                _cpu_per_request(context, case, res.latency.n),
            ]
        )
        data[f"busy/{case}"] = {**res.latency.to_dict(), "per_s": res.per_s}
    return (
        "**Extraction worker busy**: every question behind a first-person statement (“I prefer Go "
        "for CLI tools. Which database …?”), which the echo reply restates, so each request queues "
        "2 extraction jobs that store facts while the next requests run; "
        f"the key grew from {before:,} to {after:,} memories during this phase"
        + (
            f"; at most {max(p for p, _ in b_drains)} job(s) were still queued after a block "
            f"(drained in ≤ {max(s for _, s in b_drains) * 1e3:.0f} ms)"
            if b_drains
            else ""
        )
        + ":\n\n"
        + table(
            ["case", "n", "req/s", "p50", "p99", "max", "memories injected", _cpu_header(context)],
            b_rows,
        )
    )


def _chat_sections(
    rep: Report,
    plan: Plan,
    chat: ChatFigures,
    t: dict[str, Any],
    context: dict[str, Any],
    data: dict[str, Any],
) -> None:
    """The chat route: sequential, streaming, concurrent, busy, and its figures against the
    targets (`t`, its `route_targets`)."""
    rep.add(
        f"**Sequential** ({plan.rounds} interleaved rounds; a request = `chat.completions.create` "
        "with one user message):\n\n" + _sequential_table(CHAT, chat.seq, context, data)
    )
    rep.add(
        "**Streaming** (`stream=True`; time to the first chunk with content, and to the end of the stream; "
        "the echo upstream sends one chunk per word of “You said: <question>”, 7–17 chunks):\n\n"
        + _stream_table(CHAT, chat.stream, context, data)
    )
    rep.add(_concurrent_section(chat.conc, context, data))
    rep.add(_busy_section(chat, context, data))
    round_diffs = t["on_minus_off_per_round_ms"]
    off = chat.seq[OFF].latency
    busy_diff = chat.busy[BUSY_ON].latency.p50 - chat.busy[BUSY_OFF].latency.p50
    noext_diff = chat.seq[ON_NO_EXTRACTION].latency.p50 - off.p50
    t_rows = [
        [
            "memory on − memory off, p50 (sequential)",
            f"≤ {TARGET_ON_MINUS_OFF_MS:g} ms",
            f"{ms(t['on_minus_off_p50_ms'])} ms (per round {ms(min(round_diffs))}–{ms(max(round_diffs))})",
            verdict(t["on_minus_off_p50_ms"] <= TARGET_ON_MINUS_OFF_MS),
        ],
        [
            "streaming TTFT, memory on − direct, p50",
            f"≤ {TARGET_TTFT_MS:g} ms",
            f"{ms(t['ttft_on_minus_direct_p50_ms'])} ms",
            verdict(t["ttft_on_minus_direct_p50_ms"] <= TARGET_TTFT_MS),
        ],
        ["memory on with the extraction worker busy − memory off, p50", "—", f"{ms(busy_diff)} ms", "—"],
        ["memory on without extraction − memory off, p50", "—", f"{ms(noext_diff)} ms", "—"],
        ["memory off − direct, p50", "—", f"{ms(t['off_minus_direct_p50_ms'])} ms", "—"],
    ]
    rep.add(table(["figure", "target", "result", "verdict"], t_rows))
    data["targets"] = {
        "on_minus_off_p50_ms": t["on_minus_off_p50_ms"],
        "on_minus_off_per_round_ms": round_diffs,
        "ttft_on_minus_direct_p50_ms": t["ttft_on_minus_direct_p50_ms"],
        "busy_on_minus_off_p50_ms": busy_diff,
        "on_no_extraction_minus_off_p50_ms": noext_diff,
        "off_minus_direct_p50_ms": t["off_minus_direct_p50_ms"],
    }


ROUTE_WHAT = {
    RESPONSES: "`POST /v1/responses`; a request = `responses.create` with the question as `input`, memory "
    "in `instructions`",
    MESSAGES: "`POST /v1/messages`; a request = `messages.create` with one user message (max_tokens "
    f"{MAX_TOKENS}), memory in `system`; direct = the anthropic SDK against the echo upstream",
}
ROUTE_STREAM = {
    RESPONSES: "`responses.create(stream=True)`; TTFT = the first `response.output_text.delta`",
    MESSAGES: "`messages.stream`; TTFT = the first piece of `text_stream` (a `text_delta`)",
}


def _route_sections(
    rep: Report, plan: Plan, route: str, figures: RouteFigures, context: dict[str, Any], data: dict[str, Any]
) -> None:
    rep.add(
        f"**{route}: sequential** ({ROUTE_WHAT[route]}; {plan.rounds} interleaved rounds):\n\n"
        + _sequential_table(route, figures.seq, context, data)
    )
    rep.add(
        f"**{route}: streaming** ({ROUTE_STREAM[route]}; the echo upstream sends one text event per "
        "word):\n\n" + _stream_table(route, figures.stream, context, data)
    )


def _by_route(rep: Report, targets: dict[str, dict[str, Any]]) -> None:
    """Each route's figures against the targets, one verdict line per target."""
    rows = []
    for route, t in targets.items():
        diffs = t["on_minus_off_per_round_ms"]
        rows += [
            [
                f"{route}: memory on − memory off, p50 (sequential, {t['requests']} per case)",
                f"≤ {TARGET_ON_MINUS_OFF_MS:g} ms",
                f"{ms(t['on_minus_off_p50_ms'])} ms (per round {ms(min(diffs))}–{ms(max(diffs))})",
                verdict(t["on_minus_off_p50_ms"] <= TARGET_ON_MINUS_OFF_MS),
            ],
            [f"{route}: memory off − direct, p50", "—", f"{ms(t['off_minus_direct_p50_ms'])} ms", "—"],
            [
                f"{route}: streaming TTFT, memory on − direct, p50 ({t['streamed']} per case)",
                f"≤ {TARGET_TTFT_MS:g} ms",
                f"{ms(t['ttft_on_minus_direct_p50_ms'])} ms",
                verdict(t["ttft_on_minus_direct_p50_ms"] <= TARGET_TTFT_MS),
            ],
        ]
    rep.add(
        "**By route** (the same questions on every route):\n\n"
        + table(["figure", "target", "result", "verdict"], rows)
    )


def report(
    plan: Plan,
    chat: ChatFigures | None,
    others: dict[str, RouteFigures],
    context: dict[str, Any],
) -> Report:
    rep = Report("Gateway overhead")
    data: dict[str, Any] = {"memories": context["memories"], "in_process": context["in_process"]}
    routes = [*([CHAT] if chat is not None else []), *others]
    _intro(rep, context, routes)
    data["load"] = context["load"]
    targets: dict[str, dict[str, Any]] = {}
    if chat is not None:
        targets[CHAT] = route_targets(chat.seq, chat.stream)
        _chat_sections(rep, plan, chat, targets[CHAT], context, data)
    for route, figures in others.items():
        _route_sections(rep, plan, route, figures, context, data)
        targets[route] = route_targets(figures.seq, figures.stream)
    _by_route(rep, targets)
    data["routes"] = targets
    data["cpu_s"] = context["cpu"]
    rep.data = data
    return rep


def summary_rows(rep: Report) -> list[list[str]]:
    """Rows for run_all's summary table."""
    rows = []
    for route, t in rep.data["routes"].items():
        name = "gateway" if route == CHAT else f"gateway, {route}"
        memories = f" ({rep.data['memories']:,} memories)" if route == CHAT else ""
        rows += [
            [
                f"{name}: memory on − memory off, p50{memories}",
                f"≤ {TARGET_ON_MINUS_OFF_MS:g} ms",
                f"{ms(t['on_minus_off_p50_ms'])} ms",
                verdict(t["on_minus_off_p50_ms"] <= TARGET_ON_MINUS_OFF_MS),
            ],
            [
                f"{name}: streaming TTFT, memory on − direct, p50",
                f"≤ {TARGET_TTFT_MS:g} ms",
                f"{ms(t['ttft_on_minus_direct_p50_ms'])} ms",
                verdict(t["ttft_on_minus_direct_p50_ms"] <= TARGET_TTFT_MS),
            ],
        ]
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument(
        "--requests",
        type=int,
        default=FULL.requests,
        help=f"timed sequential requests per case ({FULL.requests})",
    )
    ap.add_argument(
        "--stream", type=int, default=FULL.stream, help=f"timed streaming requests per case ({FULL.stream})"
    )
    ap.add_argument(
        "--concurrent",
        type=int,
        default=FULL.concurrent,
        help=f"timed requests per case, {THREADS} threads ({FULL.concurrent})",
    )
    ap.add_argument(
        "--busy", type=int, default=FULL.busy, help=f"timed requests per case, busy extraction ({FULL.busy})"
    )
    ap.add_argument("--rounds", type=int, default=FULL.rounds, help=f"interleaved rounds ({FULL.rounds})")
    ap.add_argument(
        "--warmup", type=int, default=FULL.warmup, help=f"untimed requests per case first ({FULL.warmup})"
    )
    ap.add_argument(
        "--memories", type=int, default=FULL.memories, help=f"memories stored for the key ({FULL.memories})"
    )
    ap.add_argument("--in-process", action="store_true", help="run both servers in threads of this process")
    ap.add_argument(
        "--routes",
        type=routes_option,
        default=ROUTES,
        help=f"the routes to measure, comma-separated ({','.join(ROUTES)}); "
        "chat runs every phase, the others sequential and streaming",
    )
    args = ap.parse_args(argv)
    plan = (
        QUICK
        if args.quick
        else Plan(
            requests=args.requests,
            stream=args.stream,
            concurrent=args.concurrent,
            busy=args.busy,
            rounds=args.rounds,
            warmup=args.warmup,
            memories=args.memories,
        )
    )
    figures = run(
        plan, seed=args.seed, data_dir=args.data_dir, in_process=args.in_process, routes=args.routes
    )
    emit(figures, args.json)


def routes_option(value: str) -> tuple[str, ...]:
    """`--routes`: known route names, comma-separated, in the order of ROUTES."""
    names = {name.strip() for name in value.split(",") if name.strip()}
    unknown = names - set(ROUTES)
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"choose among {', '.join(ROUTES)} (got {value!r})")
    return tuple(route for route in ROUTES if route in names)


if __name__ == "__main__":
    main()
