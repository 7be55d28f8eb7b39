"""The processes of the abuse bench: the scripted upstream, `memroute serve` (optionally with a
low soft fd limit) and a sampler of the server's RSS and open file descriptors.

Every start waits with a deadline, and every stop ends in SIGKILL if SIGTERM is not enough,
so a server the attack broke never outlives the bench.
"""

from __future__ import annotations

import contextlib
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.common import stop_process, wait_http

HOST = "127.0.0.1"
ADMIN_TOKEN = "bench-abuse-admin-token-0123456789abcdef"
ROOT = Path(__file__).resolve().parent.parent
STOP_S = 15.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def upstream_stats(url: str) -> dict[str, int]:
    try:
        figures: dict[str, int] = httpx.get(url + "/stats", timeout=5).json()
        return figures
    except (httpx.HTTPError, ValueError):
        return {}


def _fd_limit(soft: int | None) -> Callable[[], None] | None:
    if soft is None:
        return None

    def lower() -> None:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    return lower


@dataclass
class Served:
    """A running `memroute serve`."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    stopped: str = ""  # how it ended, once stopped

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None


@contextlib.contextmanager
def servers(
    db: Path, log: Path, *, huge_bytes: int, fd_soft_limit: int | None = None
) -> Iterator[tuple[str, Served]]:
    """The scripted upstream and `python -m memroute --db DB serve` against it, started side by
    side; yields the upstream's URL and the server. Both are SIGKILLed if SIGTERM is not enough."""
    up_port, port = _free_port(), _free_port()
    up_url = f"http://{HOST}:{up_port}"
    up_cmd = [sys.executable, "-m", "bench.abuse_upstream", str(up_port), str(huge_bytes)]
    up = subprocess.Popen(up_cmd, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        environ = _env(
            MEMROUTE_ADMIN_TOKEN=ADMIN_TOKEN,
            MEMROUTE_UPSTREAM_BASE_URL=up_url + "/v1",
            MEMROUTE_PORT=str(port),
            MEMROUTE_HOST=HOST,
        )
        cmd = [sys.executable, "-m", "memroute", "--db", str(db), "serve"]
        with log.open("ab") as out:
            proc = subprocess.Popen(
                cmd, env=environ, cwd=ROOT, stdout=out, stderr=out, preexec_fn=_fd_limit(fd_soft_limit)
            )
        served = Served(f"http://{HOST}:{port}", proc, log)
        try:
            wait_http(up_url + "/stats", 60, lambda: up.poll() is None)
            wait_http(served.url + "/healthz", 60, served.alive)
            yield up_url, served
        finally:
            served.stopped = stop(proc)
    finally:
        stop(up)


def _env(**extra: str) -> dict[str, str]:
    """The environment of a child process: this one's, with the checkout first on the path."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


def stop(proc: subprocess.Popen[bytes]) -> str:
    """SIGTERM, then SIGKILL after `STOP_S`; how the process ended."""
    if proc.poll() is not None:
        return f"had already exited ({proc.returncode})"
    started = time.monotonic()
    if stop_process(proc, STOP_S):
        return f"killed: still running {STOP_S:.0f} s after SIGTERM"
    return f"exited {proc.returncode} {time.monotonic() - started:.1f} s after SIGTERM"


@dataclass
class Peak:
    rss_mb: float = 0.0
    fds: int = 0
    threads: int = 0


class Sampler:
    """Samples a process's VmRSS, threads and open fds every `every` seconds in a thread."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        self.pid, self.every = pid, every
        self.peak = Peak()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="abuse-sampler", daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(OSError, ValueError):
                self._sample()
            self._stop.wait(self.every)

    def _sample(self) -> None:
        with open(f"/proc/{self.pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    self.peak.rss_mb = max(self.peak.rss_mb, int(line.split()[1]) / 1024)
                elif line.startswith("Threads:"):
                    self.peak.threads = max(self.peak.threads, int(line.split()[1]))
        self.peak.fds = max(self.peak.fds, len(os.listdir(f"/proc/{self.pid}/fd")))


def raise_own_fd_limit() -> None:
    """The bench opens thousands of sockets: its soft fd limit goes up to the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
