"""wrk (Debian's `wrk`, a load generator written in C) as the load of the non-streamed runs
of `bench.gateway_load` and `bench.postgres` (`--wrk`): it spends ~0.02–0.10 ms of CPU per
request where the aiohttp client spends ~0.12–0.46, so on a two-core machine more of it is
left to the gateway.

One wrk thread keeps `concurrency` keep-alive connections busy, each sending the next of
the questions as a chat request; a first run of `warmup_s` is not timed. Given several
servers (replicas of one memory, comma-separated URLs), one wrk thread per server sends to
it, and wrk gives each thread `concurrency` ÷ threads connections (63 of 64 over three).
wrk cannot say when a stream's first piece arrives, so streamed runs keep the aiohttp
client. wrk keeps latencies in a histogram of its own: the run's samples are read back from
it at 1,000 evenly spaced percentiles (p50 and p99 are wrk's own), one per request timed.

    apt-get install wrk
    python -m bench.gateway_load --wrk
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench.load_upstream import MODEL

PATH = "/v1/chat/completions"
MARK = "memroute-wrk "  # the line the script's `done` writes its figures on
GRID = 1000  # percentiles read back from wrk's histogram

_DONE = """
done = function(summary, latency, requests)
  local points = {}
  for i = 1, %(grid)d - 1 do points[i] = string.format("%%d", latency:percentile(i * 100 / %(grid)d)) end
  points[%(grid)d] = string.format("%%d", latency.max)  -- its percentile(100) reads 0
  local e = summary.errors
  io.write(string.format('%(mark)s{"requests": %%d, "duration_us": %%d, "not_2xx": %%d, '
    .. '"socket_errors": %%d, "percentiles_us": [%%s]}\\n', summary.requests, summary.duration, e.status,
    e.connect + e.read + e.write + e.timeout, table.concat(points, ",")))
end
"""


def add_option(ap: argparse.ArgumentParser) -> None:
    """The benchmark's `--wrk [PATH]` option (wrk on PATH when no path is given)."""
    ap.add_argument(
        "--wrk",
        nargs="?",
        const="wrk",
        default=None,
        metavar="PATH",
        help="send the non-streamed load with wrk (apt-get install wrk; PATH: its executable, else on PATH)",
    )


def executable(path: str) -> Path:
    """The `wrk` command at `path` (or on PATH), or SystemExit saying how to install it."""
    found = shutil.which(path)
    if found is None:
        raise SystemExit(f"--wrk {path}: no wrk there; install it (apt-get install wrk) or pass its path")
    return Path(found)


def script(key: str, questions: Sequence[str], servers: Sequence[str] = ()) -> str:
    """wrk's Lua script: chat requests with `key`, one question after another; with
    several `servers` (URLs), wrk's n-th thread sends to the n-th."""
    bodies = [json.dumps({"model": MODEL, "messages": [{"role": "user", "content": q}]}) for q in questions]
    level = "=" * next(n for n in range(1, 64) if not any(f"]{'=' * n}]" in body for body in bodies))
    quoted = ",\n".join(f"[{level}[{body}]{level}]" for body in bodies)
    return (
        f"""
local bodies = {{
{quoted}
}}
local next_body = 0
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.headers["authorization"] = "Bearer " .. {json.dumps(key)}
request = function()
  next_body = next_body % #bodies + 1
  return wrk.format(nil, "{PATH}", nil, bodies[next_body])
end
"""
        + _spread(servers)
        + _DONE % {"grid": GRID, "mark": MARK}
    )


def _spread(servers: Sequence[str]) -> str:
    """Lua that points wrk's n-th thread at the n-th of `servers` (nothing for one)."""
    if len(servers) < 2:
        return ""
    places = [urlsplit(url) for url in servers]
    targets = ", ".join(f'{{"{place.hostname}", "{place.port}"}}' for place in places)
    return f"""
local servers = {{ {targets} }}
local threads_set_up = 0
setup = function(thread)
  threads_set_up = threads_set_up + 1
  local server = servers[(threads_set_up - 1) % #servers + 1]
  thread.addr = wrk.lookup(server[1], server[2])[1]
end
"""


def _whole_seconds(seconds: float) -> str:
    return f"{max(1, math.ceil(seconds))}s"  # wrk takes whole seconds only


def _wrk(wrk: Path, url: str, lua: Path, threads: int, concurrency: int, seconds: float) -> dict[str, Any]:
    command = [str(wrk), f"-t{threads}", f"-c{concurrency}", f"-d{_whole_seconds(seconds)}", "-s", str(lua)]
    command += ["--timeout", "30s", url]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    if not lines:
        raise RuntimeError(f"wrk printed no figures: {done.stdout[-500:]} {done.stderr[-500:]}")
    figures: dict[str, Any] = json.loads(lines[-1][len(MARK) :])
    return figures


def samples(figures: dict[str, Any]) -> list[int]:
    """One latency (ns) per successful request, read from wrk's percentiles: the k-th
    fastest of n is the first percentile read at or above k / n."""
    answered = max(0, int(figures["requests"]) - int(figures["not_2xx"]))
    points = figures["percentiles_us"]
    if not answered or not points:
        return []
    last = len(points) - 1
    return [
        int(points[min(last, max(0, math.ceil(k * len(points) / answered) - 1))]) * 1000
        for k in range(1, answered + 1)
    ]


def run(
    wrk: Path, url: str, key: str, questions: Sequence[str], concurrency: int, seconds: float, warmup_s: float
) -> dict[str, Any]:
    """A timed wrk run (after an untimed one of `warmup_s`, when above 0) of chat requests to
    `url` (several, comma-separated: spread over them as bench/load_client.py does, the
    first `concurrency` at most): the same figures as bench/load_client.py gives, without
    time to first token."""
    servers = url.split(",")[: max(1, concurrency)]
    with tempfile.TemporaryDirectory(prefix="memroute-wrk-") as directory:
        lua = Path(directory) / "chat.lua"  # it holds the client key: the directory is this user's alone
        lua.write_text(script(key, questions, servers), encoding="utf-8")
        if warmup_s > 0:
            _wrk(wrk, servers[0], lua, len(servers), concurrency, warmup_s)
        figures = _wrk(wrk, servers[0], lua, len(servers), concurrency, seconds)
    refused = {}
    if figures["not_2xx"]:
        refused["status_not_2xx"] = int(figures["not_2xx"])
    if figures["socket_errors"]:
        refused["status_socket_error"] = int(figures["socket_errors"])
    return {
        "seconds": seconds,
        "timed_s": figures["duration_us"] / 1e6,
        "latency_ns": samples(figures),
        "ttft_ns": [],
        "refused": refused,
    }
