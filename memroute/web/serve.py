"""Running the app: in the foreground (`memroute serve`) or in a thread (the demo), both
through memroute/web/server.py."""

from __future__ import annotations

import functools
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from memroute.config import Config
from memroute.errors import InvalidInput
from memroute.gateway.limits import process_share
from memroute.web.connection_share import ConnectionShare
from memroute.web.cpu_pinning import pin_server_threads
from memroute.web.logs import configure_process_logging
from memroute.web.server import build_server, describe, serve_in_foreground
from memroute.web.server_limits import ServerLimits, open_files_limit, raise_open_files_limit

log = logging.getLogger("memroute.server")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def bound_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A socket bound to `host`:`port` (0: a free port) and not yet listening: the port is
    held from now on (nobody else can take it between choosing and serving), while a
    connection is still refused until a server listens on it. Its protocol is named (TCP),
    as asyncio needs to switch Nagle's delay off on the connections it accepts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def inherited_socket(fd: int) -> socket.socket:
    """The listening socket open as file descriptor `fd` (handed over by a supervisor, e.g.
    fd 3 under systemd socket activation). InvalidInput when it is not one."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise InvalidInput(f"file descriptor {fd} is not an open socket ({exc.strerror})", "fd") from None
    if not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
        sock.detach()
        raise InvalidInput(f"file descriptor {fd} is not a listening socket", "fd")
    return sock


def run_foreground(
    app: Any,
    config: Config,
    listener: socket.socket | None = None,
    *,
    parent_pid: int | None = None,
    share: ConnectionShare | None = None,
    worker: int = 0,
) -> int:
    """Serve `app` in this thread with the process's logging, a raised open-files limit and
    the limits of `config`, on `listener` or else config's host and port, until a signal
    stops it (or, with `parent_pid`, that process is gone); `share`: its part of the
    connections of a listener shared with other processes; `worker`: which of them this is
    (its CPU, when `config.pin_cpus` holds them to CPUs). Returns the exit status: 0 then,
    1 when serving ended any other way."""
    configure_process_logging("info")
    limits = ServerLimits.of(config)
    server = build_server(
        app,
        limits,
        host=config.host,
        port=config.port,
        open_files=raise_open_files_limit(),
        log_level="info",
        access_log=config.access_log,
        parent_pid=parent_pid,
        freeze_heap=True,
        requests_in_flight=process_share(config.max_concurrent, config.workers),
        share=share,
        on_started=functools.partial(pin_server_threads, config.pin_cpus, worker),
    )
    log.info(describe(server, limits))
    if listener is not None:
        log.info("serving on inherited file descriptor %d (%s)", listener.fileno(), listener.getsockname())
    return serve_in_foreground(server, [listener] if listener is not None else None)


@contextmanager
def serving(app: Any, host: str = "127.0.0.1", port: int | None = None) -> Iterator[str]:
    """Serve `app` in a background thread (with the limits of its Config, if it is
    memroute's app) on `port`, else on a free port held from the start; yields its base
    URL; stops (and runs the app's shutdown) on exit."""
    listener = bound_socket(host, port or 0)
    port = int(listener.getsockname()[1])
    server = build_server(app, ServerLimits.of_app(app), host=host, port=port, open_files=open_files_limit())
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [listener]}, name="memroute-server", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.stop()
            listener.close()
            raise RuntimeError(f"the server on {host}:{port} did not start")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        thread.join(30)
        listener.close()
