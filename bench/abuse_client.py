"""The well-behaved key of the abuse bench: a client in its own process (so the attack's load in
the bench process does not slow it down) that sends one non-streamed chat every 50 ms, whether
or not the earlier ones have answered, each with a 5 s timeout; and the figures of its chats.

Each chat is written to a file as it ends (`sent` on the system's monotonic clock, which the
bench process shares, the seconds it took, and `ok`: a 200 with the echoed answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from bench.common import Latency, stop_process

EVERY_S = 0.05
TIMEOUT_S = 5.0
NORMAL_S = 1.0  # a chat is "normal" when it succeeds within this (the target p99)
SETTLED_S = 1.0  # recovered: normal chats for this long after the last abnormal one


@dataclass(frozen=True, slots=True)
class Chat:
    sent: float
    took: float
    ok: bool
    status: str

    @property
    def normal(self) -> bool:
        return self.ok and self.took <= NORMAL_S


async def _one(http: httpx.AsyncClient, secret: str, n: int, out: Any) -> None:
    text = f"What is on my list today, number {n}?"
    body = {"model": "echo-1", "messages": [{"role": "user", "content": text}]}
    sent = time.monotonic()
    status = "?"
    ok = False
    try:
        r = await http.post("/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {secret}"})
        status = str(r.status_code)
        ok = r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "You said: " + text
    except httpx.TimeoutException:
        status = "timeout"
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as exc:
        status = type(exc).__name__
    took = time.monotonic() - sent
    out.write(json.dumps({"sent": sent, "took": took, "ok": ok, "status": status}) + "\n")
    out.flush()


async def _steady(url: str, secret: str, path: Path) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=32)
    async with httpx.AsyncClient(base_url=url, timeout=TIMEOUT_S, limits=limits) as http:
        with path.open("a", encoding="utf-8") as out:
            tasks: set[asyncio.Task[None]] = set()
            n = 0
            next_at = time.monotonic()
            while not stop.is_set():
                task = asyncio.create_task(_one(http, secret, n, out))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                n += 1
                next_at += EVERY_S
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), max(0.0, next_at - time.monotonic()))
            if tasks:
                await asyncio.wait(tasks, timeout=TIMEOUT_S + 2)


class SteadyClient:
    """The well-behaved key's client process (`python -m bench.abuse_client URL SECRET FILE`,
    stopped by SIGTERM); `chats()` reads what it has done so far."""

    def __init__(self, url: str, secret: str, path: Path) -> None:
        self.url, self.secret, self.path = url, secret, path
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> SteadyClient:
        """Start the client and wait (at most 60 s) for its first answered chat."""
        self.path.write_text("")
        root = Path(__file__).resolve().parent.parent
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])),
        }
        cmd = [sys.executable, "-m", "bench.abuse_client", self.url, self.secret, str(self.path)]
        self._proc = subprocess.Popen(cmd, cwd=root, env=env)
        deadline = time.monotonic() + 60
        while not self.chats():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError("the well-behaved client did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc is None or self._proc.poll() is not None:
            return
        stop_process(self._proc, TIMEOUT_S + 10)

    def chats(self) -> list[Chat]:
        found = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError, KeyError):
                record = json.loads(line)
                found.append(Chat(record["sent"], record["took"], record["ok"], record["status"]))
        return sorted(found, key=lambda c: c.sent)


def between(chats: Sequence[Chat], start: float, end: float) -> list[Chat]:
    return [c for c in chats if start <= c.sent < end]


def figures(chats: Sequence[Chat]) -> dict[str, Any]:
    """Success rate and latency (every attempt, a timeout counting as its 5 s) of some chats."""
    if not chats:
        return {"n": 0, "success": None, "p50_ms": None, "p99_ms": None, "statuses": {}}
    lat = Latency([int(c.took * 1e9) for c in chats])
    statuses: dict[str, int] = {}
    for c in chats:
        label = "ok" if c.ok else c.status
        statuses[label] = statuses.get(label, 0) + 1
    return {
        "n": len(chats),
        "success": sum(c.ok for c in chats) / len(chats),
        "p50_ms": lat.p50,
        "p99_ms": lat.p99,
        "statuses": statuses,
    }


def recovery_s(chats: Sequence[Chat], attack_end: float) -> float | None:
    """Seconds from the attack's end to the first chat after which every chat was normal for
    at least `SETTLED_S`; None when that did not happen while the client ran."""
    after = [c for c in chats if c.sent >= attack_end]
    last_bad = max((i for i, c in enumerate(after) if not c.normal), default=-1)
    settled = after[last_bad + 1 :]
    if not settled or settled[-1].sent - settled[0].sent < SETTLED_S:
        return None
    return max(0.0, settled[0].sent - attack_end)


if __name__ == "__main__":
    asyncio.run(_steady(sys.argv[1], sys.argv[2], Path(sys.argv[3])))
