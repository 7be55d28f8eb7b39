"""A built-in upstream for the demo: an OpenAI-compatible endpoint that answers by
restating the user's last message (so extraction has something to read) and keeps
the last request it received (so the demo can show what memroute injected)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


class EchoUpstream:
    def __init__(self) -> None:
        self.last_request: dict[str, Any] | None = None

    @staticmethod
    def answer(body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        user = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"), {})
        content = user.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        return f"You said: {text}"

    async def chat(self, request: Request) -> Response:
        body = await request.json()
        self.last_request = body
        text = self.answer(body)
        model = body.get("model", "echo")
        if body.get("stream"):
            return StreamingResponse(self._stream(model, text), media_type="text/event-stream")
        return JSONResponse(
            {
                "id": "chatcmpl-echo",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }
        )

    @staticmethod
    async def _stream(model: str, text: str) -> AsyncIterator[bytes]:
        for index, word in enumerate(text.split(" ")):
            yield word_event(model, word if index == 0 else " " + word, "chatcmpl-echo")
        yield b"data: [DONE]\n\n"

    async def models(self, request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": "echo", "object": "model", "created": 0, "owned_by": "memroute"}],
            }
        )

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
            ]
        )


def word_event(model: str, content: str, chunk_id: str) -> bytes:
    """One SSE event of a streamed chat completion carrying `content`."""
    chunk = {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": None}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()
