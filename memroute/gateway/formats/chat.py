"""OpenAI Chat Completions (`POST /v1/chat/completions`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memroute.errors import InvalidInput
from memroute.memory.injection import place_block, should_inject
from memroute.memory.turns import last_user_turn, said_in
from memroute.upstream.route import Route


def check_messages(body: Mapping[str, Any], field: str, max_messages: int, example: str) -> None:
    """`body[field]` is a list of at most `max_messages` items."""
    items = body.get(field)
    if not isinstance(items, list):
        raise InvalidInput(f"must be a list of messages, e.g. [{example}]", field)
    if len(items) > max_messages:
        raise InvalidInput(
            f"holds {len(items)} messages; a chat may hold at most {max_messages}"
            " (MEMROUTE_MAX_CHAT_MESSAGES)",
            field,
        )


def check_model(body: Mapping[str, Any]) -> None:
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise InvalidInput("must be a non-empty string", "model")


class ChatCompletions:
    name = "chat"
    provider_format = "openai"
    upstream_path = "/chat/completions"
    done_event = b"data: [DONE]"
    passed_headers: tuple[str, ...] = ()

    def check(self, body: Mapping[str, Any], max_messages: int) -> None:
        check_model(body)
        check_messages(body, "messages", max_messages, '{"role": "user", ...}')

    def end_user(self, body: Mapping[str, Any]) -> object:
        return openai_end_user(body)

    def user_turn(self, body: Mapping[str, Any]) -> tuple[str, str]:
        return last_user_turn(body)

    def said(self, body: Mapping[str, Any]) -> str:
        return said_in(body)

    def takes_memory(self, body: Mapping[str, Any]) -> bool:
        return should_inject(body)

    def inject(self, body: Mapping[str, Any], block: str, route: Route) -> dict[str, Any]:
        return place_block(body, block, route.provider_id, route.model)

    def reply_text(self, answer: Any) -> str:
        """`choices[0].message.content`, a string or text parts."""
        if not isinstance(answer, dict):
            return ""
        choices = answer.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ""
        message = choices[0].get("message")
        return text_of(message.get("content") if isinstance(message, dict) else None)

    def stream_text(self, event: Any) -> str:
        """`choices[0].delta.content` of a chunk."""
        choices = event.get("choices") if isinstance(event, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return ""
        delta = choices[0].get("delta")
        content = delta.get("content") if isinstance(delta, dict) else None
        return content if isinstance(content, str) else ""


def openai_end_user(body: Mapping[str, Any]) -> object:
    """OpenAI's end-user fields: `user`, else `safety_identifier`."""
    return body.get("user") or body.get("safety_identifier")


def text_of(content: Any, types: tuple[str, ...] = ("text",)) -> str:
    """A content string, or the text of its parts of `types`, stripped and joined by lines."""
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    texts = [
        p["text"].strip()
        for p in content
        if isinstance(p, dict) and p.get("type", "text") in types and isinstance(p.get("text"), str)
    ]
    return "\n".join(t for t in texts if t)
