"""Load: 100 concurrent streaming chat clients and 4 REST writers against `memroute serve`
(its own process) and a scripted upstream, 4,000 chat requests in all. Zero errors,
zero "database is locked", and the server's memory stays bounded.

Longer runs of the same load, to see whether memory levels off, are benchmarks:
`python -m bench.soak` (30,000 requests; `--requests 10000` for the 10,000 this test
once sent)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from memories import open_memory
from servers import ADMIN, AUTH, TLS, LiveServer, ScriptedUpstream, free_port

CLIENTS = 100
REQUESTS = 4_000
# The server's memory is read after these many requests, each time once everything sent so
# far is answered and learned (see `read_memory`).
WARM = 1_000  # the first reading: every worker thread is up
MID = 3_000  # the second reading: the database has grown by what the chats taught
# The bound of the 10,000-request run this test used to be (40 MB over 8,000 requests),
# per request: 5 KB. The leak bench/soak.py found grew 4.7 KB per request. It holds for the
# last 1,000 requests: by then every read connection (one per worker thread) has cached
# what it reads of the database, which grows with the kept turns; a leak grows on
# regardless. (With admissions taking turns, the server reached that point after 2,000 to
# 3,000 requests, not 1,000: 150 → 158 → 162 MB at 1,000 / 2,000 / 3,000, and the same
# level as without turns, ~230 MB, over 20,000 in bench/soak.py.)
GROWTH_MB = 5 * (REQUESTS - MID) / 1024
WRITERS = 4


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def _learned(http: httpx.AsyncClient, timeout: float = 60.0) -> bool:
    """Whether the server's extraction queue drained within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = (await http.get("/api/memory/engine-status", headers=AUTH)).json()
        if status["extractionQueue"]["pending"] == 0:
            return True
        await asyncio.sleep(0.01)
    return False


async def _stream_chat(
    http: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str], errors: list[str]
) -> None:
    """One streamed chat read to its end; what went wrong is added to `errors`."""
    try:
        async with http.stream("POST", "/v1/chat/completions", json=body, headers=headers) as r:
            text = "".join([chunk async for chunk in r.aiter_text()])
        if r.status_code != 200 or "data: [DONE]" not in text:
            errors.append(f"chat {r.status_code}: {text[:200]}")
    except httpx.HTTPError as exc:
        errors.append(f"chat {type(exc).__name__}")


async def _add_memory(http: httpx.AsyncClient, body: dict[str, Any], errors: list[str]) -> None:
    """One REST add; a refusal is added to `errors`."""
    response = await http.post("/api/memory", json=body, headers=AUTH)
    if response.status_code != 200:
        errors.append(f"add {response.status_code}: {response.text[:200]}")


async def _drive(base: str, secret: str, owner: str, server_pid: int) -> dict[str, object]:
    latencies: list[float] = []
    errors: list[str] = []
    rss: dict[int, float] = {}
    done = 0
    in_flight = 0
    going = asyncio.Event()  # cleared while the server's memory is read
    going.set()
    chat_headers = {"Authorization": f"Bearer {secret}"}
    # One connection per client and writer, each with an httpx client of its own: one pool of
    # 104 connections costs httpx (httpcore) a scan of every connection per request, which
    # took more CPU than the server it was loading.
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=2.0)

    def connection() -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=base, timeout=60, limits=limits, verify=TLS)

    async def read_memory(at: int) -> None:
        """The server's RSS once it has answered and learned everything sent so far (the
        load paused meanwhile): readings at equal work done, however far learning lagged
        behind the chats while they came."""
        going.clear()
        while in_flight:
            await asyncio.sleep(0.01)
        async with connection() as http:
            if not await _learned(http):
                errors.append(f"the extraction queue did not drain at {at} requests")
        rss[at] = _rss_mb(server_pid)
        going.set()

    async def client(number: int) -> None:
        nonlocal done, in_flight
        async with connection() as http:
            for i in range(REQUESTS // CLIENTS):
                body = {
                    "model": "echo-1",
                    "stream": True,
                    "messages": [
                        {"role": "user", "content": f"I prefer option{number}x{i % 7}. Which is best?"}
                    ],
                }
                await going.wait()
                in_flight += 1
                started = time.perf_counter()
                await _stream_chat(http, body, chat_headers, errors)
                latencies.append(time.perf_counter() - started)
                in_flight -= 1
                done += 1
                if done in (WARM, MID, REQUESTS):
                    await read_memory(done)

    async def writer(number: int) -> None:
        i = 0
        async with connection() as http:
            while done < REQUESTS:
                await going.wait()
                body = {"apiKeyId": owner, "content": f"note {number}-{i}", "key": f"load:{number}:{i % 50}"}
                await _add_memory(http, body, errors)
                i += 1
                await asyncio.sleep(0.01)

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(CLIENTS)), *(writer(n) for n in range(WRITERS)))
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "errors": errors,
        "per_s": len(latencies) / elapsed,
        "p50_ms": latencies[len(latencies) // 2] * 1000,
        "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
        "rss": rss,
    }


@pytest.mark.slow(seconds=50)
def test_a_hundred_streaming_clients_and_rest_writers(tmp_path: Path) -> None:
    db = tmp_path / "load.db"
    # The bundled model off: its vectors of every memory learned under load (and the key's
    # copy of them) grow the server by ~1.5 KB a memory, data and no leak, which the bound
    # below was not made for.
    with open_memory(db, model=False) as setup:
        setup.update_settings(enabled=True)
        key, secret = setup.keys.create("load")
        for i in range(300):
            setup.add(key.id, f"prefers option{i} for project {i % 13}")
    log = tmp_path / "server.log"
    upstream = ScriptedUpstream()
    with LiveServer(upstream.app()) as up, log.open("wb") as log_file:
        port = free_port()
        env = {
            **os.environ,
            "MEMROUTE_ADMIN_TOKEN": ADMIN,
            "MEMROUTE_UPSTREAM_BASE_URL": up.url + "/v1",
            "MEMROUTE_PORT": str(port),
            # One key sends the whole load: its gateway limits let all the clients through.
            "MEMROUTE_KEY_MAX_CONCURRENT": str(CLIENTS),
            "MEMROUTE_KEY_RPM": "0",
        }
        server = subprocess.Popen(
            [sys.executable, "-m", "memroute", "--db", str(db), "serve"],
            env=env,
            stdout=log_file,
            stderr=log_file,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(base + "/healthz", timeout=1, verify=TLS).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.05)
            result = asyncio.run(_drive(base, secret, key.id, server.pid))
        finally:
            server.terminate()
            server.wait(60)
    server_log = log.read_text(encoding="utf-8", errors="replace")
    errors = result["errors"]
    assert errors == [], f"{len(errors)} errors, first: {errors[:3]}"  # type: ignore[index]
    assert "database is locked" not in server_log and "Traceback" not in server_log
    rss: dict[int, float] = result["rss"]  # type: ignore[assignment]
    assert rss[REQUESTS] - rss[MID] < GROWTH_MB, (
        f"server memory grew from {rss[MID]:.0f} to {rss[REQUESTS]:.0f} MB ({rss[WARM]:.0f} MB at {WARM})"
    )
    print(json.dumps({k: v for k, v in result.items() if k != "errors"}))
