"""The attacks of the abuse bench, each one coroutine bounded by its `seconds`: it returns what
the attacker saw (status counts, and whatever else a user of the server would notice)."""

from __future__ import annotations

import asyncio
import collections
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from bench.abuse_load import attacker_client, chat, chat_body, flood, label, slow_headers, stream
from bench.abuse_servers import ADMIN_TOKEN

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@dataclass(frozen=True, slots=True)
class Sizes:
    """How hard each attack hits; `QUICK` and `FULL` in bench/abuse.py."""

    seconds: float  # how long an attack lasts
    hanging_clients: int
    streams: int
    drips: int
    idle_connections: int
    fd_soft_limit: int
    body_messages: int
    bodies_at_once: int
    huge_reply_bytes: int
    logins: int
    summarise_memories: int
    disk_mb: int
    burst_statements: int  # statements chatted just before the disk fills
    header_line_every_s: float = 5.0


@dataclass
class Target:
    """The server under attack and the attacking key."""

    url: str
    upstream: str
    secret: str
    key_id: str
    sizes: Sizes
    directory: Path
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return self.sizes.seconds


Run = Callable[[Target], Awaitable[dict[str, Any]]]


def _counts(counter: collections.Counter[str]) -> dict[str, int]:
    return dict(counter.most_common())


async def _one_chat_each(t: Target, model: str, n: int) -> dict[str, Any]:
    """`n` concurrent clients, each sending one chat to `model`; they go away at the end."""
    async with attacker_client(n + 8, t.seconds + 10) as http:
        counts = await flood(
            n, lambda: chat(http, t.url, t.secret, chat_body(model)), t.seconds, repeat=False
        )
    return {"attacker": _counts(counts), "clients": n}


async def hanging_upstream(t: Target) -> dict[str, Any]:
    """Concurrent chats to a model whose upstream never answers; the clients go away at the end."""
    return await _one_chat_each(t, "hang-1", t.sizes.hanging_clients)


async def many_streams(t: Target) -> dict[str, Any]:
    """Concurrent 2-second streams from one key, each client starting a new one when its last ends."""
    n = t.sizes.streams
    body = chat_body("slow-stream-1", stream=True)
    async with attacker_client(n + 8, t.seconds + 10) as http:
        counts = await flood(n, lambda: stream(http, t.url, t.secret, body), t.seconds, repeat=True)
    return {"attacker": _counts(counts), "clients": n}


async def dripping_upstream(t: Target) -> dict[str, Any]:
    """Chats to a model whose upstream sends one byte a second and never finishes."""
    return await _one_chat_each(t, "drip-1", t.sizes.drips)


async def slow_header_clients(t: Target) -> dict[str, Any]:
    """More idle connections than the server's soft fd limit, each sending a header line now and then."""
    parts = urlsplit(t.url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    hold = max(1.0, t.seconds - 1.0)

    def one() -> Awaitable[str]:
        return slow_headers(host, port, t.sizes.header_line_every_s, hold)

    counts = await flood(t.sizes.idle_connections, one, t.seconds, repeat=False)
    return {
        "attacker": _counts(counts),
        "connections": t.sizes.idle_connections,
        "server_fd_soft_limit": t.sizes.fd_soft_limit,
    }


def tiny_messages_body(count: int) -> bytes:
    """A chat body of `count` one-letter messages (1,000,000 make 29 MB)."""
    message = b'{"role":"user","content":"a"},'
    head = b'{"model":"echo-1","messages":['
    return head + message * (count - 1) + message[:-1] + b"]}"


async def big_body(t: Target) -> dict[str, Any]:
    """Chats whose body is a million tiny messages, several at once, again and again."""
    body = t.state.get("body") or tiny_messages_body(t.sizes.body_messages)
    n = t.sizes.bodies_at_once
    async with attacker_client(n + 2, t.seconds + 10) as http:
        counts = await flood(n, lambda: chat(http, t.url, t.secret, body), t.seconds, repeat=n > 1)
    return {"attacker": _counts(counts), "body_mb": len(body) / 1e6, "at_once": n}


async def huge_reply(t: Target) -> dict[str, Any]:
    """A non-streamed chat whose upstream reply is hundreds of megabytes."""
    async with attacker_client(4, t.seconds + 10) as http:
        counts = await flood(
            1, lambda: chat(http, t.url, t.secret, chat_body("huge-1")), t.seconds, repeat=True
        )
    return {"attacker": _counts(counts), "reply_mb": t.sizes.huge_reply_bytes / 1e6}


async def _login(http: httpx.AsyncClient, url: str, token: str, headers: dict[str, str]) -> str:
    try:
        r = await http.post(url + "/api/session", json={"token": token}, headers=headers)
        return str(r.status_code)
    except httpx.HTTPError as exc:
        return label(exc)


async def _bearer(http: httpx.AsyncClient, url: str, token: str) -> str:
    try:
        r = await http.get(url + "/api/memory/engine-status", headers={"Authorization": f"Bearer {token}"})
        return str(r.status_code)
    except httpx.HTTPError as exc:
        return label(exc)


async def login_throttle(t: Target) -> dict[str, Any]:
    """Wrong admin tokens: logins with a new spoofed X-Forwarded-For each, then from the plain
    address, then as Bearer tokens on /api; last, the real admin logs in with the right token."""
    n = t.sizes.logins
    spoofed: collections.Counter[str] = collections.Counter()
    plain: collections.Counter[str] = collections.Counter()
    bearer: collections.Counter[str] = collections.Counter()
    started = time.monotonic()
    # The spoofed logins get half the time, so the other phases fit in the rest even on a
    # loaded machine (an attack that overruns its time by as much again is cut off).
    spoofed_until, deadline = started + t.seconds / 2, started + t.seconds
    async with attacker_client(8, 10) as http:
        for i in range(n):
            if time.monotonic() >= spoofed_until:
                break
            xff = {"X-Forwarded-For": f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}"}
            spoofed[await _login(http, t.url, f"wrong-{i}", xff)] += 1
        for i in range(20):
            if time.monotonic() >= deadline:
                break
            plain[await _login(http, t.url, f"wrong-plain-{i}", {})] += 1
        for i in range(min(n, 300)):
            if time.monotonic() >= deadline:
                break
            bearer[await _bearer(http, t.url, f"wrong-bearer-{i}")] += 1
        admin = await _login(http, t.url, ADMIN_TOKEN, {})
    return {
        "attacker": _counts(spoofed),
        "spoofed_logins": _counts(spoofed),
        "plain_logins": _counts(plain),
        "wrong_bearer": _counts(bearer),
        "admin_login_after": admin,
    }


async def summarise(t: Target) -> dict[str, Any]:
    """The admin summarises a key holding thousands of old memories."""
    body = {"apiKeyId": t.key_id, "olderThanDays": 30}
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=t.seconds, headers=ADMIN) as http:
        before = await _total(http, t.url, t.key_id)
        try:
            r = await http.post(t.url + "/api/memory/summarize", json=body)
            outcome, size = str(r.status_code), len(r.content)
        except httpx.HTTPError as exc:
            outcome, size = label(exc), 0
        took = time.monotonic() - started
        after = await _total(http, t.url, t.key_id)
    return {
        "attacker": {outcome: 1},
        "took_s": took,
        "response_bytes": size,
        "memories_before": before,
        "memories_after": after,
    }


async def _total(http: httpx.AsyncClient, url: str, key_id: str) -> int | None:
    try:
        r = await http.get(url + "/api/memory", params={"apiKeyId": key_id, "limit": 1}, timeout=30)
        return int(r.json()["total"])
    except (httpx.HTTPError, ValueError, KeyError):
        return None


def _json(r: httpx.Response) -> Any:
    try:
        return r.json()
    except json.JSONDecodeError:
        return None


async def _queue_pending(http: httpx.AsyncClient, url: str) -> int | None:
    try:
        r = await http.get(url + "/api/memory/engine-status", headers=ADMIN, timeout=10)
        return int(_json(r)["extractionQueue"]["pending"])
    except (httpx.HTTPError, TypeError, KeyError, ValueError):
        return None


async def drain_queue(url: str, seconds: float) -> int | None:
    """Wait (at most `seconds`) for the extraction queue to empty; what is left in it."""
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient() as http:
        while True:
            pending = await _queue_pending(http, url)
            if pending == 0 or time.monotonic() >= deadline:
                return pending
            await asyncio.sleep(0.25)
