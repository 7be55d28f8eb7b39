"""What the scripted upstream answers in the OpenAI Responses and Anthropic Messages
formats: whole answers and their SSE events, as those APIs send them (the official SDKs
parse them in the tests)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from memroute.memory.injection import last_user_text, parts_text


def words(text: str) -> list[str]:
    """`text` in stream pieces: each word after the first keeps its leading space."""
    return [w if i == 0 else " " + w for i, w in enumerate(text.split(" "))]


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


# -- OpenAI Responses ---------------------------------------------------------------------


def responses_user_text(body: dict[str, Any]) -> str:
    return last_user_text({"input": body.get("input")})


def response(body: dict[str, Any], text: str, status: str = "completed") -> dict[str, Any]:
    message = {
        "type": "message",
        "id": "msg_test",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    return {
        "id": "resp_test",
        "object": "response",
        "created_at": 0,
        "status": status,
        "model": body.get("model"),
        "output": [message] if status == "completed" else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 1,
            "output_tokens": 1,
            "total_tokens": 2,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def response_events(body: dict[str, Any], text: str) -> Iterator[bytes]:
    """The typed events of a streamed response, in the order the Responses API sends them."""
    seq = iter(range(1_000_000))
    item = {"type": "message", "id": "msg_test", "status": "in_progress", "role": "assistant", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    yield sse(
        "response.created",
        {
            "type": "response.created",
            "sequence_number": next(seq),
            "response": response(body, "", "in_progress"),
        },
    )
    yield sse(
        "response.output_item.added",
        {"type": "response.output_item.added", "sequence_number": next(seq), "output_index": 0, "item": item},
    )
    where = {"item_id": "msg_test", "output_index": 0, "content_index": 0}
    yield sse(
        "response.content_part.added",
        {"type": "response.content_part.added", "sequence_number": next(seq), **where, "part": part},
    )
    for piece in words(text):
        yield sse(
            "response.output_text.delta",
            {"type": "response.output_text.delta", "sequence_number": next(seq), **where, "delta": piece},
        )
    yield sse(
        "response.output_text.done",
        {"type": "response.output_text.done", "sequence_number": next(seq), **where, "text": text},
    )
    done_part = {**part, "text": text}
    yield sse(
        "response.content_part.done",
        {"type": "response.content_part.done", "sequence_number": next(seq), **where, "part": done_part},
    )
    done_item = {**item, "status": "completed", "content": [done_part]}
    yield sse(
        "response.output_item.done",
        {
            "type": "response.output_item.done",
            "sequence_number": next(seq),
            "output_index": 0,
            "item": done_item,
        },
    )
    yield sse(
        "response.completed",
        {"type": "response.completed", "sequence_number": next(seq), "response": response(body, text)},
    )


# -- Anthropic Messages -------------------------------------------------------------------


def messages_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            text = content if isinstance(content, str) else parts_text(content or [])
            if text:
                return text
    return ""


def message(body: dict[str, Any], text: str) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def message_events(body: dict[str, Any], text: str) -> Iterator[bytes]:
    """The events of a streamed message, in the order the Messages API sends them."""
    start = {**message(body, ""), "content": [], "stop_reason": None}
    yield sse("message_start", {"type": "message_start", "message": start})
    yield sse(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )
    yield sse("ping", {"type": "ping"})
    for piece in words(text):
        yield sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}},
        )
    yield sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": len(text.split())},
        },
    )
    yield sse("message_stop", {"type": "message_stop"})
