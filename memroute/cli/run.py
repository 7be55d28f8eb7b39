"""`memroute serve|mcp|demo`: running memroute's servers."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from pathlib import Path

import click

from memroute.cli.common import cli_errors, config_of, memory_for
from memroute.config import MAX_WORKERS, allowed_cpus, parse_cpus


@click.command("mcp")
@click.pass_context
def mcp_stdio(ctx: click.Context) -> None:
    """Serve the memory tools over MCP stdio (for Claude Desktop, Cursor, VS Code …)."""
    from memroute.mcp.server import build_server
    from memroute.service import Memory

    with cli_errors():
        mem = Memory.open(config=config_of(ctx))
    try:
        build_server(lambda: mem).run()  # stdio; logs go to stderr, stdout is the protocol
    finally:
        mem.close()


@click.command()
@click.option(
    "--keep",
    type=click.Path(file_okay=False),
    default=None,
    help="Keep the demo's data in this folder (default: a temporary folder).",
)
def demo(keep: str | None) -> None:
    """A scripted conversation through the gateway and a built-in echo upstream:
    facts are learned, then injected into the next request."""
    from memroute.cli.demo import run_demo

    with cli_errors():
        if keep:
            run_demo(Path(keep), click.echo)
            return
        with tempfile.TemporaryDirectory() as tmp:
            run_demo(Path(tmp), click.echo)


@click.command()
@click.option("--host", default=None, help="Interface to bind (default 127.0.0.1, or MEMROUTE_HOST).")
@click.option("--port", type=int, default=None, help="Port (default 20128, or MEMROUTE_PORT).")
@click.option("--db", "serve_db", type=click.Path(dir_okay=False), default=None, help="Database file.")
@click.option(
    "--fd",
    type=int,
    default=None,
    help="Serve on this listening socket instead of binding (e.g. 3 under systemd socket activation).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, MAX_WORKERS),
    default=None,
    help="Server processes sharing the port and the database (default 1, or MEMROUTE_WORKERS).",
)
@click.option(
    "--pin-cpus",
    default=None,
    metavar="SPEC",
    help="Hold each server process's event loop and chat threads to one CPU: off, auto, or CPUs "
    "such as 0,2-3 (default off, or "
    "MEMROUTE_PIN_CPUS); see docs/usage.md.",
)
@click.pass_context
def serve(
    ctx: click.Context,
    host: str | None,
    port: int | None,
    serve_db: str | None,
    fd: int | None,
    workers: int | None,
    pin_cpus: str | None,
) -> None:
    """Run the gateway and the management API. Exits with status 1 if serving ends
    without a shutdown signal (so a supervisor restarts it)."""
    from memroute.web.logs import configure_process_logging
    from memroute.web.processes import run_processes
    from memroute.web.serve import free_port, inherited_socket, run_foreground

    if serve_db:
        ctx.obj["db"] = serve_db
    with cli_errors():  # a bad socket or setting is refused before the slow imports
        listener = inherited_socket(fd) if fd is not None else None
        config = config_of(ctx)
        config = config.with_overrides(
            host=host or config.host,
            port=config.port if port is None else port,
            workers=config.workers if workers is None else workers,
            pin_cpus=config.pin_cpus
            if pin_cpus is None
            else parse_cpus(pin_cpus, allowed_cpus(), "--pin-cpus"),
        )
        if listener is not None:
            bound_host, bound_port = listener.getsockname()[:2]
            config = config.with_overrides(host=bound_host, port=bound_port)
        elif config.port == 0:  # any free port: chosen here, so the banner can name it
            config = config.with_overrides(port=free_port(config.host))
    from memroute.cli.banner import StartState, banner, self_command
    from memroute.web.app import create_app

    with cli_errors():
        app = create_app(config)
    with memory_for(ctx) as mem:
        memory_enabled = mem.settings().enabled
    state = StartState(
        admin_token=app.state.admin_token,
        token_created=app.state.admin_token_created,
        memory_enabled=memory_enabled,
        command=self_command(sys.argv[0], sys.executable),
    )
    for line in banner(config, state):
        click.echo(line)
    if config.workers > 1:
        configure_process_logging("info")
        status = run_processes(config, listener)
    else:
        status = run_foreground(app, config, listener)
    if status:
        _exit_now(status)


def _exit_now(status: int) -> None:
    """Exit at once with `status`, even while worker threads of a server whose event loop
    died still run (they would keep the process alive)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)
