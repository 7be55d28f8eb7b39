"""The attacker's tools: many concurrent requests of one kind until a deadline, each outcome
counted by a label a user would read ("200", "429", "timeout", "unanswered when the attack ended")."""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

UNANSWERED = "unanswered when the attack ended"
Outcome = Callable[[], Awaitable[str]]


async def flood(workers: int, one: Outcome, seconds: float, *, repeat: bool) -> collections.Counter[str]:
    """`workers` concurrent callers of `one` (each once, or again and again with `repeat`) until
    `seconds` have passed; what is still running then is cancelled (its connection closed)."""
    counts: collections.Counter[str] = collections.Counter()
    deadline = time.monotonic() + seconds

    async def worker() -> None:
        while True:
            counts[await one()] += 1
            if not repeat or time.monotonic() >= deadline:
                return

    tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    _done, pending = await asyncio.wait(tasks, timeout=max(0.0, deadline - time.monotonic()))
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    counts[UNANSWERED] += len(pending)
    if not counts[UNANSWERED]:
        del counts[UNANSWERED]
    return counts


def label(exc: BaseException) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    return type(exc).__name__


def attacker_client(connections: int, timeout: float) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.AsyncClient(timeout=timeout, limits=limits)


def chat_body(model: str, text: str = "Tell me everything.", *, stream: bool = False) -> dict[str, Any]:
    return {"model": model, "stream": stream, "messages": [{"role": "user", "content": text}]}


async def chat(http: httpx.AsyncClient, url: str, secret: str, body: dict[str, Any] | bytes) -> str:
    """One non-streamed chat (the whole reply read); its status or error."""
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    try:
        if isinstance(body, bytes):
            r = await http.post(url + "/v1/chat/completions", content=body, headers=headers)
        else:
            r = await http.post(url + "/v1/chat/completions", json=body, headers=headers)
        return str(r.status_code)
    except httpx.HTTPError as exc:
        return label(exc)


async def stream(http: httpx.AsyncClient, url: str, secret: str, body: dict[str, Any]) -> str:
    """One streamed chat read to its end: "200" only when it ended with `[DONE]`."""
    headers = {"Authorization": f"Bearer {secret}"}
    try:
        async with http.stream("POST", url + "/v1/chat/completions", json=body, headers=headers) as r:
            text = "".join([part async for part in r.aiter_text()])
        if r.status_code == 200 and "data: [DONE]" not in text:
            return "200 without [DONE]"
        return str(r.status_code)
    except httpx.HTTPError as exc:
        return label(exc)


async def slow_headers(host: str, port: int, every: float, seconds: float) -> str:
    """One client that opens a request and sends one header line every `every` seconds until
    `seconds` have passed, never finishing its headers."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
    except (OSError, TimeoutError) as exc:
        return f"connect failed ({type(exc).__name__})"
    deadline = time.monotonic() + seconds
    outcome = "held open to the end"
    try:
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        n = 0
        while time.monotonic() < deadline:
            await writer.drain()
            try:
                data = await asyncio.wait_for(reader.read(1024), min(every, deadline - time.monotonic()))
            except TimeoutError:
                data = None
            if data is not None:  # the server answered (a 4xx/5xx) or closed the connection
                return "closed by the server" if not data else "answered by the server"
            writer.write(f"X-Slow-{n}: 1\r\n".encode())
            n += 1
    except OSError:
        outcome = "reset by the server"
    finally:
        writer.close()
    return outcome
