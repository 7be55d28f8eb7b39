"""What `memroute serve` prints on start: where the dashboard, the OpenAI base URL and the
API docs are, the admin token, whether memory is on, and the next commands, written so
that they work when pasted into the same shell."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memroute.config import Config
from memroute.web.auth import admin_token_path


def self_command(argv0: str, executable: str, which: Callable[[str], str | None] = shutil.which) -> str:
    """How to run this memroute again: `memroute` when that name on PATH is this program,
    else the path it was started by (e.g. `.venv/bin/memroute` after `make run`), or
    `<python> -m memroute`."""
    script = Path(argv0)
    if script.name == "__main__.py":
        return f"{shlex.quote(executable)} -m memroute"
    if os.sep not in argv0:
        return argv0  # found on PATH by the shell
    on_path = which(script.name)
    if on_path and script.exists() and os.path.samefile(on_path, script):
        return script.name
    return shlex.quote(argv0)


@dataclass(frozen=True, slots=True)
class StartState:
    """What the banner reports besides the configuration."""

    admin_token: str
    token_created: bool
    memory_enabled: bool
    command: str  # from self_command()


def banner(config: Config, state: StartState) -> list[str]:
    """The lines printed before the server starts."""
    url = f"http://{config.host}:{config.port}"
    run = f"{state.command} --db {shlex.quote(str(config.db_path))}"
    lines = [
        f"memroute {url}",
        f"  dashboard        {url}/dashboard  (sign in with the admin token)",
        f"  OpenAI base URL  {url}/v1",
        f"  API docs         {url}/docs",
        f"  database         {config.database_shown}",
        _token_line(config, state),
    ]
    if state.memory_enabled:
        lines.append("memory is on: requests with a client key are remembered and get their memories")
    else:
        lines.append(
            f"memory is off: nothing is learned or injected until `{run} settings set enabled=true`"
            " (or the switch on the dashboard)"
        )
    lines.append(f"create a client key: {run} keys create my-app")
    if not config.upstream_base_url:
        lines.append(
            "no default upstream: set MEMROUTE_UPSTREAM_BASE_URL, or "
            f"`{run} providers add ID --base-url URL --default`"
        )
    return lines


def _token_line(config: Config, state: StartState) -> str:
    token_file = admin_token_path(config)
    if state.token_created:
        return f"admin token (shown once; stored in {token_file}): {state.admin_token}"
    if config.admin_token:
        return "admin token: from MEMROUTE_ADMIN_TOKEN"
    return f"admin token: in {token_file}"
