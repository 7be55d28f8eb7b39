"""`memroute serve` in processes of its own that start in a fraction of the time: one
parent process imports the server once, then forks a fresh child for each start, and the
child runs the same command as `memroute --db DB serve`. For tests that start and SIGKILL
many servers (the imports are most of a server's start-up CPU)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

import httpx
from servers import TLS

# The parent: imports what `serve` imports, then forks a child per "start PORT DB" line and
# SIGKILLs and reaps one per "kill PID" line (and every one left when its input ends).
# Nothing else runs in it (no thread of its own, no database; the BLAS pool numpy starts on
# import is re-created after a fork), so each child begins as a fresh server would.
_PARENT = """
import os, signal, sys
import uvicorn, memroute.cli.run, memroute.web.app
from memroute.cli import main
children = set()
for line in sys.stdin:
    command, *args = line.split()
    if command == "start":
        port, db = args
        pid = os.fork()
        if pid == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.environ["MEMROUTE_PORT"] = port
            sys.argv = ["memroute", "--db", db, "serve"]
            try:
                main(sys.argv[1:])
            finally:
                os._exit(0)
        children.add(pid)
        print(pid, flush=True)
    elif command == "kill":
        pid = int(args[0])
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        children.discard(pid)
        print("killed", flush=True)
for pid in children:  # the test ended early: no server outlives it
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
"""


class ServerForks:
    """Starts servers with `env` (the variables `memroute serve` reads) and kills them."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._parent = subprocess.Popen(
            [sys.executable, "-c", _PARENT],
            env=dict(env),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _ask(self, line: str) -> str:
        assert self._parent.stdin is not None and self._parent.stdout is not None
        self._parent.stdin.write(line + "\n")
        self._parent.stdin.flush()
        answer = self._parent.stdout.readline().strip()
        assert answer, f"the server parent ended (exit code {self._parent.poll()})"
        return answer

    def start(self, db: Path, port: int) -> int:
        """The pid of a server on 127.0.0.1:`port` over `db`, once `/healthz` answers."""
        pid = int(self._ask(f"start {port} {db}"))
        deadline = time.monotonic() + 30
        with httpx.Client(timeout=1, verify=TLS) as probe:
            while True:
                try:
                    if probe.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                        return pid
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.05)

    def kill(self, pid: int) -> None:
        """SIGKILL the server `pid` and wait until it is gone."""
        assert self._ask(f"kill {pid}") == "killed"

    def __enter__(self) -> ServerForks:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        assert self._parent.stdin is not None
        self._parent.stdin.close()
        self._parent.wait(30)
