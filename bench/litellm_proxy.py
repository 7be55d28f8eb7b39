"""LiteLLM Proxy, the most used Python gateway, beside memroute in `bench.gateway_load`.

It runs from a virtual environment of its own (never a dependency of memroute), as the
gateway-efficiency issue measured it: one worker, no database, its logging off (errors
only, no access log), the load's model (`echo-1`) routed to the same scripted upstream
as an OpenAI-compatible provider, behind a master key made for the run.

    python -m venv /opt/litellm && /opt/litellm/bin/pip install 'litellm[proxy]'
    python -m bench.gateway_load --litellm /opt/litellm/bin/litellm
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.common import stop_process, wait_http
from bench.load_upstream import MODEL
from memroute.web.serve import free_port

HOST = "127.0.0.1"
START_TIMEOUT_S = 180.0  # it imports a great deal before it listens


@dataclass(frozen=True, slots=True)
class Proxy:
    url: str
    process: subprocess.Popen[bytes]
    key: str  # the master key its clients send


def executable(path: str) -> Path:
    """The `litellm` command at `path`, or SystemExit saying what is wrong (before any run)."""
    found = Path(path).expanduser()
    if not found.is_file() or not os.access(found, os.X_OK):
        raise SystemExit(
            f"--litellm {path}: no executable there; install LiteLLM Proxy in a virtual environment "
            "of its own (python -m venv DIR && DIR/bin/pip install 'litellm[proxy]') and pass DIR/bin/litellm"
        )
    return found


def config(upstream_url: str, key: str) -> dict[str, object]:
    """The proxy's configuration: one model, routed to the upstream; no database, no callbacks."""
    return {
        "model_list": [
            {
                "model_name": MODEL,
                "litellm_params": {
                    "model": f"openai/{MODEL}",
                    "api_base": f"{upstream_url}/v1",
                    "api_key": "unused",
                },
            }
        ],
        "litellm_settings": {"set_verbose": False, "json_logs": False, "telemetry": False},
        "general_settings": {"master_key": key},
    }


# uvicorn's loggers at WARNING: no line per request.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {name: {"level": "WARNING"} for name in ("uvicorn", "uvicorn.error", "uvicorn.access")},
}


@contextlib.contextmanager
def litellm_proxy(command: Path, upstream_url: str, directory: Path) -> Iterator[Proxy]:
    """LiteLLM Proxy (`command`: its `litellm` executable) serving on a free port, routed to
    `upstream_url`; stopped afterwards. Its files are written into `directory` (JSON, which
    its YAML reader takes)."""
    key = "sk-bench-" + secrets.token_hex(16)
    settings, logging = directory / "litellm.yaml", directory / "litellm-logging.json"
    settings.write_text(json.dumps(config(upstream_url, key)))
    logging.write_text(json.dumps(LOGGING))
    port = free_port(HOST)
    env = {**os.environ, "LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False"}
    arguments = ["--config", str(settings), "--host", HOST, "--port", str(port), "--num_workers", "1"]
    proc = subprocess.Popen(
        [str(command), *arguments, "--log_config", str(logging)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_http(f"http://{HOST}:{port}/health/liveliness", START_TIMEOUT_S, lambda: proc.poll() is None)
        yield Proxy(f"http://{HOST}:{port}", proc, key)
    finally:
        stop_process(proc, 30)
