"""Gateway under load: direct, memory off and memory on (N memories for the key, 100 of
them injected), streamed and not, at 1, 16 and 64 concurrent clients, with one and with
several server processes (`memroute serve --workers N`).

Every part runs in a process of its own: the upstream (`bench/load_upstream.py`, a bare
asyncio server: a 48-word reply, 48 chunks when streamed), the gateway (`memroute serve`,
as a user starts it) and the load generator (`bench/load_client.py`, aiohttp, keep-alive),
so the client never competes with the gateway for an interpreter. The gateway's CPU per
request is read from /proc (all its processes) over the timed window; its memory (RSS
of each server process) idle, after start, and after the load.

    python -m bench.gateway_load                   # workers 1 and 2, 5 s per run
    python -m bench.gateway_load --workers 1,2,4 --seconds 10
    python -m bench.gateway_load --quick                 # workers 1,2; 1 and 8 clients; 1 s
    python -m bench.gateway_load --litellm /opt/litellm/bin/litellm   # LiteLLM Proxy beside it
    python -m bench.gateway_load --wrk                   # non-streamed load sent by wrk
    python -m bench.gateway_load --wrk --pin-cpus auto   # each server process on a CPU of its own
    python -m bench.gateway_load --wrk --rounds 3        # three whole rounds; each figure's median

With `--litellm`, LiteLLM Proxy (installed in a virtual environment of its own, see
bench/litellm_proxy.py) takes the same load after memroute, and a table sets the two side
by side as the gateway-efficiency issue did. With `--wrk`, the non-streamed runs are sent
by Debian's `wrk` (bench/wrk_load.py), whose CPU per request is a tenth of the aiohttp
client's: on two cores, more of the machine is left to the gateway. With `--rounds N`, the
whole set of runs is made N times, one round after the other, and each target is judged on
the median of its N figures (each round's beside it): on a shared machine one slow minute
moves a single round's figures by half (see docs/benchmarks.md), and a verdict should not
hang on it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench import wrk_load
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
    stop_process,
    table,
    verdict,
    wait_http,
    work_dir,
)
from bench.corpus import queries
from bench.gateway import SETTINGS, store_memories
from bench.litellm_proxy import executable, litellm_proxy
from bench.load_upstream import BURST_MODEL, MODEL
from bench.soak import proc_status
from memroute import Memory
from memroute.web.serve import free_port

HOST = "127.0.0.1"
ADMIN_TOKEN = "bench-admin-token-for-memroute-load-runs"
DIRECT, OFF, ON = "direct", "off", "on"
LITELLM = "LiteLLM Proxy"

# Targets of the gateway-efficiency issue (2 cores, side by side in one run).
TARGET_OFF_CPU_MS = 1.5
TARGET_OFF_STREAM_CPU_MS = 3.0
TARGET_OFF_MINUS_DIRECT_MS = 2.0
TARGET_ON_CPU_MS = 3.0
TARGET_ON_MINUS_OFF_MS = 2.0
TARGET_WORKER_SCALING = 1.8
TARGET_P99_OVER_P50 = 4.0
TARGET_IDLE_RSS_MIB = 110.0


@dataclass(frozen=True, slots=True)
class Plan:
    workers: tuple[int, ...] = (1, 2)
    concurrency: tuple[int, ...] = (1, 16, 64)
    seconds: float = 5.0
    warmup_s: float = 1.0
    memories: int = 1000
    questions: int = 400
    chat_threads: int | None = None  # MEMROUTE_CHAT_THREADS of the gateway (None: its default)
    pin_cpus: str | None = None  # MEMROUTE_PIN_CPUS of the gateway (None: its default, off)
    litellm: Path | None = None  # LiteLLM Proxy's `litellm` executable, to measure it beside memroute
    wrk: Path | None = None  # Debian's `wrk`, to send the non-streamed load (bench/wrk_load.py)
    rounds: int = 1  # whole rounds of runs; the targets are judged on each figure's median


QUICK = Plan(concurrency=(1, 8), seconds=1.0, warmup_s=0.3, memories=200, questions=100)


def _tree(pid: int) -> list[int]:
    """`pid` and all its descendants."""
    found = [pid]
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            found.extend(_tree(int(child)))
    return found


def _cpu_s(pids: Sequence[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            total += process_cpu_s(pid)
    return total


def _rss_mib(pid: int) -> float:
    return proc_status(pid)[0]


@dataclass
class Gateway:
    url: str
    process: subprocess.Popen[bytes]

    def servers(self) -> list[int]:
        """The processes that serve requests: the workers (or the process itself)."""
        tree = _tree(self.process.pid)
        workers = [p for p in tree[1:] if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]
        return workers or [self.process.pid]

    def cpu_s(self) -> float:
        return _cpu_s(_tree(self.process.pid))


@dataclass
class Upstream:
    url: str
    process: subprocess.Popen[bytes]

    def cpu_s(self) -> float:
        return _cpu_s([self.process.pid])


def _client_cpu_s() -> float:
    """CPU seconds of this process's finished children (each load client, once it has ended)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _machine_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of all cores so far, from /proc/stat."""
    with open("/proc/stat", encoding="ascii") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]  # idle and iowait
    return sum(values) - idle, sum(values)


@contextlib.contextmanager
def upstream() -> Iterator[Upstream]:
    port = free_port(HOST)
    proc = subprocess.Popen([sys.executable, "-m", "bench.load_upstream", str(port)])
    try:
        wait_http(f"http://{HOST}:{port}/v1/models")
        yield Upstream(f"http://{HOST}:{port}", proc)
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def gateway(
    db: Path,
    upstream_url: str,
    workers: int,
    chat_threads: int | None = None,
    extra_env: dict[str, str] | None = None,
    checkout: Path | None = None,
) -> Iterator[Gateway]:
    """`memroute serve` on `db` (or on the database `extra_env` names) with `workers` processes;
    with `checkout`, that checkout's memroute (started from its folder, which `-m` puts first
    on the module path)."""
    port = free_port(HOST)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMROUTE_")}
    env.update(
        MEMROUTE_DATA_DIR=str(db.parent),
        MEMROUTE_ADMIN_TOKEN=ADMIN_TOKEN,
        MEMROUTE_UPSTREAM_BASE_URL=upstream_url + "/v1",
        MEMROUTE_ACCESS_LOG="false",
        MEMROUTE_KEY_RPM="0",  # one key sends every request: its limits would be what is measured
        MEMROUTE_KEY_MAX_CONCURRENT="1000",
        MEMROUTE_MAX_CONCURRENT="1000",
    )
    if chat_threads is not None:
        env["MEMROUTE_CHAT_THREADS"] = str(chat_threads)
    env.update(extra_env or {})
    # For A/B runs: the words asked alone (MEMROUTE_RELATED_WORDS=false), no recall by
    # meaning (MEMROUTE_MEANINGS=false), admissions all at once (MEMROUTE_CHAT_SERIAL=false),
    # each streamed piece relayed as it comes (MEMROUTE_STREAM_GATHER_MS=0).
    for name in (
        "MEMROUTE_RELATED_WORDS",
        "MEMROUTE_MEANINGS",
        "MEMROUTE_CHAT_SERIAL",
        "MEMROUTE_STREAM_GATHER_MS",
    ):
        if name in os.environ:
            env[name] = os.environ[name]
    command = [sys.executable, "-m", "memroute", "--db", str(db), "serve", "--port", str(port)]
    proc = subprocess.Popen(
        [*command, "--workers", str(workers)],
        env=env,
        cwd=checkout,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_http(f"http://{HOST}:{port}/healthz")
        running = Gateway(f"http://{HOST}:{port}", proc)
        deadline = time.monotonic() + 60
        while len(running.servers()) < workers and time.monotonic() < deadline:
            time.sleep(0.1)
        yield running
    finally:
        stop_process(proc, 90)


def load(
    url: str,
    key: str,
    questions: Sequence[str],
    concurrency: int,
    stream: bool,
    plan: Plan,
    model: str = MODEL,
) -> dict[str, Any]:
    if plan.wrk is not None and not stream:
        return wrk_load.run(plan.wrk, url, key, questions, concurrency, plan.seconds, plan.warmup_s)
    command = [sys.executable, "-m", "bench.load_client", url, key, "--concurrency", str(concurrency)]
    command += ["--seconds", str(plan.seconds), "--warmup", str(plan.warmup_s), "--model", model]
    if stream:
        command.append("--stream")
    done = subprocess.run(command, input="\n".join(questions), capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@dataclass
class Run:
    workers: int
    case: str
    stream: bool
    concurrency: int
    latency: Latency
    ttft: Latency | None
    per_s: float
    cpu_ms: float | None  # gateway CPU per completed request
    refused: dict[str, int]
    upstream_cpu_ms: float = 0.0  # the bare upstream's CPU per request: what a minimal asyncio server costs
    client_cpu_ms: float = 0.0  # the load generator's CPU per request
    machine_busy: float = 0.0  # share of all the cores in use during the run (every process)
    round: int = 1  # which round of `Plan.rounds` it belongs to
    back_to_back: bool = False  # streamed with the chunks back to back (the upstream)

    def row(self) -> list[Any]:
        ratio = self.latency.p99 / self.latency.p50 if self.latency.n else 0
        return [
            self.workers if self.case != DIRECT else "—",
            self.case,
            ("yes, back to back" if self.back_to_back else "yes") if self.stream else "no",
            self.concurrency,
            f"{self.per_s:,.0f}",
            ms(self.latency.p50),
            ms(self.latency.p99),
            f"{ratio:.1f}",
            ms(self.ttft.p50) if self.ttft and self.ttft.n else "—",
            "—" if self.cpu_ms is None else f"{self.cpu_ms:.2f}",
            f"{self.upstream_cpu_ms:.2f}",
            f"{self.client_cpu_ms:.2f}",
            f"{self.machine_busy * 100:.0f}",
            ", ".join(f"{k[7:]}: {v}" for k, v in sorted(self.refused.items())) or "0",
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "case": self.case,
            "stream": self.stream,
            "concurrency": self.concurrency,
            "per_s": self.per_s,
            "latency": self.latency.to_dict(),
            "ttft": self.ttft.to_dict() if self.ttft and self.ttft.n else None,
            "cpu_ms_per_request": self.cpu_ms,
            "upstream_cpu_ms_per_request": self.upstream_cpu_ms,
            "client_cpu_ms_per_request": self.client_cpu_ms,
            "machine_busy": self.machine_busy,
            "round": self.round,
            "chunks_back_to_back": self.back_to_back,
            "refused": self.refused,
        }


def idle_cpu_rate(gw: Gateway, seconds: float = 1.0) -> float:
    """CPU seconds per second the gateway spends with no request (its background threads):
    the lower of two windows, after it has had a second to finish starting."""
    time.sleep(1.0)
    rates = []
    for _ in range(2):
        before = gw.cpu_s()
        time.sleep(seconds)
        rates.append((gw.cpu_s() - before) / seconds)
    return min(rates)


def drain(side: Memory, timeout: float = 120.0) -> None:
    """Wait until the gateway's extraction worker has processed everything queued."""
    deadline = time.monotonic() + timeout
    while side.extraction_queue().pending:
        if time.monotonic() > deadline:
            raise RuntimeError("the gateway's extraction queue did not drain")
        time.sleep(0.05)


def measure(
    plan: Plan,
    up: Upstream,
    key: str,
    qs: Sequence[str],
    case: str,
    workers: int,
    gw: Gateway | None,
    idle: float = 0.0,
    settle: Callable[[], None] | None = None,
) -> list[Run]:
    """Every streamed/not × concurrency run of one case (sent to `gw`, or straight to the
    upstream without it); the gateway's CPU per request is net of what it spends idle
    (`idle` CPU seconds per second). The upstream's and the load generator's CPU per
    request, and how busy the machine was, say what the run left the gateway. `settle`
    runs before each run (the gateway's extraction queue drained: what earlier runs
    queued is not charged to this one). Direct, and memory off with the fewest workers,
    also stream at the fewest clients with the chunks back to back, as the issue's upstream
    sent them."""
    runs = []
    lone = min(plan.concurrency)
    burst = case in (DIRECT, OFF) and workers in (0, min(plan.workers))
    plans = [(stream, c, False) for stream in (False, True) for c in plan.concurrency]
    plans += [(True, lone, True)] if burst else []
    for stream, concurrency, back_to_back in plans:
        if settle is not None:
            settle()
        before = gw.cpu_s() if gw is not None else None
        up_before, client_before, ticks_before = up.cpu_s(), _client_cpu_s(), _machine_ticks()
        started = time.perf_counter()
        model = BURST_MODEL if back_to_back else MODEL
        result = load(gw.url if gw is not None else up.url, key, qs, concurrency, stream, plan, model)
        wall = time.perf_counter() - started
        busy, total = (now - then for now, then in zip(_machine_ticks(), ticks_before, strict=True))
        latency = Latency(result["latency_ns"])
        # The CPU of the whole client run (warm-up included) over every request it sent.
        sent = max(latency.n * (wall / result["timed_s"]), 1)
        cpu_ms = None
        if gw is not None and before is not None and latency.n:
            cpu_ms = max(0.0, gw.cpu_s() - before - idle * wall) * 1000 / sent
        run = Run(
            workers,
            case,
            stream,
            concurrency,
            latency,
            Latency(result["ttft_ns"]) if stream else None,
            latency.n / result["timed_s"],
            cpu_ms,
            result["refused"],
            upstream_cpu_ms=(up.cpu_s() - up_before) * 1000 / sent,
            client_cpu_ms=(_client_cpu_s() - client_before) * 1000 / sent,
            machine_busy=busy / max(total, 1),
            back_to_back=back_to_back,
        )
        pace = " back to back" if back_to_back else ""
        log(f"{case} workers={workers} stream={stream}{pace} c={concurrency}: {run.per_s:.0f}/s")
        runs.append(run)
    return runs


def run(plan: Plan, *, seed: int, data_dir: Path | None) -> Report:
    report = Report("Gateway under load")
    with work_dir(data_dir) as directory:
        db = directory / "load.db"
        remove_database(db)
        side = Memory.open(db, start_workers=False)
        key, secret = side.keys.create("load")
        side.update_settings(enabled=False, **NO_MODEL)  # no model loaded at start
        store_memories(side, key.id, plan.memories, seed)
        qs = queries(seed + 1, plan.questions)
        runs: list[Run] = []
        rss: dict[int | str, tuple[list[float], list[float]]] = {}
        idle_ms_per_s: dict[int, float] = {}
        with upstream() as up:
            for number in range(1, plan.rounds + 1):
                if plan.rounds > 1:
                    log(f"round {number} of {plan.rounds}")
                found = _round(plan, up, side, db, secret, qs, rss, idle_ms_per_s)
                runs += [replace(r, round=number) for r in found]
            if plan.litellm is not None:
                beside = _beside_litellm(plan, plan.litellm, up, qs, directory, rss)
                runs += [replace(r, round=plan.rounds) for r in beside]  # measured after the last
        side.close()
    _report(report, plan, runs, rss)
    report.data["idle_cpu_ms_per_s"] = idle_ms_per_s
    return report


def _round(
    plan: Plan,
    up: Upstream,
    side: Memory,
    db: Path,
    secret: str,
    qs: Sequence[str],
    rss: dict[int | str, tuple[list[float], list[float]]],
    idle_ms_per_s: dict[int, float],
) -> list[Run]:
    """One round: direct, then for each number of workers a gateway started afresh with
    memory off and on. Each process's RSS and the idle CPU are kept at their largest over
    the rounds."""
    runs = measure(plan, up, secret, qs, DIRECT, 0, None)
    for workers in plan.workers:
        pinned = {"MEMROUTE_PIN_CPUS": plan.pin_cpus} if plan.pin_cpus else None
        with gateway(db, up.url, workers, plan.chat_threads, pinned) as gw:
            idle = [_rss_mib(p) for p in gw.servers()]
            idle_cpu = idle_cpu_rate(gw)
            idle_ms_per_s[workers] = max(idle_ms_per_s.get(workers, 0.0), idle_cpu * 1000)
            log(f"{workers} worker(s) idle: {idle_cpu * 1000:.1f} ms of CPU per second")
            for case in (OFF, ON):
                side.update_settings(SETTINGS[case])
                runs += measure(plan, up, secret, qs, case, workers, gw, idle_cpu, lambda: drain(side))
            after = [_rss_mib(p) for p in gw.servers()]
        before_idle, before_after = rss.get(workers, ([], []))
        rss[workers] = (_largest(before_idle, idle), _largest(before_after, after))
    return runs


def _largest(kept: list[float], new: list[float]) -> list[float]:
    """Each process's figure, the larger of what was kept and what was just read."""
    return [max(pair) for pair in zip(kept, new, strict=True)] if kept else new


def _beside_litellm(
    plan: Plan,
    command: Path,
    up: Upstream,
    qs: Sequence[str],
    directory: Path,
    rss: dict[int | str, tuple[list[float], list[float]]],
) -> list[Run]:
    """Every streamed/not × concurrency run sent to LiteLLM Proxy (one worker) instead."""
    with litellm_proxy(command, up.url, directory) as proxy:
        gw = Gateway(proxy.url, proxy.process)
        idle = [_rss_mib(p) for p in gw.servers()]
        idle_cpu = idle_cpu_rate(gw)
        log(f"{LITELLM} idle: {idle_cpu * 1000:.1f} ms of CPU per second")
        runs = measure(plan, up, proxy.key, qs, LITELLM, 1, gw, idle_cpu)
        rss[LITELLM] = (idle, [_rss_mib(p) for p in gw.servers()])
    return runs


def _find(
    runs: Sequence[Run],
    case: str,
    stream: bool,
    concurrency: int,
    workers: int | None = None,
    back_to_back: bool = False,
) -> Run | None:
    for r in runs:
        same = (r.case, r.stream, r.concurrency, r.back_to_back) == (case, stream, concurrency, back_to_back)
        if same and (workers is None or r.workers == workers or case == DIRECT):
            return r
    return None


def _report(
    report: Report, plan: Plan, runs: Sequence[Run], rss: dict[int | str, tuple[list[float], list[float]]]
) -> None:
    report.add(
        f"Each run: {plan.seconds:g} s timed after {plan.warmup_s:g} s of warm-up, one client key with "
        f"{plan.memories:,} memories (memory on injects up to 100), {plan.questions} distinct questions. "
        "CPU: all the gateway's processes, per request sent, less what they spend idle (their "
        "background threads, the lower of two 1 s windows before the runs); the upstream's (a bare "
        "asyncio server: what answering costs at the least on this machine) and the load generator's "
        "per request; machine busy: the share of all cores in use during the run, every process "
        "counted (near 100, a run measures the machine, not the gateway). `p99/p50` is the tail's spread. "
        + (
            "Load generator: wrk (C, one thread) for the non-streamed runs, whole seconds each, latencies "
            "read from its histogram; the aiohttp client for the streamed ones."
            if plan.wrk is not None
            else "Load generator: the aiohttp client."
        )
        + (
            " Each server process's event loop and chat threads held to one CPU "
            f"(`MEMROUTE_PIN_CPUS={plan.pin_cpus}`)."
            if plan.pin_cpus
            else ""
        )
    )
    headers = [
        "workers",
        "case",
        "streamed",
        "concurrent",
        "req/s",
        "p50 ms",
        "p99 ms",
        "p99/p50",
        "TTFT p50 ms",
    ]
    cpu = ["gateway CPU ms/request", "upstream CPU ms/request", "client CPU ms/request", "machine busy %"]
    rounds = sorted({r.round for r in runs})
    if len(rounds) > 1:
        report.add(table(["round", *headers, *cpu, "refused"], [[r.round, *r.row()] for r in runs]))
    else:
        report.add(table([*headers, *cpu, "refused"], [r.row() for r in runs]))
    report.add(
        table(
            ["workers", "RSS per server process, idle (MiB)", "after the load (MiB)"],
            [
                [w, ", ".join(f"{v:.0f}" for v in idle), ", ".join(f"{v:.0f}" for v in after)]
                for w, (idle, after) in rss.items()
            ],
        )
    )
    each = [_judged(plan, [r for r in runs if r.round == number]) for number in rounds]
    figures = each[0] if len(each) == 1 else Figures.median_of(plan, each)
    for workers, (idle, _after) in rss.items():
        if workers != LITELLM:
            figures.at_most(
                f"idle RSS per worker, {workers} worker(s), MiB (largest)", TARGET_IDLE_RSS_MIB, max(idle)
            )
    report.add(table(["figure", "target", "result", "verdict"], figures.rows))
    report.data = {"runs": [r.to_dict() for r in runs], "rss_mib": rss, **figures.values}
    if len(each) > 1:
        report.data["rounds"] = [round_.values for round_ in each]
    if LITELLM in rss:
        last = [r for r in runs if r.round == rounds[-1]]  # memroute's runs nearest LiteLLM's in time
        rows = SideBySide(plan, last, rss).rows()
        report.add(
            f"**Beside {LITELLM}** (one worker each, the same upstream, client and questions; "
            f"memroute's memory on injects up to 100 memories, {LITELLM} none):"
        )
        report.add(table(["measure", DIRECT, "memroute, memory off", "memroute, memory on", LITELLM], rows))
        report.data["side_by_side"] = rows


class SideBySide:
    """The gateway-efficiency issue's table: direct, memroute (one worker) with memory off
    and on, and LiteLLM Proxy, measure by measure (`rows`)."""

    CASES = (DIRECT, OFF, ON, LITELLM)

    def __init__(
        self, plan: Plan, runs: Sequence[Run], rss: dict[int | str, tuple[list[float], list[float]]]
    ) -> None:
        self.runs, self.rss = runs, rss
        self.one, self.low, self.high = min(plan.workers), min(plan.concurrency), max(plan.concurrency)
        self.mid = sorted(plan.concurrency)[-2] if len(plan.concurrency) > 1 else self.high

    def rows(self) -> list[list[str]]:
        one = f"{self.low} client" + ("" if self.low == 1 else "s")
        loads = sorted({self.mid, self.high} - {self.low}) or [self.high]  # each load once
        return [
            [f"added latency over direct, p50 ms, {one}", *self._each(self._added)],
            [f"time to first token, p50 ms (streamed), {one}", *self._each(self._ttft)],
            [
                f"gateway CPU ms per request, non-streamed / streamed (48 chunks), {one}",
                *self._each(self._cpu),
            ],
            *(
                [
                    f"requests/s at {n} clients (p99 ms)",
                    *self._each(functools.partial(self._per_s, concurrency=n)),
                ]
                for n in loads
            ),
            ["RSS idle → after the load, MiB (largest process)", *self._each(self._memory)],
        ]

    def _each(self, read: Callable[[str], str]) -> list[str]:
        return [read(case) for case in self.CASES]

    def _run(self, case: str, stream: bool, concurrency: int) -> Run | None:
        return _find(self.runs, case, stream, concurrency, self.one if case in (OFF, ON) else 1)

    def _added(self, case: str) -> str:
        direct, r = self._run(DIRECT, False, self.low), self._run(case, False, self.low)
        if case == DIRECT or r is None or direct is None:
            return "—"
        return f"+{r.latency.p50 - direct.latency.p50:.2f}"

    def _ttft(self, case: str) -> str:
        r = self._run(case, True, self.low)
        return ms(r.ttft.p50) if r and r.ttft and r.ttft.n else "—"

    def _cpu(self, case: str) -> str:
        once, stream = self._run(case, False, self.low), self._run(case, True, self.low)
        if once is None or stream is None or once.cpu_ms is None or stream.cpu_ms is None:
            return "—"
        return f"{once.cpu_ms:.2f} / {stream.cpu_ms:.2f}"

    def _per_s(self, case: str, concurrency: int) -> str:
        r = self._run(case, False, concurrency)
        return "—" if r is None else f"{r.per_s:,.0f} (p99 {ms(r.latency.p99)})"

    def _memory(self, case: str) -> str:
        held = None if case == DIRECT else self.rss.get(LITELLM if case == LITELLM else self.one)
        return "—" if held is None else f"{max(held[0]):.0f} → {max(held[1]):.0f}"


def _judged(plan: Plan, runs: Sequence[Run]) -> Figures:
    """The targets read off one round's runs."""
    figures = Figures(plan, runs)
    figures.single_client()
    figures.under_load()
    figures.scaling()
    return figures


class Figures:
    """The issue's targets read off the runs: rows of (figure, target, result, verdict)."""

    def __init__(self, plan: Plan, runs: Sequence[Run]) -> None:
        self.plan, self.runs = plan, runs
        self.one = min(plan.workers)
        self.low, self.high = min(plan.concurrency), max(plan.concurrency)
        self.mid = sorted(plan.concurrency)[-2] if len(plan.concurrency) > 1 else self.high
        self.rows: list[list[Any]] = []
        self.values: dict[str, float | None] = {}
        # Each figure's target as shown and its test (None: a reference, without a target).
        self.targets: dict[str, tuple[str, Callable[[float], bool] | None]] = {}

    @classmethod
    def median_of(cls, plan: Plan, rounds: Sequence[Figures]) -> Figures:
        """Each figure of the first round, judged on its median over `rounds`; the result
        shows every round's figure beside the median (— where a round has none)."""
        out = cls(plan, [])
        for name, (target, test) in rounds[0].targets.items():
            seen = [r.values.get(name) for r in rounds]
            known = [v for v in seen if v is not None]
            middle = statistics.median(known) if known else None
            each = " / ".join("—" if v is None else f"{v:.2f}" for v in seen)
            shown = "—" if middle is None else f"{middle:.2f} ({each})"
            judged = "—" if test is None else verdict(middle is not None and test(middle))
            out.rows.append([name, target, shown, judged])
            out.values[name] = middle
            out.targets[name] = (target, test)
        return out

    def _add(self, name: str, target: str, value: float | None, test: Callable[[float], bool] | None) -> None:
        judged = "—" if test is None else verdict(value is not None and test(value))
        self.rows.append([name, target, "—" if value is None else f"{value:.2f}", judged])
        self.values[name] = value
        self.targets[name] = (target, test)

    def at_most(self, name: str, target: float, value: float | None) -> None:
        self._add(name, f"≤ {target:g}", value, lambda v: v <= target)

    def at_least(self, name: str, target: float, value: float) -> None:
        self._add(name, f"≥ {target:g}", value, lambda v: v >= target)

    def reference(self, name: str, value: float) -> None:
        """A figure that reads the others (no target of its own)."""
        self._add(name, "—", value, None)

    def single_client(self) -> None:
        """CPU per request and added latency, one client, one process."""
        off = _find(self.runs, OFF, False, self.low, self.one)
        on = _find(self.runs, ON, False, self.low, self.one)
        direct = _find(self.runs, DIRECT, False, self.low)
        off_stream = _find(self.runs, OFF, True, self.low, self.one)
        if not (off and on and direct and off_stream):
            return
        self.at_most("memory off: gateway CPU ms per request", TARGET_OFF_CPU_MS, off.cpu_ms)
        self.at_most(
            "memory off: gateway CPU ms per 48-chunk stream", TARGET_OFF_STREAM_CPU_MS, off_stream.cpu_ms
        )
        self.reference(
            "the upstream's CPU ms per 48-chunk stream (it only writes them)", off_stream.upstream_cpu_ms
        )
        burst = _find(self.runs, OFF, True, self.low, self.one, back_to_back=True)
        if burst is not None:
            self.at_most(
                "memory off: gateway CPU ms per 48-chunk stream, chunks back to back (the issue's upstream)",
                TARGET_OFF_STREAM_CPU_MS,
                burst.cpu_ms,
            )
        self.at_most(
            "memory off − direct, p50 ms", TARGET_OFF_MINUS_DIRECT_MS, off.latency.p50 - direct.latency.p50
        )
        self.at_most("memory on: gateway CPU ms per request", TARGET_ON_CPU_MS, on.cpu_ms)
        self.at_most(
            "memory on − memory off, p50 ms", TARGET_ON_MINUS_OFF_MS, on.latency.p50 - off.latency.p50
        )

    def under_load(self) -> None:
        """Throughput that does not fall as clients are added, and a bounded tail."""
        for workers in self.plan.workers:
            for case in (OFF, ON):
                at_mid = _find(self.runs, case, False, self.mid, workers)
                at_high = _find(self.runs, case, False, self.high, workers)
                if not (at_mid and at_high) or self.mid == self.high:
                    continue
                label = f"{case}, {workers} worker(s)"
                self.at_least(
                    f"{label}: req/s at {self.high} ÷ at {self.mid}", 1, at_high.per_s / at_mid.per_s
                )
                spread = at_high.latency.p99 / at_high.latency.p50
                self.at_most(f"{label}: p99 ÷ p50 at {self.high}", TARGET_P99_OVER_P50, spread)

    def scaling(self) -> None:
        """Requests/s with the most workers against one, at the most clients."""
        most = max(self.plan.workers)
        if most == self.one:
            return
        for case in (OFF, ON):
            base = _find(self.runs, case, False, self.high, self.one)
            scaled = _find(self.runs, case, False, self.high, most)
            if base and scaled:
                name = f"{case}: req/s with {most} workers ÷ {self.one}, at {self.high}"
                self.at_least(name, TARGET_WORKER_SCALING, scaled.per_s / base.per_s)
                for run in (base, scaled):
                    label = f"{case}: machine busy % at {self.high}, {run.workers} worker(s)"
                    self.reference(label, run.machine_busy * 100)


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__ or "")
    ap.add_argument("--workers", default=None, help="server processes to measure, comma-separated (1,2)")
    ap.add_argument("--concurrency", default=None, help="concurrent clients, comma-separated (1,16,64)")
    ap.add_argument("--seconds", type=float, default=None, help="timed seconds per run (5)")
    ap.add_argument("--memories", type=int, default=None, help="memories stored for the key (1000)")
    ap.add_argument("--chat-threads", type=int, default=None, help="the gateway's MEMROUTE_CHAT_THREADS")
    ap.add_argument(
        "--pin-cpus", default=None, help="the gateway's MEMROUTE_PIN_CPUS (auto: a CPU per process)"
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="whole rounds of runs; targets judged on each figure's median (1)",
    )
    wrk_load.add_option(ap)
    ap.add_argument(
        "--litellm",
        default=None,
        metavar="PATH",
        help="LiteLLM Proxy's `litellm` executable (its own virtual environment): measured beside memroute",
    )
    args = ap.parse_args(argv)
    plan = QUICK if args.quick else Plan()
    if args.workers:
        plan = replace(plan, workers=tuple(int(w) for w in args.workers.split(",")))
    if args.concurrency:
        plan = replace(plan, concurrency=tuple(int(c) for c in args.concurrency.split(",")))
    if args.seconds:
        plan = replace(plan, seconds=args.seconds, warmup_s=min(plan.warmup_s, args.seconds))
    if args.memories:
        plan = replace(plan, memories=args.memories)
    if args.chat_threads:
        plan = replace(plan, chat_threads=args.chat_threads)
    if args.pin_cpus:
        plan = replace(plan, pin_cpus=args.pin_cpus)
    if args.rounds < 1:
        ap.error("--rounds must be 1 or more")
    plan = replace(plan, rounds=args.rounds)
    if args.litellm:
        plan = replace(plan, litellm=executable(args.litellm))  # a wrong path stops here, before any run
    if args.wrk:
        plan = replace(plan, wrk=wrk_load.executable(args.wrk))  # so does a missing wrk
    emit(run(plan, seed=args.seed, data_dir=args.data_dir), args.json)


if __name__ == "__main__":
    main()
