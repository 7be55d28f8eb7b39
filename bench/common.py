"""Shared helpers: the machine, latency statistics, markdown output, temp dirs."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

import memroute

#: Memory settings with the bundled model off (it is on by default since the tenth session
#: of 2026-12-05): keyword search and the key's meanings, what earlier figures call the
#: install defaults. Benchmarks whose targets were set for keyword search apply it.
NO_MODEL: dict[str, bool] = {"transformers_enabled": False}


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_reference(rounds: int = 5) -> dict[str, float]:
    """Time of a fixed pure-Python loop (ms, best and median of `rounds`): on a shared VM the
    CPU speed drifts between runs, and this says how fast the machine was for this run."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        total = 0
        for i in range(1_000_000):
            total += i * i
        times.append((time.perf_counter_ns() - start) / 1e6)
    times.sort()
    return {"best_ms": times[0], "median_ms": times[len(times) // 2]}


_REFERENCE: dict[str, float] = {}


def machine() -> dict[str, Any]:
    if not _REFERENCE:
        _REFERENCE.update(cpu_reference())
    return {
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite": apsw.sqlite_lib_version(),
        "apsw": apsw.apsw_version(),
        "memroute": getattr(memroute, "__version__", "?"),
        "cpu_reference_ms": dict(_REFERENCE),
    }


def machine_markdown(info: dict[str, Any] | None = None) -> str:
    m = info or machine()
    return (
        f"Machine: {m['cpu']} × {m['cpu_count']} CPUs, {m['platform']}, Python {m['python']}, "
        f"SQLite {m['sqlite']} (apsw {m['apsw']}), memroute {m['memroute']}; CPU reference "
        f"(1M-iteration Python loop): best {m['cpu_reference_ms']['best_ms']:.0f} ms, "
        f"median {m['cpu_reference_ms']['median_ms']:.0f} ms"
    )


@dataclass(slots=True)
class Latency:
    """Per-call times in nanoseconds and their summary."""

    samples: list[int]

    @property
    def n(self) -> int:
        return len(self.samples)

    def pct(self, q: float) -> float:
        """Nearest-rank percentile in milliseconds (NaN without samples)."""
        if not self.samples:
            return math.nan
        ordered = sorted(self.samples)
        rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
        return ordered[rank - 1] / 1e6

    @property
    def p50(self) -> float:
        return self.pct(50)

    @property
    def p99(self) -> float:
        return self.pct(99)

    @property
    def mean(self) -> float:
        return sum(self.samples) / len(self.samples) / 1e6

    @property
    def max(self) -> float:
        return max(self.samples) / 1e6

    def to_dict(self) -> dict[str, float]:
        return {"n": self.n, "p50_ms": self.p50, "p99_ms": self.p99, "mean_ms": self.mean, "max_ms": self.max}


def time_calls(fn: Callable[[Any], object], args: Sequence[Any], *, warmup: int = 0) -> Latency:
    """Call `fn(arg)` for each arg (after `warmup` untimed calls) and time each call."""
    for arg in args[:warmup]:
        fn(arg)
    gc.collect()
    clock = time.perf_counter_ns
    samples = []
    for arg in args[warmup:]:
        start = clock()
        fn(arg)
        samples.append(clock() - start)
    return Latency(samples)


def ms(value: float) -> str:
    if math.isnan(value):
        return "—"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def rate(count: int, ns: int) -> float:
    return count / (ns / 1e9) if ns else float("inf")


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


@dataclass(slots=True)
class Report:
    """What one benchmark prints: markdown sections plus machine-readable figures."""

    title: str
    sections: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)

    def add(self, text: str) -> None:
        self.sections.append(text)

    def markdown(self, level: int = 2) -> str:
        return "\n\n".join([f"{'#' * level} {self.title}", *self.sections])


def parser(description: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    ap.add_argument("--seed", type=int, default=1234, help="seed of the synthetic data (default 1234)")
    ap.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="keep databases here and reuse them across runs (default: a temp dir, deleted)",
    )
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON to this file")
    return ap


def emit(report: Report, json_path: Path | None) -> None:
    print(machine_markdown())
    print()
    print(report.markdown())
    sys.stdout.flush()
    if json_path is not None:
        json_path.write_text(json.dumps({"machine": machine(), report.title: report.data}, indent=2))


@contextlib.contextmanager
def work_dir(keep: Path | None) -> Iterator[Path]:
    """`keep` (created if needed and left in place), or a temp dir removed afterwards."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    path = Path(tempfile.mkdtemp(prefix="memroute-bench-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def environ(**values: str) -> Iterator[None]:
    """`values` set in this process's environment for the block (processes started inside
    inherit them), then put back as they were."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def remove_database(path: Path | str) -> None:
    """Delete a SQLite file with its WAL and shared-memory files, if present (a fresh start)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds process `pid` has used so far (from /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_http(url: str, timeout: float = 60.0, alive: Callable[[], bool] | None = None) -> None:
    """Return once `url` answers below 500; RuntimeError after `timeout` seconds, or as soon
    as `alive()` says the server's process has ended."""
    import httpx  # only the benchmarks that start servers need it

    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=2).status_code < 500:
                return
        if (alive is not None and not alive()) or time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer")
        time.sleep(0.05)


def stop_process(proc: subprocess.Popen[Any], grace_s: float) -> bool:
    """SIGTERM `proc` and wait `grace_s` seconds for it to end; then kill it. Whether it
    had to be killed."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        return True
    return False


def log(message: str) -> None:
    """Progress on stderr, so stdout stays clean markdown."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# For child processes that report their memory: `status()` → {"VmRSS": MB, "VmHWM": MB}.
PROC_STATUS = r"""
def status():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0]) / 1024
    return fields
"""
