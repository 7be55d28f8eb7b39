"""Serving with several processes (`memroute serve --workers N`).

The parent binds the listening socket (or takes the inherited one) and starts N server
processes on it. They count their open connections in shared memory and take new ones in
turn, so a pool of keep-alive connections is spread evenly over them
(memroute/web/connection_share.py). Each process runs the whole app on the shared
database: the chat path needs no coordination, and the background jobs that must run
once at a time hold a lease (memroute/service/lease.py).

The parent restarts a process that exits by itself (and gives up, with status 1, when
that happens more than `MAX_RESTARTS` times in a minute). On SIGTERM or SIGINT it asks
each process to stop once (SIGTERM: finish the requests in progress, drain the
extraction queue), waits for them, and exits 0. The processes run in their own process
group, so a Ctrl+C in a terminal reaches them only through the parent, once; a process
whose parent has died stops by itself.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import time
from collections import deque
from multiprocessing.process import BaseProcess
from types import FrameType

from memroute.config import Config
from memroute.web.connection_share import ConnectionCounts, ConnectionShare

log = logging.getLogger("memroute.server")

MAX_RESTARTS = 5  # in any minute; more means the processes cannot run at all
STOP_TIMEOUT_S = 45.0  # a process's own shutdown drains the extraction queue for up to 30 s
CHECK_INTERVAL_S = 0.5


def bind_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (IPv6 when the host is an IPv6 address)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP said outright: asyncio turns Nagle off (TCP_NODELAY) only on sockets that
    # say so, and without it a response written in two parts waits ~40 ms for an ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(2048)
    return sock


def run_processes(config: Config, listener: socket.socket | None = None) -> int:
    """Serve with `config.workers` processes until a signal stops them; the exit status
    (0 after a signal, 1 when the processes keep failing)."""
    sock = listener if listener is not None else bind_listener(config.host, config.port)
    context = multiprocessing.get_context("spawn")
    stopping: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    counts = ConnectionCounts(config.workers)

    def start(index: int) -> BaseProcess:
        counts.absent(index)  # until it serves
        process = context.Process(
            target=serve_one,
            args=(config, sock, counts.of(index), os.getpid(), index),
            name=f"memroute-worker-{index}",
        )
        process.start()
        log.info("worker %d started (pid %s)", index, process.pid)
        return process

    processes = [start(index) for index in range(config.workers)]
    restarts: deque[float] = deque()
    status = 0
    try:
        while not stopping:
            time.sleep(CHECK_INTERVAL_S)
            for index, process in enumerate(processes):
                if process.is_alive() or stopping:
                    continue
                log.error("worker %d (pid %s) exited with status %s", index, process.pid, process.exitcode)
                now = time.monotonic()
                restarts.append(now)
                while restarts and now - restarts[0] > 60:
                    restarts.popleft()
                if len(restarts) > MAX_RESTARTS:
                    log.critical("workers exited %d times in a minute; stopping with status 1", len(restarts))
                    stopping.append(0)
                    status = 1
                    break
                processes[index] = start(index)
    finally:
        _stop_all(processes)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
    return status


def _stop_all(processes: list[BaseProcess]) -> None:
    """SIGTERM to each process still running, then wait; kill those still there."""
    for process in processes:
        if process.is_alive() and process.pid is not None:
            os.kill(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            log.error("worker pid %s did not stop within %g s; killing it", process.pid, STOP_TIMEOUT_S)
            process.kill()
            process.join(5)


def serve_one(
    config: Config, sock: socket.socket, share: ConnectionShare, parent_pid: int, index: int
) -> None:
    """One server process (the target of each worker): the whole app on `sock`, its
    connections counted in `share`; `index`: which worker it is."""
    os.setpgid(0, 0)  # a terminal's Ctrl+C reaches the parent only; it stops us once
    from memroute.web.app import create_app
    from memroute.web.serve import run_foreground

    app = create_app(config)
    status = run_foreground(app, config, sock, parent_pid=parent_pid, share=share, worker=index)
    raise SystemExit(status)
