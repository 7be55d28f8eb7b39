"""The upstream of the conversation-recall bench: an OpenAI-compatible endpoint that answers
every chat with a short reply picked from the last user message (the same message always
gets the same reply), streamed or not. A few replies speak in the first person, as an
assistant does ("I prefer tea myself"), so they are no fact about the user.

`GET /stats` says how many chats it answered and how many carried injected memory (a system
message memroute added)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from memroute.gateway.echo import word_event

REPLIES = (
    "Got it.",
    "Sounds good!",
    "Nice, tell me more.",
    "Ha, fair enough.",
    "Noted.",
    "That sounds lovely.",
    "Oh no, hope it gets better.",
    "Interesting!",
    "Good luck with that.",
    "Makes sense.",
    "I prefer tea myself, honestly.",
    "I usually suggest taking it slow.",
    "I love a good story like that.",
    "Happy to help with anything else.",
)
MODEL = "recall-1"


def reply_for(text: str) -> str:
    digest = hashlib.sha256(text.encode()).digest()
    return REPLIES[digest[0] % len(REPLIES)]


def last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    user = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") == "user"), {})
    content = user.get("content")
    return content if isinstance(content, str) else ""


class ShortReplies:
    def __init__(self) -> None:
        self.answered = 0
        self.with_memory = 0

    async def chat(self, request: Request) -> Response:
        body = await request.json()
        self.answered += 1
        messages = body.get("messages") or []
        if any(isinstance(m, dict) and m.get("role") == "system" for m in messages):
            self.with_memory += 1
        text = reply_for(last_user_text(body))
        model = body.get("model", MODEL)
        if body.get("stream"):
            return StreamingResponse(self._stream(model, text), media_type="text/event-stream")
        return JSONResponse(
            {
                "id": "chatcmpl-recall",
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
            yield word_event(model, word if index == 0 else " " + word, "chatcmpl-recall")
        yield b"data: [DONE]\n\n"

    async def stats(self, request: Request) -> Response:
        return JSONResponse({"answered": self.answered, "withMemory": self.with_memory})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/stats", self.stats, methods=["GET"]),
            ]
        )
