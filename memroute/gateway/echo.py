"""A built-in upstream for the demo and the benchmarks: it answers the three wire formats
memroute forwards (OpenAI Chat Completions, OpenAI Responses, Anthropic Messages), whole
or streamed, by restating the user's last message (so extraction has something to read),
and keeps the last request it received (so the demo can show what memroute injected)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from memroute.memory.injection import last_user_text

RESPONSE_ID = "resp_echo"
MESSAGE_ID = "msg_echo"  # a message: the Responses output item, or the Messages answer


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
        for piece in words(text):
            yield word_event(model, piece, "chatcmpl-echo")
        yield b"data: [DONE]\n\n"

    async def responses(self, request: Request) -> Response:
        """`POST /v1/responses`: a response whose one message restates the last user input."""
        return await self._restated(request, response, response_events)

    async def messages(self, request: Request) -> Response:
        """`POST /v1/messages`: a message whose one text block restates the last user turn."""
        return await self._restated(request, message, message_events)

    async def _restated(
        self,
        request: Request,
        whole: Callable[[str, str], dict[str, Any]],
        events: Callable[[str, str], AsyncIterator[bytes]],
    ) -> Response:
        """The answer `whole(model, text)`, or streamed `events(model, text)`, to a body whose
        last user text it restates."""
        body = await request.json()
        self.last_request = body
        text = said(body)
        model = body.get("model", "echo")
        if body.get("stream"):
            return StreamingResponse(events(model, text), media_type="text/event-stream")
        return JSONResponse(whole(model, text))

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
                Route("/v1/responses", self.responses, methods=["POST"]),
                Route("/v1/messages", self.messages, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
            ]
        )


def said(body: dict[str, Any]) -> str:
    """The reply to a Responses or Messages body: "You said: " and the last user text
    (its text parts joined)."""
    return f"You said: {last_user_text(body)}"


def words(text: str) -> list[str]:
    """`text` in stream pieces, one per word; each after the first keeps its leading space."""
    return [word if index == 0 else " " + word for index, word in enumerate(text.split(" "))]


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


def typed_event(event: str, data: dict[str, Any]) -> bytes:
    """One SSE event of the typed streams (Responses, Messages): its name, then `data` with
    that name as its `type`."""
    return f"event: {event}\ndata: {json.dumps({'type': event, **data})}\n\n".encode()


# -- OpenAI Responses ---------------------------------------------------------------------


def response(model: str, text: str, status: str = "completed") -> dict[str, Any]:
    """A response object; completed, its output is one assistant message holding `text`."""
    return {
        "id": RESPONSE_ID,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": model,
        "output": [response_item(text, "completed")] if status == "completed" else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 0,
            "output_tokens": 0,
            "total_tokens": 0,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def response_item(text: str | None, status: str) -> dict[str, Any]:
    """The assistant message of a response: one `output_text` part, none while `text` is None."""
    content = [] if text is None else [output_text(text)]
    return {"type": "message", "id": MESSAGE_ID, "status": status, "role": "assistant", "content": content}


def output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": []}


async def response_events(model: str, text: str) -> AsyncIterator[bytes]:
    """The typed events of a streamed response, in the order the Responses API sends them:
    created, the message and its part added, one `response.output_text.delta` per word,
    the text, part and message done, completed. Each carries its `sequence_number`."""
    part = {"item_id": MESSAGE_ID, "output_index": 0, "content_index": 0}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": response(model, "", "in_progress")}),
        ("response.output_item.added", {"output_index": 0, "item": response_item(None, "in_progress")}),
        ("response.content_part.added", {**part, "part": output_text("")}),
        *(("response.output_text.delta", {**part, "delta": piece}) for piece in words(text)),
        ("response.output_text.done", {**part, "text": text}),
        ("response.content_part.done", {**part, "part": output_text(text)}),
        ("response.output_item.done", {"output_index": 0, "item": response_item(text, "completed")}),
        ("response.completed", {"response": response(model, text)}),
    ]
    for number, (event, data) in enumerate(events):
        yield typed_event(event, {"sequence_number": number, **data})


# -- Anthropic Messages -------------------------------------------------------------------


def message(model: str, text: str) -> dict[str, Any]:
    """A whole message: one text block holding `text`."""
    return {
        "id": MESSAGE_ID,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": len(text.split(" "))},
    }


async def message_events(model: str, text: str) -> AsyncIterator[bytes]:
    """The events of a streamed message, in the order the Messages API sends them: the
    message and its text block started, one `text_delta` per word, the block stopped, the
    stop reason, the end."""
    started = {**message(model, ""), "content": [], "stop_reason": None}
    yield typed_event(
        "message_start", {"message": {**started, "usage": {"input_tokens": 0, "output_tokens": 0}}}
    )
    yield typed_event("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})
    for piece in words(text):
        yield typed_event("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": piece}})
    yield typed_event("content_block_stop", {"index": 0})
    yield typed_event(
        "message_delta",
        {
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": len(text.split(" "))},
        },
    )
    yield typed_event("message_stop", {})
