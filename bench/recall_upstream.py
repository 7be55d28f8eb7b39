"""The upstream of the conversation-recall bench: an OpenAI-compatible endpoint that answers
every chat with a short reply picked from the last user message (the same message always
gets the same reply), streamed or not. A few replies speak in the first person, as an
assistant does ("I prefer tea myself"), so they are no fact about the user.

`GET /stats` says how many chats it answered and how many carried injected memory (a system
message memroute added)."""

from __future__ import annotations

import hashlib
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from memroute.gateway.echo import EchoUpstream

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


class ShortReplies(EchoUpstream):
    """The echo upstream's chat endpoint (JSON and streamed), answering with a short reply
    instead of the user's words, and counting what it answered."""

    def __init__(self) -> None:
        super().__init__()
        self.answered = 0
        self.with_memory = 0

    def answer(self, body: dict[str, Any]) -> str:  # type: ignore[override]
        self.answered += 1
        messages = body.get("messages") or []
        if any(isinstance(m, dict) and m.get("role") == "system" for m in messages):
            self.with_memory += 1
        return reply_for(last_user_text(body))

    async def stats(self, request: Request) -> Response:
        return JSONResponse({"answered": self.answered, "withMemory": self.with_memory})

    def app(self) -> Starlette:
        app = super().app()
        app.router.routes.append(Route("/stats", self.stats, methods=["GET"]))
        return app
