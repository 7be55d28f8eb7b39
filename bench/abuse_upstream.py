"""The scripted upstream of the abuse bench: an OpenAI-compatible endpoint whose behaviour is
chosen by the model name, so one key can attack while another chats normally.

- `echo-1`: answers at once by restating the last user message (as memroute's echo upstream);
  a request body over 1 MiB is read whole but answered with a fixed reply, unparsed;
- `hang-1`: never answers (the request is held until the client or memroute goes away);
- `drip-1`: a 200 status, then one byte a second, for an hour;
- `slow-stream-1`: a stream of 20 chunks 100 ms apart (a 2 s stream);
- `huge-1`: a non-streamed reply of `huge_bytes` (200 MB by default), sent in 1 MiB pieces.

`GET /stats` says how many requests are in flight and the most there were at once, so the bench
can tell whether memroute lets go of upstream calls whose clients left.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from memroute.gateway.echo import word_event

BIG_BODY = 1 << 20


def completion(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-abuse",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    user = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"), {})
    content = user.get("content")
    return content if isinstance(content, str) else json.dumps(content)


class ScriptedUpstream:
    def __init__(self, huge_bytes: int = 200_000_000) -> None:
        self.in_flight = 0
        self.peak = 0
        self.served = 0
        self.huge_bytes = huge_bytes

    async def chat(self, request: Request) -> Response:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self.served += 1
        try:
            raw = await request.body()
            if len(raw) > BIG_BODY:
                return JSONResponse(completion("echo-1", f"a body of {len(raw)} bytes"))
            body = json.loads(raw)
            if body.get("model") == "hang-1":
                await _until_gone(request)
            return await self._answer(body)
        finally:
            self.in_flight -= 1

    async def _answer(self, body: dict[str, Any]) -> Response:
        model = str(body.get("model", "echo-1"))
        if model == "drip-1":
            return StreamingResponse(self._tracked(_drip()), media_type="application/json")
        if model == "huge-1":
            return StreamingResponse(self._tracked(_huge(self.huge_bytes)), media_type="application/json")
        text = "You said: " + last_user_text(body)
        if body.get("stream"):
            delay = 0.1 if model == "slow-stream-1" else 0.0
            return StreamingResponse(
                self._tracked(_stream(model, text, delay)), media_type="text/event-stream"
            )
        return JSONResponse(completion(model, text))

    async def _tracked(self, chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        """A streamed reply counts as in flight until its last byte (or its client leaving)."""
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            self.in_flight -= 1

    async def stats(self, request: Request) -> Response:
        return JSONResponse({"inFlight": self.in_flight, "peak": self.peak, "served": self.served})

    async def models(self, request: Request) -> Response:
        names = ("echo-1", "hang-1", "drip-1", "slow-stream-1", "huge-1")
        return JSONResponse({"object": "list", "data": [{"id": n, "object": "model"} for n in names]})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
                Route("/stats", self.stats, methods=["GET"]),
            ]
        )


async def _until_gone(request: Request) -> None:
    """Hold a request (up to an hour) until its client has gone."""
    for _ in range(18_000):
        if await request.is_disconnected():
            return
        await asyncio.sleep(0.2)


async def _drip() -> AsyncIterator[bytes]:
    for _ in range(3600):
        yield b" "
        await asyncio.sleep(1.0)


async def _huge(size: int) -> AsyncIterator[bytes]:
    head = b'{"id":"chatcmpl-huge","object":"chat.completion","created":0,"model":"huge-1",'
    head += b'"choices":[{"index":0,"message":{"role":"assistant","content":"'
    tail = b'"},"finish_reason":"stop"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}'
    yield head
    piece = b"a" * (1 << 20)
    left = max(0, size - len(head) - len(tail))
    while left > 0:
        yield piece[: min(left, len(piece))]
        left -= len(piece)
        await asyncio.sleep(0)
    yield tail


async def _stream(model: str, text: str, delay: float) -> AsyncIterator[bytes]:
    words = text.split(" ")
    if delay:
        words = (words * 20)[:20]
    for index, word in enumerate(words):
        yield word_event(model, word if index == 0 else " " + word, "chatcmpl-abuse")
        if delay:
            await asyncio.sleep(delay)
    yield b"data: [DONE]\n\n"


def main(argv: list[str]) -> None:
    """`python -m bench.abuse_upstream PORT HUGE_BYTES`: serve on 127.0.0.1:PORT."""
    import uvicorn

    port, huge_bytes = int(argv[0]), int(argv[1])
    uvicorn.run(
        ScriptedUpstream(huge_bytes).app(), host="127.0.0.1", port=port, log_level="warning", backlog=4096
    )


if __name__ == "__main__":
    main(sys.argv[1:])
