"""The load generator of `bench/gateway_load.py`, in a process of its own so the gateway
never shares an interpreter with it: `concurrency` aiohttp tasks (keep-alive, one
connection each) send chat requests back to back for `seconds` after `warmup_s` (each at
least one timed request, however long it takes), and the figures of the timed window go
to stdout as one JSON object.

    python -m bench.load_client URL KEY --concurrency 16 --seconds 5 [--stream] [--model M] < questions

URL may list several servers, comma-separated (replicas of one memory): client n sends to
the n-th, round-robin.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

import aiohttp

from bench.load_upstream import MODEL


async def _worker(
    session: aiohttp.ClientSession,
    url: str,
    bodies: list[bytes],
    offset: int,
    stream: bool,
    window: tuple[float, float],
    out: dict[str, list[int]],
) -> None:
    start_at, end_at = window
    index = offset
    timed = False
    while True:
        sent = time.perf_counter()
        if sent >= end_at and timed:
            return  # past the window, once this client has sent a timed request (a stall may span it)
        body = bodies[index % len(bodies)]
        index += 1
        first = None
        try:
            async with session.post(url, data=body, headers={"content-type": "application/json"}) as response:
                status = response.status
                if stream:
                    async for _ in response.content.iter_any():
                        if first is None:
                            first = time.perf_counter()
                else:
                    await response.read()
        except aiohttp.ClientError:
            status = 0
        done = time.perf_counter()
        if sent < start_at:
            continue  # warm-up
        timed = True
        out["done_at"].append(int((done - start_at) * 1e9))
        if status == 200:
            out["latency_ns"].append(int((done - sent) * 1e9))
            if first is not None:
                out["ttft_ns"].append(int((first - sent) * 1e9))
        else:
            out.setdefault(f"status_{status}", []).append(1)


async def run(
    url: str,
    key: str,
    questions: list[str],
    concurrency: int,
    seconds: float,
    warmup_s: float,
    stream: bool,
    model: str = MODEL,
) -> dict[str, object]:
    bodies = [
        json.dumps({"model": model, "messages": [{"role": "user", "content": q}], "stream": stream}).encode()
        for q in questions
    ]
    urls = url.split(",")
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
    headers = {"authorization": f"Bearer {key}"}
    out: dict[str, list[int]] = {"latency_ns": [], "ttft_ns": [], "done_at": []}
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
        now = time.perf_counter()
        window = (now + warmup_s, now + warmup_s + seconds)
        step = max(1, len(bodies) // concurrency)
        await asyncio.gather(
            *(
                _worker(
                    session,
                    urls[n % len(urls)] + "/v1/chat/completions",
                    bodies,
                    n * step,
                    stream,
                    window,
                    out,
                )
                for n in range(concurrency)
            )
        )
    refused = {name: len(values) for name, values in out.items() if name.startswith("status_")}
    return {
        "seconds": seconds,
        # The timed window, longer when a client's only timed request ended after it.
        "timed_s": max([seconds, *(ns / 1e9 for ns in out["done_at"])]),
        "latency_ns": out["latency_ns"],
        "ttft_ns": out["ttft_ns"],
        "refused": refused,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("url")
    ap.add_argument("key")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--warmup", type=float, default=1.0)
    ap.add_argument("--stream", action="store_true")
    ap.add_argument("--model", default=MODEL, help=f"the model asked for ({MODEL})")
    args = ap.parse_args()
    questions = [line.strip() for line in sys.stdin if line.strip()]
    result = asyncio.run(
        run(
            args.url,
            args.key,
            questions,
            args.concurrency,
            args.seconds,
            args.warmup,
            args.stream,
            args.model,
        )
    )
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
