"""What relaying costs any Python process on this machine: a bare asyncio relay beside
`memroute serve` (memory off), at one client: streams with the load upstream's chunks 1–2 ms
apart and back to back, and single answers given at once and after a provider's think time.

The bare relay (`bench/bare_relay.py`) gives each client connection a connection to the
upstream and passes the bytes through both ways: no HTTP parsing, no routing, no key, no
memory; with gathering, it leaves the upstream unread after each piece past the second for
as long as memroute does by default (`MEMROUTE_STREAM_GATHER_MS`). So it is a floor: a
gateway does all of this and more. `MEMROUTE_STREAM_GATHER_MS=N python -m bench.relay_floor`
measures memroute with another window.
Each run sends from one client (`bench/load_client.py`) for a few seconds; the CPU per
request is read per thread from `/proc/<pid>/task/*/schedstat` (nanoseconds; `/proc/<pid>/stat`
counts 10 ms ticks), net of what the process spends idle, and so are its wake-ups (the
threads' voluntary context switches: each time they slept and were woken; what a wake-up
costs here: `python -m bench.wake_cost`). Rounds alternate the cases.

    python -m bench.relay_floor                 # 3 rounds of 6 s
    python -m bench.relay_floor --rounds 5 --seconds 8
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from tempfile import TemporaryDirectory

from bench.common import NO_MODEL, Report, emit, environ, log, parser, table, wait_http
from bench.corpus import queries
from bench.gateway_load import HOST, gateway, upstream
from memroute import Memory
from memroute.config import DEFAULT_STREAM_GATHER_MS
from memroute.web.serve import free_port

TARGET_STREAM_CPU_MS = 3.0  # issue 17: memory off, a 48-chunk stream at one client
GAPS_MS = ("1", "0")  # the load upstream's pause between chunks (bench/load_upstream.py)
BARE, MEMROUTE = "bare relay", "memroute, memory off"
BARE_GATHERED = f"bare relay, {DEFAULT_STREAM_GATHER_MS} ms gathering"
CASES = (BARE, BARE_GATHERED, MEMROUTE)


def _per_thread(pids: Sequence[int], reading: Callable[[Path], int]) -> int:
    """The sum of `reading(/proc/<pid>/task/<tid>)` over every thread of `pids` (a thread
    gone meanwhile, or unreadable, counts nothing)."""
    total = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                total += reading(task)
    return total


def thread_cpu_s(pids: Sequence[int]) -> float:
    """CPU seconds of every thread of `pids`, to the nanosecond."""
    return _per_thread(pids, lambda task: int((task / "schedstat").read_text().split()[0])) / 1e9


def wake_ups(pids: Sequence[int]) -> int:
    """How many times the threads of `pids` have slept and been woken so far (their
    voluntary context switches)."""
    field = "\nvoluntary_ctxt_switches:"
    return _per_thread(pids, lambda task: int((task / "status").read_text().split(field)[1].split()[0]))


@dataclass
class Served:
    """A relay under test: its URL and the processes whose CPU it spends."""

    url: str
    pids: Callable[[], list[int]]


@contextlib.contextmanager
def bare_relay(upstream_url: str, gather_ms: float) -> Iterator[Served]:
    port = free_port(HOST)
    upstream_port = int(upstream_url.rsplit(":", 1)[1])
    command = [sys.executable, "-m", "bench.bare_relay", str(port), str(upstream_port)]
    proc = subprocess.Popen([*command, str(gather_ms)])
    try:
        wait_http(f"http://{HOST}:{port}/v1/models")
        yield Served(f"http://{HOST}:{port}", lambda: [proc.pid])
    finally:
        proc.terminate()
        proc.wait(10)


@dataclass(frozen=True)
class Condition:
    """How the upstream answers (its environment), whether the client streams, and the
    relays measured so."""

    name: str
    upstream_env: dict[str, str]
    stream: bool
    cases: tuple[str, ...]


THINK_MS = "70"  # a provider's think time: a short chat's answer takes about this long
CONDITIONS = (
    Condition("streamed, chunks 1–2 ms apart", {"BENCH_CHUNK_GAP_MS": "1"}, True, CASES),
    Condition("streamed, chunks back to back", {"BENCH_CHUNK_GAP_MS": "0"}, True, CASES),
    Condition("not streamed, answered at once", {"BENCH_THINK_MS": "0"}, False, (BARE, MEMROUTE)),
    Condition(
        f"not streamed, answered after {THINK_MS} ms", {"BENCH_THINK_MS": THINK_MS}, False, (BARE, MEMROUTE)
    ),
)


@dataclass
class Figures:
    """CPU ms per request of each (condition, case) over the rounds, and the upstream's."""

    cpu_ms: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    upstream_ms: dict[str, list[float]] = field(default_factory=dict)
    wakes: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    def add(self, condition: str, case: str, per_request: PerRequest) -> None:
        self.cpu_ms.setdefault((condition, case), []).append(per_request.cpu_ms)
        self.upstream_ms.setdefault(condition, []).append(per_request.upstream_ms)
        self.wakes.setdefault((condition, case), []).append(per_request.wakes)


@dataclass(frozen=True)
class PerRequest:
    """What one request cost the relay (CPU ms, wake-ups) and the upstream (CPU ms)."""

    cpu_ms: float
    upstream_ms: float
    wakes: float


def cpu_ms_per_request(
    served: Served, up_pid: int, key: str, questions: Sequence[str], seconds: float, stream: bool
) -> PerRequest:
    """CPU ms and wake-ups per request of `served`, and the upstream's CPU ms, at one
    client, net of what `served` spends idle."""
    pids = served.pids()
    time.sleep(0.5)
    before, wakes_before = thread_cpu_s(pids), wake_ups(pids)
    time.sleep(1.0)
    idle_per_s, idle_wakes_per_s = thread_cpu_s(pids) - before, wake_ups(pids) - wakes_before
    command = [sys.executable, "-m", "bench.load_client", served.url, key, "--concurrency", "1"]
    command += ["--seconds", str(seconds), "--warmup", "1", *(["--stream"] if stream else [])]
    before, up_before, started = thread_cpu_s(pids), thread_cpu_s([up_pid]), time.perf_counter()
    wakes_before = wake_ups(pids)
    done = subprocess.run(command, input="\n".join(questions), capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    result = json.loads(done.stdout)
    sent = max(len(result["latency_ns"]) * wall / result["timed_s"], 1)
    cpu = max(0.0, thread_cpu_s(pids) - before - idle_per_s * wall)
    wakes = max(0.0, wake_ups(pids) - wakes_before - idle_wakes_per_s * wall)
    return PerRequest(cpu * 1000 / sent, (thread_cpu_s([up_pid]) - up_before) * 1000 / sent, wakes / sent)


def run(rounds: int, seconds: float) -> Report:
    report = Report("What relaying costs any Python process here")
    figures = Figures()
    questions = queries(1235, 200)
    with TemporaryDirectory(prefix="memroute-floor-") as directory:
        db = Path(directory) / "floor.db"
        side = Memory.open(db, start_workers=False)
        _, secret = side.keys.create("floor")
        side.update_settings({"enabled": False, "extraction_enabled": True, **NO_MODEL})  # memory off
        side.close()
        for condition in CONDITIONS:
            with environ(**condition.upstream_env), upstream() as up:
                for number in range(rounds):
                    for case in condition.cases:
                        with _served(case, db, up.url) as served:
                            per = cpu_ms_per_request(
                                served, up.process.pid, secret, questions, seconds, condition.stream
                            )
                        figures.add(condition.name, case, per)
                        log(
                            f"round {number + 1}, {condition.name}, {case}: {per.cpu_ms:.2f} ms, "
                            f"{per.wakes:.1f} wake-ups per request"
                        )
    _report(report, figures, rounds, seconds)
    return report


@contextlib.contextmanager
def _served(case: str, db: Path, upstream_url: str) -> Iterator[Served]:
    if case == MEMROUTE:
        with gateway(db, upstream_url, 1) as gw:
            yield Served(gw.url, gw.servers)
    else:
        with bare_relay(upstream_url, DEFAULT_STREAM_GATHER_MS if case == BARE_GATHERED else 0) as served:
            yield served


def _cell(values: list[float], digits: int = 2) -> str:
    return f"{median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def _report(report: Report, figures: Figures, rounds: int, seconds: float) -> None:
    streamed = [c for c in CONDITIONS if c.stream]
    unstreamed = [c for c in CONDITIONS if not c.stream]
    report.add(
        f"CPU ms per request at one client, median (range) of {rounds} rounds of {seconds:g} s. "
        f"Issue 17's target for memroute with memory off: ≤ {TARGET_STREAM_CPU_MS:g} ms per 48-chunk stream."
    )
    for conditions in (streamed, unstreamed):
        rows = [
            [case, *(_cell(figures.cpu_ms[(c.name, case)]) for c in conditions)]
            for case in conditions[0].cases
        ]
        rows.append(["the upstream", *(f"{median(figures.upstream_ms[c.name]):.2f}" for c in conditions)])
        report.add(table(["relay", *(c.name for c in conditions)], rows))
    report.add("Wake-ups per request (the relay's threads woken after sleeping), median (range):")
    for conditions in (streamed, unstreamed):
        rows = [
            [case, *(_cell(figures.wakes[(c.name, case)], 1) for c in conditions)]
            for case in conditions[0].cases
        ]
        report.add(table(["relay", *(c.name for c in conditions)], rows))
    report.data["cpu_ms_per_request"] = {f"{c} | {case}": v for (c, case), v in figures.cpu_ms.items()}
    report.data["upstream_cpu_ms_per_request"] = figures.upstream_ms
    report.data["wake_ups_per_request"] = {f"{c} | {case}": v for (c, case), v in figures.wakes.items()}


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__ or "")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, each case once per round (3)")
    ap.add_argument("--seconds", type=float, default=6.0, help="timed seconds per run (6)")
    parsed = ap.parse_args(argv)
    rounds, seconds = (1, 1.0) if parsed.quick else (parsed.rounds, parsed.seconds)
    emit(run(rounds, seconds), parsed.json)


if __name__ == "__main__":
    main()
