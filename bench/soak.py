"""Soak: does the server's memory level off under sustained load?

Servers: the echo upstream (`memroute.gateway.echo.EchoUpstream`, its own uvicorn process,
started by `bench.gateway.launch`) and `memroute serve` in its own process, on a temp
database with memory and extraction on and ~300 memories for one client key.

Load (as tests/test_load.py, longer): C concurrent streaming chat clients (httpx.AsyncClient,
`stream=true`; every user message is a first-person statement, "I prefer option3x5. Which is
best?", so the echoed turn is queued for extraction) plus 4 REST writers (POST /api/memory,
upserting a rotating set of 50 memory keys each, 10 ms apart) for N chat requests. The
statements repeat (7 per client), so the database stays about the same size and any lasting
growth of the process is not data.

Every `--every` requests the server's VmRSS, `Threads:` (both /proc/PID/status) and open file
descriptors (/proc/PID/fd) are read. By default the server is `memroute serve` started through
a small wrapper of this module (`python -m bench.soak _server --db … serve`, which calls
memroute's own CLI) that installs a SIGUSR1 handler: on each sample it also records SQLite's
own heap (`apsw.memory_used()`), the open SQLite connections (`apsw.connections()`), glibc's
heap in use / free (`mallinfo2`), Python's allocated blocks and gc-tracked objects. After the
load, the extraction queue is drained and, with the server idle, `malloc_trim(0)` is called
(SIGUSR2) to tell freed-but-retained heap from live memory. `--plain` runs
`python -m memroute serve` without the wrapper (VmRSS, threads, fds only).

Verdict: "levels off" when the RSS growth over the last third of the requests (least-squares
slope of the samples there) is below 0.5 KB per request, else "grows".

Investigation options: `--idle-cycles K` adds K rounds of (idle 12 s, longer than anyio's
10 s worker-thread idle limit, then a burst of `--every` requests) after the run;
`--tracemalloc FRAMES` starts tracemalloc in the server and compares its snapshots over the
last third of the run (slow: use fewer requests).

    python -m bench.soak                       # 30,000 requests, 100 clients, sample every 2,000
    python -m bench.soak --quick               # 2,000 requests, sample every 250
    python -m bench.soak --clients 20 --requests 10000
    python -m bench.soak --requests 6000 --every 1000 --idle-cycles 4
    python -m bench.soak --requests 6000 --every 1000 --tracemalloc 1
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.common import (
    NO_MODEL,
    Latency,
    Report,
    emit,
    log,
    ms,
    parser,
    remove_database,
    table,
    work_dir,
)
from bench.gateway import CpuMeter, Load, Server, launch
from memroute.web.serve import free_port

HOST = "127.0.0.1"
MODEL = "echo-1"
ADMIN_TOKEN = "bench-admin-token-for-memroute-benchmarks"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
ROOT = Path(__file__).resolve().parent.parent
THRESHOLD_KB_PER_REQUEST = 0.5
IDLE_S = 12.0  # longer than anyio's WorkerThread.MAX_IDLE_TIME (10 s)
PROBE_FILE_ENV = "SOAK_PROBE_FILE"
TRACEMALLOC_ENV = "SOAK_TRACEMALLOC"


@dataclass(frozen=True, slots=True)
class Plan:
    requests: int = 30_000
    clients: int = 100
    writers: int = 4
    every: int = 2_000
    memories: int = 300
    idle_cycles: int = 0
    tracemalloc: int = 0
    plain: bool = False


QUICK = Plan(requests=2_000, every=250)


# -- the server side: memroute's CLI behind a probe -------------------------------------


def _server_main(argv: Sequence[str]) -> None:
    """`python -m bench.soak _server <memroute CLI args>`: memroute's own CLI (`serve`), with a
    SIGUSR1 handler that appends the process's memory figures to $SOAK_PROBE_FILE (SIGUSR2:
    the same after `malloc_trim(0)`). Nothing of memroute is changed or patched."""
    import ctypes
    import gc
    import itertools
    import threading
    import tracemalloc

    import apsw

    out = Path(os.environ[PROBE_FILE_ENV])
    frames = int(os.environ.get(TRACEMALLOC_ENV) or 0)
    if frames:
        tracemalloc.start(frames)
    libc = ctypes.CDLL(None)

    class MallInfo2(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in (
                "arena",
                "ordblks",
                "smblks",
                "hblks",
                "hblkhd",
                "usmblks",
                "fsmblks",
                "uordblks",
                "fordblks",
                "keepcost",
            )
        ]

    mallinfo2 = getattr(libc, "mallinfo2", None)
    if mallinfo2 is not None:
        mallinfo2.restype = MallInfo2
    seq = itertools.count()

    def rss_mb() -> float:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def probe(signum: int, _frame: object) -> None:
        n = next(seq)
        record: dict[str, Any] = {"seq": n, "trim": signum == signal.SIGUSR2}
        if record["trim"]:
            record["rss_before_trim_mb"] = rss_mb()
            libc.malloc_trim(0)
        objects = gc.get_objects()
        types = collections.Counter(type(o).__qualname__ for o in objects)
        del objects
        record.update(
            rss_mb=rss_mb(),
            sqlite_mb=apsw.memory_used() / 2**20,
            sqlite_high_mb=apsw.memory_high_water() / 2**20,
            sqlite_connections=len(apsw.connections()),
            py_threads=dict(
                collections.Counter(re.sub(r"[\d_-]+$", "", t.name) for t in threading.enumerate())
            ),
            py_blocks=sys.getallocatedblocks(),
            gc_objects=sum(types.values()),
            types={name: count for name, count in types.items() if count >= 100},
        )
        if mallinfo2 is not None:
            info = mallinfo2()
            record.update(
                heap_arena_mb=info.arena / 2**20,
                heap_mmap_mb=info.hblkhd / 2**20,
                heap_used_mb=(info.uordblks + info.hblkhd) / 2**20,
                heap_free_mb=info.fordblks / 2**20,
            )
        if frames:
            record["traced_mb"] = tracemalloc.get_traced_memory()[0] / 2**20
            tracemalloc.take_snapshot().dump(str(out.parent / f"snapshot-{n}.tracemalloc"))
        with out.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    signal.signal(signal.SIGUSR1, probe)
    signal.signal(signal.SIGUSR2, probe)
    from memroute.cli import main

    main(args=list(argv), prog_name="memroute")


# -- the client side ---------------------------------------------------------------------


def proc_status(pid: int) -> tuple[float, int]:
    """(VmRSS in MB, Threads) of a process."""
    rss, threads = 0.0, 0
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return rss, threads


def open_fds(pid: int, db: str) -> tuple[int, int]:
    """(open file descriptors, those on the database or its WAL) of a process."""
    total = on_db = 0
    base = f"/proc/{pid}/fd"
    for name in os.listdir(base):
        total += 1
        with contextlib.suppress(OSError):
            target = os.readlink(f"{base}/{name}")
            on_db += target in (db, db + "-wal")
    return total, on_db


@dataclass(slots=True)
class Sample:
    requests: int
    label: str  # "" for a sample under load; else what the server was doing
    at_s: float
    rss_mb: float
    threads: int
    fds: int
    db_fds: int
    probe_seq: int | None = None
    probe: dict[str, Any] | None = None
    pending: int | None = None  # extraction jobs queued (filled in afterwards)


@dataclass
class Soak:
    plan: Plan
    base: str
    pid: int
    secret: str
    owner: str
    db: str
    probe_file: Path | None
    http: httpx.AsyncClient
    samples: list[Sample] = field(default_factory=list)
    latencies: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    writes: int = 0
    done: int = 0
    issued: int = 0
    probes_sent: int = 0
    wall_s: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    _pending_tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def sample(self, label: str = "", *, trim: bool = False) -> Sample:
        rss, threads = proc_status(self.pid)
        fds, db_fds = open_fds(self.pid, self.db)
        s = Sample(self.done, label, time.perf_counter() - self.started, rss, threads, fds, db_fds)
        if self.probe_file is not None:
            os.kill(self.pid, signal.SIGUSR2 if trim else signal.SIGUSR1)
            s.probe_seq = self.probes_sent
            self.probes_sent += 1
        self.samples.append(s)
        self._pending_tasks.append(asyncio.create_task(self._queue_depth(s)))
        if not label:
            log(
                f"{s.requests:>7,} requests: RSS {s.rss_mb:.1f} MB, {s.threads} threads, {s.fds} fds "
                f"({s.db_fds} on the database), "
                f"{len(self.errors)} errors"
            )
        return s

    async def _queue_depth(self, s: Sample) -> None:
        with contextlib.suppress(httpx.HTTPError, KeyError, ValueError):
            r = await self.http.get("/api/memory/engine-status", headers=ADMIN)
            s.pending = int(r.json()["extractionQueue"]["pending"])

    async def pending(self) -> int:
        r = await self.http.get("/api/memory/engine-status", headers=ADMIN)
        return int(r.json()["extractionQueue"]["pending"])

    async def load(self, count: int) -> None:
        """`count` more chat requests from the clients, the writers running alongside."""
        target = self.issued + count
        finished = asyncio.Event()
        writers = [asyncio.create_task(self._writer(n, finished)) for n in range(self.plan.writers)]
        await asyncio.gather(*(self._chat(n, target) for n in range(self.plan.clients)))
        finished.set()
        await asyncio.gather(*writers)
        if self.done % self.plan.every:
            self.sample()

    async def _chat(self, number: int, target: int) -> None:
        """One streaming chat client, until `target` requests are issued in all."""
        headers = {"Authorization": f"Bearer {self.secret}"}
        i = 0
        while self.issued < target:
            self.issued += 1
            text = f"I prefer option{number}x{i % 7}. Which is best?"
            body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": text}]}
            started = time.perf_counter_ns()
            try:
                async with self.http.stream("POST", "/v1/chat/completions", json=body, headers=headers) as r:
                    reply = "".join([chunk async for chunk in r.aiter_text()])
                if r.status_code != 200 or "data: [DONE]" not in reply:
                    self.errors.append(f"chat {r.status_code}: {reply[:200]}")
            except httpx.HTTPError as exc:
                self.errors.append(f"chat {type(exc).__name__}: {exc}")
            self.latencies.append(time.perf_counter_ns() - started)
            self.done += 1
            i += 1
            if self.done % self.plan.every == 0:
                self.sample()

    async def _writer(self, number: int, finished: asyncio.Event) -> None:
        """One REST writer (a rotating set of 50 memory keys, 10 ms apart) until `finished`."""
        i = 0
        while not finished.is_set():
            body = {"apiKeyId": self.owner, "content": f"note {number}-{i}", "key": f"load:{number}:{i % 50}"}
            try:
                r = await self.http.post("/api/memory", json=body, headers=ADMIN)
                if r.status_code != 200:
                    self.errors.append(f"add {r.status_code}: {r.text[:200]}")
            except httpx.HTTPError as exc:
                self.errors.append(f"add {type(exc).__name__}: {exc}")
            self.writes += 1
            i += 1
            await asyncio.sleep(0.01)

    async def drain(self, timeout: float = 300.0) -> float:
        started = time.perf_counter()
        while await self.pending():
            if time.perf_counter() - started > timeout:
                raise RuntimeError("the extraction queue did not drain")
            await asyncio.sleep(0.2)
        return time.perf_counter() - started

    async def settle(self) -> None:
        await asyncio.gather(*self._pending_tasks)
        self._pending_tasks.clear()


def attach_probes(samples: list[Sample], probe_file: Path | None, count: int) -> None:
    """Match the probe records (written by the server, in signal order) to the samples."""
    if probe_file is None:
        return
    deadline = time.monotonic() + 60
    records: dict[int, dict[str, Any]] = {}
    while time.monotonic() < deadline:
        if probe_file.exists():
            lines = probe_file.read_text(encoding="utf-8").splitlines()
            records = {r["seq"]: r for r in map(json.loads, lines)}
            if len(records) >= count:
                break
        time.sleep(0.1)
    for s in samples:
        if s.probe_seq is not None:
            s.probe = records.get(s.probe_seq)
            if s.probe and s.probe.get("trim"):  # the RSS after the trim, read by the server
                s.rss_mb = s.probe["rss_mb"]


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("memroute serve did not start")
        time.sleep(0.05)


def slope_kb_per_request(points: Sequence[tuple[int, float]]) -> float:
    """Least-squares slope of (requests, RSS MB), in KB per request."""
    n = len(points)
    if n < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    return sxy / sxx * 1024 if sxx else float("nan")


def compare_snapshots(directory: Path, first: int, last: int, top: int = 15) -> list[dict[str, Any]]:
    import tracemalloc

    a = tracemalloc.Snapshot.load(str(directory / f"snapshot-{first}.tracemalloc"))
    b = tracemalloc.Snapshot.load(str(directory / f"snapshot-{last}.tracemalloc"))
    filters = [
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap_external>"),
    ]
    a, b = a.filter_traces(filters), b.filter_traces(filters)
    out = []
    grown = sorted((s for s in b.compare_to(a, "lineno") if s.size_diff > 0), key=lambda s: -s.size_diff)
    for stat in grown[:top]:
        frame = stat.traceback[0]
        where = frame.filename
        for prefix in (str(ROOT) + "/", sys.prefix + "/lib/"):
            where = where.removeprefix(prefix)
        out.append(
            {
                "where": f"{where}:{frame.lineno}",
                "size_diff_kb": stat.size_diff / 1024,
                "count_diff": stat.count_diff,
                "size_kb": stat.size / 1024,
            }
        )
    return out


async def _drive(
    plan: Plan, base: str, pid: int, secret: str, owner: str, db: str, probe_file: Path | None
) -> Soak:
    conns = plan.clients + plan.writers + 2
    limits = httpx.Limits(max_connections=conns, max_keepalive_connections=conns, keepalive_expiry=2.0)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        soak = Soak(plan, base, pid, secret, owner, db, probe_file, http)
        soak.sample()  # before the first request
        await soak.load(plan.requests)
        soak.wall_s = time.perf_counter() - soak.started
        await soak.settle()
        drained = await soak.drain()
        log(f"extraction queue drained in {drained:.1f} s")
        soak.sample("idle, extraction queue drained")
        for cycle in range(plan.idle_cycles):
            log(f"idle cycle {cycle + 1}/{plan.idle_cycles}: {IDLE_S:.0f} s idle, then {plan.every} requests")
            await asyncio.sleep(IDLE_S)
            soak.sample(f"idle cycle {cycle + 1}: after {IDLE_S:.0f} s idle")
            await soak.load(plan.every)
            await soak.settle()
            await soak.drain()
            soak.samples[-1].label = f"idle cycle {cycle + 1}: after a burst of {plan.every}"
        soak.sample("idle, after malloc_trim(0)" if probe_file is not None else "idle", trim=True)
        await soak.settle()
        return soak


def run(plan: Plan, *, data_dir: Path | None) -> Report:
    from memroute import Memory

    with work_dir(data_dir) as directory:
        db = directory / "soak.db"
        remove_database(db)
        probe_file = None if plan.plain else directory / "probe.jsonl"
        if probe_file is not None:
            probe_file.unlink(missing_ok=True)
            for old in directory.glob("snapshot-*.tracemalloc"):
                old.unlink()
        with Memory.open(db, start_workers=False) as setup:
            setup.update_settings(enabled=True, extraction_enabled=True, **NO_MODEL)
            key, secret = setup.keys.create("soak")
            for i in range(plan.memories):
                setup.add(key.id, f"prefers option{i} for project {i % 13}")
            before = setup.stats(key.id).total
        server_log = directory / "server.log"
        with launch("echo", in_process=False) as upstream, server_log.open("wb") as log_file:
            port = free_port()
            env = {
                **os.environ,
                "MEMROUTE_ADMIN_TOKEN": ADMIN_TOKEN,
                "MEMROUTE_UPSTREAM_BASE_URL": upstream.url + "/v1",
                "MEMROUTE_PORT": str(port),
                # One key sends the whole load: its gateway limits let all the clients through.
                "MEMROUTE_KEY_MAX_CONCURRENT": str(plan.clients),
                "MEMROUTE_MAX_CONCURRENT": str(max(plan.clients, 128)),
                "MEMROUTE_KEY_RPM": "0",
                "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            }
            cli = ["--db", str(db), "serve"]
            if probe_file is None:
                cmd = [sys.executable, "-m", "memroute", *cli]
            else:
                env[PROBE_FILE_ENV] = str(probe_file)
                if plan.tracemalloc:
                    env[TRACEMALLOC_ENV] = str(plan.tracemalloc)
                cmd = [sys.executable, "-m", "bench.soak", "_server", *cli]
            proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=log_file, stderr=log_file)
            try:
                base = f"http://{HOST}:{port}"
                wait_ready(base, proc)
                gateway = Server(base, proc.pid)
                load = Load(CpuMeter({"upstream": upstream, "gateway": gateway}))
                load.start()
                loadavg_start = os.getloadavg()
                log(
                    f"{plan.requests:,} requests, {plan.clients} clients, {plan.writers} writers, "
                    f"server pid {proc.pid}"
                )
                soak = asyncio.run(
                    _drive(plan, base, proc.pid, secret, key.id, str(db.resolve()), probe_file)
                )
                cpu = load.stop()
                cpu["loadavg_start"], cpu["loadavg_end"] = loadavg_start[0], os.getloadavg()[0]
                cpu["server_cpu_s"] = gateway.cpu_s() or 0.0
                attach_probes(soak.samples, probe_file, soak.probes_sent)
                snapshots: list[dict[str, Any]] = []
                if plan.tracemalloc:
                    tail = tail_samples(soak.samples, plan.requests)
                    first, last = tail[0].probe_seq, tail[-1].probe_seq
                    if first is not None and last is not None and first != last:
                        snapshots = compare_snapshots(directory, first, last)
            finally:
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
        text = server_log.read_text(encoding="utf-8", errors="replace")
        with Memory.open(db, start_workers=False) as after:
            after_total = after.stats(key.id).total
        context = {
            "cpu": cpu,
            "memories": (before, after_total),
            "locked": text.count("database is locked"),
            "tracebacks": text.count("Traceback"),
            "snapshots": snapshots,
            "db_mb": sum(Path(f"{db}{s}").stat().st_size for s in ("", "-wal") if Path(f"{db}{s}").exists())
            / 2**20,
        }
    return report(plan, soak, context)


def tail_samples(samples: Sequence[Sample], requests: int) -> list[Sample]:
    """Samples under load over the last third of the main run."""
    under_load = [s for s in samples if not s.label and s.requests <= requests]
    return [s for s in under_load if s.requests >= requests * 2 / 3]


# -- the report --------------------------------------------------------------------------


def _f(value: Any, fmt: str = ".1f") -> str:
    return "—" if value is None else format(value, fmt)


def report(plan: Plan, soak: Soak, context: dict[str, Any]) -> Report:
    rep = Report("Soak")
    samples = soak.samples
    lat = Latency(soak.latencies[: plan.requests])
    wall = soak.wall_s
    per_s = plan.requests / wall if wall else 0.0
    tail = tail_samples(samples, plan.requests)
    growth = slope_kb_per_request([(s.requests, s.rss_mb) for s in tail])
    endpoints = (
        (tail[-1].rss_mb - tail[0].rss_mb) * 1024 / (tail[-1].requests - tail[0].requests)
        if len(tail) >= 2
        else float("nan")
    )
    levels_off = growth < THRESHOLD_KB_PER_REQUEST
    verdict = (
        f"levels off ({growth:.2f} KB/request over the last third)"
        if levels_off
        else f"grows, {growth:.2f} KB/request over the last third"
    )
    cpu = context["cpu"]
    before, after = context["memories"]
    probed = any(s.probe for s in samples)
    rep.add(
        f"`memroute serve` (own process{'' if plan.plain else ', behind the SIGUSR1 probe wrapper'}) "
        f"→ echo upstream (own process); {plan.clients} concurrent streaming chat clients "
        f"(httpx.AsyncClient, one statement per request, extraction on) + {plan.writers} REST writers "
        f"(POST /api/memory, 50 rotating memory keys each); {plan.requests:,} chat requests, "
        f"{soak.writes:,} REST writes; {before:,} memories for the key at the start, {after:,} at the "
        f"end; database {context['db_mb']:.1f} MB at the end."
    )
    rows = []
    prev: Sample | None = None
    for s in samples:
        delta = "—"
        if prev is not None and not s.label and s.requests > prev.requests:
            delta = f"{(s.rss_mb - prev.rss_mb) / (s.requests - prev.requests) * 1000:+.2f}"
        row = [
            f"{s.requests:,}" + (f" ({s.label})" if s.label else ""),
            f"{s.rss_mb:.1f}",
            delta,
            s.threads,
            f"{s.fds} ({s.db_fds})",
            _f(s.pending, "d"),
        ]
        if probed:
            p = s.probe or {}
            row += [
                _f(p.get("sqlite_mb")),
                _f(p.get("sqlite_connections"), "d"),
                _f(p.get("heap_used_mb")),
                _f(p.get("heap_free_mb")),
                _f(p.get("heap_arena_mb")),
                _f(p.get("gc_objects"), ",d"),
            ]
        rows.append(row)
        if not s.label:
            prev = s
    headers = [
        "requests",
        "RSS MB",
        "Δ MB per 1k requests",
        "threads",
        "fds (on the database)",
        "extraction queue",
    ]
    if probed:
        headers += [
            "SQLite heap MB",
            "SQLite connections",
            "malloc in use MB",
            "malloc free MB",
            "malloc arena MB",
            "gc objects",
        ]
    rep.add(table(headers, rows))
    if probed:
        rep.add(
            "*SQLite heap*: `apsw.memory_used()` (page caches, schema, statements of every connection); "
            "*SQLite connections*: `len(apsw.connections())`; *malloc*: glibc `mallinfo2()` over all "
            "arenas (in use = `uordblks + hblkhd`, free = `fordblks`, arena = `arena`, the sbrk/heap "
            "memory obtained); *gc objects*: `len(gc.get_objects())`. Read inside the server by a "
            "SIGUSR1 handler at the moment of the sample."
        )
    rep.add(
        f"Throughput {per_s:,.0f} chat requests/s ({wall:.0f} s); whole-stream latency p50 "
        f"{ms(lat.p50)} ms, p99 {ms(lat.p99)} ms, max {ms(lat.max)} ms; errors {len(soak.errors)}; "
        f"“database is locked” in the server log: {context['locked']}; tracebacks: {context['tracebacks']}."
    )
    rep.add(
        f"Machine load: during the run the benchmark's processes (client, upstream, gateway) used "
        f"{cpu['ours_s']:.0f} CPU-s (the gateway {cpu['server_cpu_s']:.0f}) and other processes "
        f"{cpu['others_s']:.0f} CPU-s ({cpu['others_s'] / cpu['wall_s'] * 100:.0f} % of one CPU) over "
        f"{cpu['wall_s']:.0f} s; 1-minute load average {cpu['loadavg_start']:.2f} → {cpu['loadavg_end']:.2f}."
    )
    rep.add(
        f"**Verdict: {verdict}** (threshold {THRESHOLD_KB_PER_REQUEST} KB/request; least-squares slope of "
        f"the {len(tail)} samples from {tail[0].requests:,} to {tail[-1].requests:,} requests; "
        f"endpoints {endpoints:.2f} KB/request)."
        if tail
        else "**Verdict: —** (too few samples)"
    )
    if context["snapshots"]:
        rep.add(
            "tracemalloc, allocation sites that grew most over the last third (Python allocations "
            "only: SQLite's page caches are allocated by SQLite itself and not traced):\n\n"
            + table(
                ["where", "Δ KB", "Δ blocks", "KB now"],
                [
                    [
                        s["where"],
                        f"{s['size_diff_kb']:+,.0f}",
                        f"{s['count_diff']:+,}",
                        f"{s['size_kb']:,.0f}",
                    ]
                    for s in context["snapshots"]
                ],
            )
        )
    if probed:
        first = next((s.probe for s in tail if s.probe), None)
        last = next((s.probe for s in reversed(tail) if s.probe), None)
        if first and last:
            grew = sorted(
                ((n, last["types"].get(n, 0) - first["types"].get(n, 0)) for n in last["types"]),
                key=lambda item: -item[1],
            )[:8]
            rep.add(
                "gc-tracked objects that grew most over the last third: "
                + ", ".join(f"{n} {d:+,}" for n, d in grew if d > 0)
                + f"; server threads by name at the end: {last['py_threads']}."
            )
    rep.data = {
        "plan": asdict(plan),
        "samples": [asdict(s) for s in samples],
        "per_s": per_s,
        "wall_s": wall,
        "latency": lat.to_dict(),
        "errors": len(soak.errors),
        "first_errors": soak.errors[:5],
        "writes": soak.writes,
        "growth_kb_per_request": growth,
        "growth_endpoints_kb_per_request": endpoints,
        "levels_off": levels_off,
        "verdict": "levels off" if levels_off else "grows",
        **{k: v for k, v in context.items() if k != "cpu"},
        "load": cpu,
    }
    return rep


def main(argv: Sequence[str] | None = None) -> None:
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["_server"]:
        _server_main(args_in[1:])
        return
    ap = parser(__doc__.splitlines()[0])
    default = Plan()
    ap.add_argument("--requests", type=int, default=None, help=f"chat requests ({default.requests:,})")
    ap.add_argument(
        "--clients", type=int, default=default.clients, help=f"concurrent clients ({default.clients})"
    )
    ap.add_argument("--writers", type=int, default=default.writers, help=f"REST writers ({default.writers})")
    ap.add_argument("--every", type=int, default=None, help=f"sample every N requests ({default.every:,})")
    ap.add_argument(
        "--memories", type=int, default=default.memories, help=f"memories stored ({default.memories})"
    )
    ap.add_argument("--idle-cycles", type=int, default=0, help="after the run: K × (12 s idle, a burst)")
    ap.add_argument("--tracemalloc", type=int, default=0, metavar="FRAMES", help="tracemalloc in the server")
    ap.add_argument("--plain", action="store_true", help="`python -m memroute serve`, without the probe")
    args = ap.parse_args(args_in)
    base = QUICK if args.quick else default
    plan = Plan(
        requests=args.requests or base.requests,
        clients=args.clients,
        writers=args.writers,
        every=args.every or base.every,
        memories=args.memories,
        idle_cycles=args.idle_cycles,
        tracemalloc=args.tracemalloc,
        plain=args.plain,
    )
    if plan.tracemalloc and plan.plain:
        ap.error("--tracemalloc needs the probe (drop --plain)")
    emit(run(plan, data_dir=args.data_dir), args.json)


if __name__ == "__main__":
    main()
